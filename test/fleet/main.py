#!/usr/bin/python3
"""make fleet-test: three systemd-nspawn machines with tracer from our .deb, a Slurm
cluster across them and one ClickHouse (test_fleet_machines.py). Minutes, so not in CI.

Usage: test/fleet/main.py --build build --deb ../tracer_VERSION_ARCH.deb [--cutoff-s N]
(--cutoff-s: make fleet-cutoff-test instead, h2 cut off from ClickHouse for N s;
test_fleet_cutoff.py).
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)

import harness  # noqa: E402
import run as integration  # noqa: E402  (the integration suite's runner)
import test_fleet_cutoff  # noqa: E402,F401  (registers the cut-off test)
import test_fleet_machines  # noqa: E402,F401  (registers the fleet test)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--deb", required=True)
    ap.add_argument("--cutoff-s", type=int, default=0,
                    help="instead: h2 cut off from ClickHouse for N s, then back (test_fleet_cutoff.py)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("the fleet test needs root (nspawn, BPF)", file=sys.stderr)
        return 2
    os.environ["TRACER_FLEET_DEB"] = os.path.abspath(args.deb)
    harness.HELPERS = os.path.abspath(os.path.join(args.build, "helpers"))
    # The collector key the daemons started on the host share (run.py does the same).
    subprocess.run([os.path.join(args.build, "tracer-aggregator"), "--make-key", "/etc/tracer/collector.key"],
                   capture_output=True)
    print(f"fleet test with {args.deb}:", flush=True)
    if args.cutoff_s < 0:
        print("--cutoff-s: a number of seconds, at least 1", file=sys.stderr)
        return 2
    os.environ["TRACER_FLEET_CUTOFF_S"] = str(args.cutoff_s)
    name = "fleet_host_cut_off_then_back" if args.cutoff_s else "fleet_one_run_across_three_machines"
    failed = integration.run_suite(args.build, [name])
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
        return 1
    print("\nthe fleet test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
