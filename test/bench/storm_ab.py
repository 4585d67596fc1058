#!/usr/bin/python3
"""The exec-storm row of `make bench` for two builds, interleaved in one run, so a
change's cost is read against the same machine state: for each round, a bare/traced
pair under build A, then one under build B (orders alternate). Prints each build's
median wall ratio with its interquartile range.

Usage: sudo test/bench/storm_ab.py BUILD_A BUILD_B [--rounds N] [--storm N]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Daemons, pairs  # noqa: E402
from stats import quartiles, workdir  # noqa: E402




def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--storm", type=int, default=4000)
    args = ap.parse_args()
    work = workdir("tracer-storm-ab-")
    builds = [os.path.abspath(args.a), os.path.abspath(args.b)]
    ratios = {b: [] for b in builds}
    for r in range(args.rounds):
        for b in (builds if r % 2 == 0 else builds[::-1]):
            cmd = f"{builds[1]}/helpers/storm {args.storm} 2 /bin/true"  # one workload binary for both
            res = pairs(f"{os.path.basename(os.path.dirname(b)) or b} round {r + 1}", cmd, work,
                        Daemons(b, work), 1)
            ratios[b] += res["ratios"]
    for b in builds:
        lo, med, hi = quartiles(ratios[b])
        print(f"{b}: exec storm ({args.storm} x /bin/true, 2 workers) wall ratio median {med:.4f} "
              f"(IQR {lo:.4f} .. {hi:.4f}), {len(ratios[b])} pairs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
