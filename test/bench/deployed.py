#!/usr/bin/python3
"""The exec storm's overhead as a service runs it (issue 58): `sudo make bench-deployed`.

`make bench` starts fresh daemons and an empty database for every traced run. A host
running the package keeps its aggregator for weeks, over a database holding history.
This bench measures both in one run, interleaved, with an A/A control:

  bare      the storm, no tracer running
  bare2     the same again (A/A: bare2/bare is the noise floor)
  fresh     a new aggregator over an empty database and a new collector (make bench's way)
  deployed  the aggregator started once at the beginning and kept running over a
            database first filled with --history real processes (a storm of /bin/true
            through the same daemons); only the collector starts before each traced run

The collector cannot stay up for the bare runs: while it runs its programs are
attached and every exec on the host goes through them, so a bare run would not be
bare. It starts before the timer and settles (its snapshot, 0.3 s) outside it, as in
make bench. Each round runs the four in a rotated order; each ratio is over the same
round's bare run. Writes docs/performance-deployed.md.
"""
import argparse
import os
import signal
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Daemons, long_enough, thread_cpu_s, timed  # noqa: E402
from stats import publish, quartiles, workdir  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Deployed:
    """One aggregator for the whole bench; a collector per traced run."""

    def __init__(self, build, work):
        self.build, self.work = build, work
        self.sock = os.path.join(work, "deployed.sock")
        self.db = os.path.join(work, "deployed.db")
        self.agg = subprocess.Popen([f"{build}/tracer-aggregator", "--socket", self.sock, "--db", self.db,
                                     "--user", "nobody", "--log-level", "warn"])
        while not os.path.exists(self.sock):
            time.sleep(0.02)
        self.col = None

    def start(self):
        r, w = os.pipe()
        self.col = subprocess.Popen([f"{self.build}/tracer-collector", "--socket", self.sock,
                                     "--aggregator-user", "nobody", "--log-level", "warn",
                                     "--ready-fd", str(w)], pass_fds=(w,))
        os.close(w)
        os.read(r, 16)
        os.close(r)
        time.sleep(0.3)

    def stop(self):
        self.col.send_signal(signal.SIGTERM)
        self.col.wait(timeout=30)

    def close(self):
        self.agg.send_signal(signal.SIGTERM)
        self.agg.wait(timeout=60)

    def cpu_seconds(self):
        return sum(self.cpu_parts().values())

    def cpu_parts(self):
        return {"collector": thread_cpu_s(self.col.pid), "aggregator": thread_cpu_s(self.agg.pid)}

    def processes(self):
        con = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        try:
            return con.execute("SELECT count(*) FROM processes").fetchone()[0]
        finally:
            con.close()


def fill_history(deployed, n, build, cwd):
    """n real processes through the long-lived daemons, then wait until they are stored."""
    before = deployed.processes()
    deployed.start()
    subprocess.run([f"{build}/helpers/storm", str(n), "2", "/bin/true"], check=True, cwd=cwd,
                   stdout=subprocess.DEVNULL)
    time.sleep(2.0)
    deployed.stop()
    deadline = time.time() + 120
    while deployed.processes() - before < n and time.time() < deadline:
        time.sleep(1.0)
    return deployed.processes()


