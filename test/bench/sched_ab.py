#!/usr/bin/python3
"""What the scheduler hooks cost, for two builds interleaved in one run (network
wait, issue 59, added work to sched_switch and sched_wakeup): for each round and
workload, a bare/traced pair under build A, one under build B (orders alternate),
and an A/A pair (bare against bare) for the noise floor. Prints, per workload, each
build's median wall ratio observed/bare with its interquartile range, then each
build's BPF run time per call of the scheduler programs under the TCP ping-pong
(bpf_stats_enabled). Markdown on stdout.

Workloads: the exec storm of `make bench`; a TCP ping-pong on 127.0.0.1 and a pipe
ping-pong (test/helpers/pingpong.c), where every round puts both sides to sleep in a
read: the switch and wake-up hooks run four times a round, the TCP one taking the
network-wait path (a socket behind the descriptor) every time.

Usage: sudo test/bench/sched_ab.py BUILD_A BUILD_B [--rounds N] (0: the BPF run times alone)
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Daemons, kernel_cost, long_enough, pairs  # noqa: E402
from stats import quartiles, workdir  # noqa: E402

SCHED_PROGRAMS = ("iowait_switch", "iowait_wakeup")


def workloads(helpers, work, size=True):
    def sized(label, make, count):
        return label, make(long_enough(label, make, count, work, 2.0) if size else count)
    return [sized("exec storm", lambda n: f"{helpers}/storm {n} 2 /bin/true", 1000),
            sized("TCP ping-pong", lambda n: f"{helpers}/pingpong tcp {n}", 50000),
            sized("pipe ping-pong", lambda n: f"{helpers}/pingpong pipe {n}", 150000)]


def cell(ratios):
    lo, med, hi = quartiles(ratios)
    return f"{med:.4f} ({(med - 1) * 100:+.1f}%)<br>IQR {lo:.3f} .. {hi:.3f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rounds", type=int, default=8)
    args = ap.parse_args()
    work = workdir("tracer-sched-ab-")
    builds = [os.path.abspath(args.a), os.path.abspath(args.b)]
    helpers = f"{builds[1]}/helpers"  # one workload binary for both
    rows = []
    for label, cmd in workloads(helpers, work, args.rounds > 0):
        ratios = {b: {"ratios": [], "cpu_ratios": []} for b in builds + ["A/A"]}
        for r in range(args.rounds):
            for b in (builds if r % 2 == 0 else builds[::-1]):
                got = pairs(f"{label} {'AB'[builds.index(b)]} round {r + 1}", cmd, work, Daemons(b, work), 1)
                for k in ratios[b]:
                    ratios[b][k] += got[k]
            got = pairs(f"{label} A/A round {r + 1}", cmd, work, None, 1, aa=True)
            for k in ratios["A/A"]:
                ratios["A/A"][k] += got[k]
        rows.append((label, cmd, ratios))
    costs = {(label, b): kernel_cost(cmd, work, Daemons(b, work))[0]
             for label, cmd, _ in rows[1:] for b in builds}
    print(f"\n{args.rounds} pairs per cell; A = {builds[0]}, B = {builds[1]}\n")
    for key, what in () if not args.rounds else (("ratios", "wall time"), ("cpu_ratios", "CPU time, the workload's and the daemons'")):
        print(f"\n{what}, median ratio observed/bare:\n")
        print("| workload | A (before) | B (after) | A/A (bare against bare) |\n|---|---|---|---|")
        for label, cmd, ratios in rows:
            print(f"| {label} (`{os.path.basename(cmd.split()[0])} {' '.join(cmd.split()[1:])}`) | "
                  f"{cell(ratios[builds[0]][key])} | {cell(ratios[builds[1]][key])} | {cell(ratios['A/A'][key])} |")
    print("\n| workload | program | A: calls, ns per call | B: calls, ns per call |\n|---|---|---|---|")
    for label, _, _ in rows[1:]:
        for prog in SCHED_PROGRAMS:
            cells = []
            for b in builds:
                hit = [(cnt, ns) for name, cnt, ns in costs[(label, b)] if name == prog]
                cells.append(f"{hit[0][0]:,}, {hit[0][1]:.0f}" if hit else "not run")
            print(f"| {label} | {prog} | {cells[0]} | {cells[1]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
