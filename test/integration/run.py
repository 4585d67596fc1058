#!/usr/bin/python3
"""Integration tests: the real BPF programs, daemons and CLI, run as root.

Every test records a real workload and compares what tracer stored in SQLite
with an independent account of the same processes: the workload's own
/proc/self/status or /proc/self/io, wait4()'s rusage taken by a parent
(test/helpers/measure.c), or a workflow engine's own report. Tolerances are
stated next to each comparison.

Usage: run.py --build build [--asan-build build/asan] [-k NAME]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
import traceback

import harness
from harness import TESTS, Ctx, Failure, Skip, ensure_aggregator_user
import test_accounting  # noqa: F401  (registers tests)
import test_telemetry  # noqa: F401
import test_correlation  # noqa: F401
import test_script_steps  # noqa: F401
import test_engine_jobs  # noqa: F401
import test_insight  # noqa: F401
import test_cost  # noqa: F401
import test_report  # noqa: F401
import test_shipper  # noqa: F401
import test_security  # noqa: F401
import test_trust  # noqa: F401
import test_systemd  # noqa: F401
import test_faults  # noqa: F401
import test_isolation  # noqa: F401
import test_metrics  # noqa: F401
import test_verdicts  # noqa: F401
import test_cli_json  # noqa: F401
import test_soak  # noqa: F401
import test_containers  # noqa: F401
import test_batch  # noqa: F401
import test_scope  # noqa: F401
import test_fleet  # noqa: F401
import test_provenance  # noqa: F401
import test_energy  # noqa: F401
import test_fleet_batch  # noqa: F401
import test_fleet_live  # noqa: F401
import test_snapshot  # noqa: F401
import test_netwait  # noqa: F401


def run_suite(build, selected):
    failed = []
    for fn in TESTS:
        if selected and not any(s in fn.__name__ for s in selected):
            continue
        if getattr(fn, "package_only", False) and os.environ.get("TRACER_PACKAGE_TEST") != "1":
            print(f"  skip {fn.__name__}: make package-test runs it", flush=True)
            continue
        if getattr(fn, "plain_only", None) and "asan" in os.path.basename(build):
            print(f"  skip {fn.__name__}: {fn.plain_only}", flush=True)
            continue
        ensure_aggregator_user()
        tmp = tempfile.mkdtemp(prefix="tracer-it-")
        os.chmod(tmp, 0o777)  # the aggregator runs as nobody
        ctx = Ctx(build, tmp)
        start = time.time()
        skipped = None
        try:
            fn(ctx)
        except Skip as e:
            skipped = str(e)
        except Failure as e:
            ctx.failures.append(str(e))
        except Exception:
            ctx.failures.append(traceback.format_exc())
        finally:
            for fn_cleanup in reversed(ctx.cleanups):
                try:
                    fn_cleanup()
                except Exception:
                    ctx.failures.append("cleanup: " + traceback.format_exc())
            ended = {}  # daemon -> exit status if it ended before the test was over
            for p in ctx.procs:
                ended[p] = p.poll()
                if ended[p] is None:
                    p.kill()
                    p.wait()
        status = "ok" if not ctx.failures else "FAIL"
        if skipped and not ctx.failures:
            print(f"  skip {fn.__name__}: {skipped}", flush=True)
            subprocess.run(["rm", "-rf", tmp])
            continue
        print(f"  {status:4} {fn.__name__} ({time.time() - start:.1f}s)", flush=True)
        for f in ctx.failures:
            print("       " + f.replace("\n", "\n       "))
        if ctx.failures:
            # What each daemon of the test said last, so a CI failure can be told apart.
            for p in ctx.procs:
                state = "still running" if ended[p] is None else f"had exited with status {ended[p]}"
                tail = "".join(getattr(p, "_lines", [])[-6:]).rstrip().replace("\n", "\n         ")
                print(f"       {os.path.basename(str(p.args[0]))} (pid {p.pid}) {state}; last log lines:\n"
                      f"         {tail or '(none)'}")
        if ctx.failures:
            failed.append(fn.__name__)
        else:
            subprocess.run(["rm", "-rf", tmp])
    return failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--asan-build")
    ap.add_argument("--helpers", help="ground-truth helpers (default: BUILD/helpers)")
    ap.add_argument("-k", action="append", default=[])
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("integration tests need root (BPF)", file=sys.stderr)
        return 2
    os.environ.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    os.environ.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lsan.supp")
    os.environ.setdefault("LSAN_OPTIONS", f"suppressions={os.path.abspath(supp)}")
    harness.HELPERS = os.path.abspath(args.helpers or os.path.join(args.build, "helpers"))
    failed = []
    for build in [args.build] + ([args.asan_build] if args.asan_build else []):
        print(f"integration tests against {build}:", flush=True)
        # The collector key the daemons the tests start by hand share (an aggregator started as
        # root makes it; a collector started first, without one, would refuse to start).
        subprocess.run([os.path.join(build, "tracer-aggregator"), "--make-key", "/etc/tracer/collector.key"],
                       capture_output=True)
        failed += [f"{build}: {n}" for n in run_suite(build, args.k)]
    if failed:
        print(f"\n{len(failed)} failed:\n  " + "\n  ".join(failed))
        return 1
    print("\nall integration tests passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