def fmt(xs):
    lo, med, hi = quartiles(xs)
    return f"{med:.4f} ({(med - 1) * 100:+.1f}%) | {lo:.4f} .. {hi:.4f} | {(hi - lo) * 100:.1f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--storm", type=int, default=6000)
    ap.add_argument("--history", type=int, default=100000)
    ap.add_argument("--min-run-seconds", type=float, default=3.0)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "performance-deployed.md"))
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    work = workdir("tracer-deployed-")
    t_start = time.time()

    storm = long_enough("exec storm", lambda n: f"{build}/helpers/storm {n} 2 /bin/true", args.storm, work,
                        args.min_run_seconds)
    cmd = f"{build}/helpers/storm {storm} 2 /bin/true"
    deployed = Deployed(build, work)
    t0 = time.time()
    history = fill_history(deployed, args.history, build, work)
    fill_s = time.time() - t0
    print(f"  history: {history} processes in the database ({fill_s:.0f} s)", flush=True)
    fresh = Daemons(build, work)

    arms = ["bare", "bare2", "fresh", "deployed"]
    ratios = {a: [] for a in arms[1:]}
    per_proc = {a: {"collector": [], "aggregator": []} for a in ("fresh", "deployed")}
    observers = {"fresh": fresh, "deployed": deployed}
    try:
        for r in range(args.rounds):
            order = arms[r % 4:] + arms[:r % 4]
            t = {}
            for arm in order:
                obs = observers.get(arm)
                parts = []
                if obs:
                    obs.start()
                t[arm] = timed(cmd, work, obs, parts)
                if obs:
                    obs.stop()
                    per = parts[-1]
                    for k in per:
                        per_proc[arm][k].append(per[k] / storm * 1e6)
            for arm in arms[1:]:
                ratios[arm].append(t[arm][0] / t["bare"][0])
            print(f"  round {r + 1}/{args.rounds} ({' '.join(order)}): bare {t['bare'][0]:.3f}s "
                  + " ".join(f"{a} {ratios[a][-1]:.4f}" for a in arms[1:]), flush=True)
        history_end = deployed.processes()
    finally:
        deployed.close()

    lines = [
        "# Performance as deployed",
        "",
        "Produced by `sudo make bench-deployed BENCH_ARGS=\"--rounds "
        f"{args.rounds} --history {args.history} --min-run-seconds {args.min_run_seconds:g}\"` "
        "(`test/bench/deployed.py`); rerun it to refresh "
        "this page.",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(t_start))} on "
        f"{os.uname().nodename} (Linux {os.uname().release}, {os.cpu_count()} CPUs) in "
        f"{(time.time() - t_start) / 60:.1f} min.",
        "",
        "**What it measures.** The exec storm (`storm N 2 /bin/true`: N fork+exec+wait of "
        f"`/bin/true` on 2 workers, N = {storm}, sized to at least {args.min_run_seconds:.0f} s bare) "
        "in four arms per round, in a rotated order: `bare` (no tracer), `bare2` (bare again: the "
        "A/A control), `fresh` (a new aggregator over an empty database and a new collector for the "
        "run, as `make bench` does) and `deployed` (the aggregator started once and kept running "
        "over a database that already held "
        f"{history:,} real processes before the first round and {history_end:,} after the last; "
        "a collector started for each traced run). The collector cannot stay up for the bare runs: "
        "its programs, attached while it runs, see every exec on the host. It starts and takes its "
        "snapshot before the timer, as in `make bench`. Every ratio is the arm's wall time over the "
        "same round's bare run; below, the median of the rounds, the interquartile range, and its "
        "width in points.",
        "",
        "| arm | median ratio to bare | IQR | IQR width (points) |",
        "|---|---|---|---|",
        f"| A/A: bare2 | {fmt(ratios['bare2'])} |",
        f"| fresh daemons, empty database | {fmt(ratios['fresh'])} |",
        f"| deployed: long-lived aggregator, {history:,}-process history | {fmt(ratios['deployed'])} |",
        "",
        "The daemons' own CPU per process the storm started (every thread's schedstat, in µs, "
        "median and IQR of the rounds):",
        "",
        "| arm | collector | aggregator |",
        "|---|---|---|",
    ]
    for arm in ("fresh", "deployed"):
        cells = []
        for k in ("collector", "aggregator"):
            lo, med, hi = quartiles(per_proc[arm][k])
            cells.append(f"{med:.2f} ({lo:.2f} .. {hi:.2f})")
        lines.append(f"| {arm} | {' | '.join(cells)} |")
    lines += ["", f"Rounds: {args.rounds}; filling the history took {fill_s:.0f} s.", ""]
    publish(lines, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
