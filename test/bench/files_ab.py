#!/usr/bin/python3
"""What file tracking costs on an exec storm, against its floor, in one
interleaved run (issue 35's method): each round runs a bare/observed pair for
each of: tracer with the default groups, tracer with `--disable files`, the
floor (empty programs on the four open exit tracepoints, not tracer), and an
A/A pair (bare against bare). Orders rotate every round. Prints each one's
median wall ratio with its interquartile range.

The files probe's own cost is (default - files off); the traced-syscall floor
is (floor - 1); what is ours on top of the floor is (default - files off) -
(floor - 1).

Usage: sudo test/bench/files_ab.py [--build build] [--rounds 15] [--storm 6000]
(needs build/bench/open_floor: `make bench` or `make build/bench/open_floor`)
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Daemons, pairs  # noqa: E402
from stats import quartiles, workdir  # noqa: E402
import peers  # noqa: E402




def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--storm", type=int, default=6000)  # about 2 s a run here
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    work = workdir("tracer-files-ab-")
    cmd = f"{build}/helpers/storm {args.storm} 2 /bin/true"
    variants = [
        ("default groups", Daemons(build, work), False),
        ("--disable files", Daemons(build, work, extra_col=("--disable", "files")), False),
        ("floor (empty open programs)", peers.OpenTracepointFloor(work, build), False),
        ("A/A", None, True),
    ]
    ratios = {name: [] for name, _, _ in variants}
    bare = []
    for r in range(args.rounds):
        k = r % len(variants)
        for name, obs, aa in variants[k:] + variants[:k]:
            res = pairs(f"{name} round {r + 1}", cmd, work, obs, 1, aa=aa)
            ratios[name] += res["ratios"]
            bare += res["bare"]
    print(f"\nexec storm: {args.storm} x /bin/true on 2 workers, bare median {statistics.median(bare):.2f} s, "
          f"{args.rounds} pairs each")
    for name, _, _ in variants:
        lo, med, hi = quartiles(ratios[name])
        print(f"  {name:30s} wall ratio median {med:.4f} (IQR {lo:.4f} .. {hi:.4f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
