#!/usr/bin/python3
"""What recording files under their real, normalised paths costs (docs/paths.md).

Two parts, each measured on its own:
- in the kernel and the daemons: a process's chdir() is followed (the files group's chdir/fchdir
  exit programs walk the new working directory once and send it), so a later relative open is
  joined to it. chdirloop alternates between two directories N times; runs alternate bare and
  traced (the collector and aggregator with the default groups), each run over a second;
  reported: the added time per chdir, median of the pairs with its interquartile range, and
  the daemons' CPU per chdir.
- in the aggregator: each file event's path joined to the cwd, made valid UTF-8 and normalised
  (the aggregator's own functions, compiled into pathbench), in ns per path.
Run as root: `make bench-paths` (also part of `make bench`)."""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stats import publish, quartiles, workdir  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def chdir_run(build, n, a, b):
    out = subprocess.run([f"{build}/helpers/chdirloop", str(n), a, b], capture_output=True, text=True,
                         check=True, timeout=300)
    return float(out.stdout)


def daemons_cpu_per_chdir(daemons, build, a, b, n=20000, window=3.0):
    """The daemons' CPU per chdir: their CPU over a window that starts with n chdirs, less
    their CPU over an equal window without (samples, heartbeats: the idle cost). CPU of every
    thread to the ns (schedstat): /proc/PID/stat's 10 ms ticks are 500 ns per chdir here."""
    def cpu():
        return sum(daemons.cpu_parts().values())

    def window_cpu(work):
        before, start = cpu(), time.time()
        if work:
            chdir_run(build, n, a, b)
        time.sleep(max(0.0, window - (time.time() - start)))
        return cpu() - before
    idle = window_cpu(False)
    return (window_cpu(True) - idle) / n


def measure(build, pairs, n):
    from bench import Daemons  # bench imports this module
    work = workdir("tracer-paths-")
    a, b = os.path.join(work, "one", "deeper", "still"), os.path.join(work, "two")
    os.makedirs(a)
    os.makedirs(b)
    daemons = Daemons(build, work)
    daemons.start()
    try:
        # First, with nothing else in flight: the daemons' share.
        daemon_cpu = [daemons_cpu_per_chdir(daemons, build, a, b) for _ in range(5)]
        added = []
        for i in range(pairs):
            order = ("bare", "traced") if i % 2 == 0 else ("traced", "bare")
            t = {}
            for kind in order:
                if kind == "bare":
                    daemons.stop()
                    t[kind] = chdir_run(build, n, a, b)
                    daemons.start()
                else:
                    t[kind] = chdir_run(build, n, a, b)
            added.append((t["traced"] - t["bare"]) / n)
        ns = subprocess.run([f"{build}/bench/pathbench", "2000000"], capture_output=True, text=True,
                            check=True, timeout=300).stdout.split()[0]
    finally:
        daemons.stop()
    return {"pairs": pairs, "chdirs": n, "added_ns": [x * 1e9 for x in added],
            "daemon_ns": [x * 1e9 for x in daemon_cpu], "normalise_ns": float(ns)}


def report(r):
    q1, med, q3 = quartiles(r["added_ns"])
    d1, dmed, d3 = quartiles(r["daemon_ns"])
    return [
        "# What real, normalised file paths cost",
        "",
        f"Produced by `sudo make bench-paths` (`test/bench/paths.py`; also run by `make bench`), "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, Linux {os.uname().release}, "
        f"{os.cpu_count()} CPUs.",
        "",
        "A file is recorded under its absolute, normalised path whatever the process's cwd changes "
        "were: the files group follows chdir/fchdir (the new working directory walked once, in the "
        "kernel, and sent), and the aggregator joins each relative open to the cwd at that moment "
        "and normalises it (`.`, `..`, repeated `/`).",
        "",
        "| what | cost | method |",
        "|---|---|---|",
        f"| a chdir(), traced | **+{med:.0f} ns** (IQR {q1:.0f} .. {q3:.0f}) | `chdirloop {r['chdirs']}` "
        f"alternating two directories; {r['pairs']} alternating pairs bare/traced; added wall time per call |",
        f"| the daemons' CPU per chdir | {dmed:.0f} ns (IQR {d1:.0f} .. {d3:.0f}) | collector + aggregator "
        "CPU per call (every thread's `schedstat`, in ns): a 3 s window starting with 20,000 chdirs, "
        "less an idle 3 s window (every chdir sends its new cwd) |",
        f"| the aggregator's work per file event's path | {r['normalise_ns']:.0f} ns | `pathbench`: "
        "join to the cwd, valid UTF-8, normalise; 2,000,000 paths as programs open them |",
        "",
        "Programs change directory rarely next to how often they open files (the exec storm in "
        "performance.md runs none), so following the cwd is a per-chdir cost that only a program "
        "spinning on chdir() would notice.",
        "",
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--pairs", type=int, default=9)
    ap.add_argument("--chdirs", type=int, default=300000)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "paths.md"))
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("make bench-paths needs root (BPF)", file=sys.stderr)
        return 2
    lines = report(measure(os.path.abspath(args.build), args.pairs, args.chdirs))
    publish(lines, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
