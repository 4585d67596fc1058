#!/usr/bin/python3
"""How the aggregator keeps its database within bounds, on a busy host (docs/retention.md).

The aggregator alone, fed synthetic process lives by ingestbench (fork, exec, exit: what an
exec storm sends), twice: once keeping everything, once with --retain-mib and a short check
period. At each milestone: the database's size on disk (with its WAL), the rows it holds, and
the aggregator's CPU so far; the difference in CPU per process between the two runs is what
pruning costs. Run as root: `make bench-retention` (also part of `make bench`)."""
import argparse
import os
import signal
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stats import publish, workdir  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def feed(build, work, name, milestones, extra):
    sock, db = os.path.join(work, f"{name}.sock"), os.path.join(work, f"{name}.db")
    agg = subprocess.Popen([f"{build}/tracer-aggregator", "--socket", sock, "--db", db, "--user", "nobody",
                            "--log-level", "warn", "--collector-user", "root", *extra])
    while not os.path.exists(sock):
        time.sleep(0.02)
    rows, done, first_pid = [], 0, 6_000_000
    try:
        for target in milestones:
            subprocess.run([f"{build}/helpers/ingestbench", sock, str(first_pid + done), str(target - done)],
                           capture_output=True, text=True, check=True, timeout=900)
            done = target
            time.sleep(3)  # a check period passes: the bound applies
            size = sum(os.path.getsize(db + s) for s in ("", "-wal") if os.path.exists(db + s))
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            kept = con.execute("SELECT count(*) FROM processes").fetchone()[0]
            pages = con.execute("PRAGMA page_count").fetchone()[0] - con.execute("PRAGMA freelist_count").fetchone()[0]
            data = pages * con.execute("PRAGMA page_size").fetchone()[0]
            con.close()
            rows.append({"processes": target, "db_bytes": size, "data_bytes": data, "rows": kept,
                         "cpu_s": cpu_s(agg.pid)})
            print(f"  {name}: {target} processes, {size / 1048576:.1f} MiB, {kept} rows kept", flush=True)
    finally:
        agg.send_signal(signal.SIGTERM)
        agg.wait(timeout=120)
    return rows


def measure(build, milestones, bound_mib):
    work = workdir("tracer-retention-")
    keep = feed(build, work, "keep", milestones, ("--retain-days", "0", "--retain-mib", "0"))
    bounded = feed(build, work, "bounded", milestones,
                   ("--retain-days", "0", "--retain-mib", str(bound_mib), "--retain-check-s", "2"))
    return {"bound_mib": bound_mib, "keep": keep, "bounded": bounded}


def report(r):
    lines = [
        "# Retention on a busy host",
        "",
        f"Produced by `sudo make bench-retention` (`test/bench/retention.py`; also run by `make bench`), "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, Linux {os.uname().release}, "
        f"{os.cpu_count()} CPUs.",
        "",
        "The aggregator alone, fed synthetic process lives (fork, exec, exit) by `ingestbench` as fast "
        "as it acknowledges them, twice: keeping everything, and with "
        f"`--retain-mib {r['bound_mib']} --retain-check-s 2`. Sizes are the database and its WAL on "
        "disk, 3 s after each milestone (a check period); CPU is the aggregator's own since its start.",
        "",
        "| processes | kept: on disk | kept: data | kept: rows | kept: CPU | bounded: on disk | bounded: data | "
        "bounded: rows | bounded: CPU |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for k, b in zip(r["keep"], r["bounded"]):
        lines.append(f"| {k['processes']:,} | {k['db_bytes'] / 1048576:.1f} MiB | {k['data_bytes'] / 1048576:.1f} MiB | "
                     f"{k['rows']:,} | {k['cpu_s']:.1f} s | {b['db_bytes'] / 1048576:.1f} MiB | "
                     f"{b['data_bytes'] / 1048576:.1f} MiB | {b['rows']:,} | {b['cpu_s']:.1f} s |")
    k, b = r["keep"][-1], r["bounded"][-1]
    per = (b["cpu_s"] - k["cpu_s"]) / k["processes"] * 1e6
    lines += [
        "",
        f"After {k['processes']:,} processes the bounded database holds {b['data_bytes'] / 1048576:.1f} MiB "
        f"of data against {k['data_bytes'] / 1048576:.1f} MiB kept whole. The bound is on data: SQLite reuses "
        "freed pages but does not give them back to the file system, and the WAL grows between "
        "checkpoints, so the files on disk stay at their high-water mark. Pruning cost the aggregator "
        f"{b['cpu_s'] - k['cpu_s']:+.1f} s of CPU, **{per:+.1f} us per process** (one run each), against "
        f"{k['cpu_s'] / k['processes'] * 1e6:.1f} us per process for ingesting them in the run that kept "
        "everything.",
        "",
    ]
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--milestones", default="100000,200000,400000")
    ap.add_argument("--bound-mib", type=int, default=32)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "retention.md"))
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("make bench-retention needs root", file=sys.stderr)
        return 2
    lines = report(measure(os.path.abspath(args.build), [int(x) for x in args.milestones.split(",")],
                           args.bound_mib))
    publish(lines, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
