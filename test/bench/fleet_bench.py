#!/usr/bin/python3
"""The fleet store's volume, storage and read speed (docs/performance.md, "Fleet store").

1. Shipped volume: the collector, aggregator (outbox on, scoped to a cgroup this bench
   makes, so only the workload and the host's own rows are recorded) and a live
   tracer-shipper deliver to a real ClickHouse (Debian's 18.16, on 127.0.0.1) through a
   counting proxy, for a measured span of (a) the exec storm, a busy host, and (b) the demo
   pipeline (examples/demo) on a loop, a typical one. Rows = rows ClickHouse received
   (every copy, refreshes included); bytes = the request bodies as sent (gzip) and
   unpacked (JSON). Scaled to a day by the span's length.
2. 100 hosts x 1 day: the demo loop's shipped rows, as ClickHouse holds them, copied by
   INSERT ... SELECT into a fresh database made by the shipper's own DDL: per host and per
   span-long slot of the day, times shifted by the slot (plus a per-host offset), ids and
   versions shifted past the source's, keys rebuilt as the shipper builds them, hostnames
   and host ids per host. Storage from system.parts and system.columns.
3. `tracer --fleet URL runs`, `show HOST:ID`, `idle`, `idle HOST` on that store, several
   times each: median and range.

Run as root: `sudo make bench-fleet` (BENCH_ARGS="--span-storm 60 --span-demo 300 ...").
Not part of `make check`."""
import argparse
import gzip
import http.client
import http.server
import json
import os
import signal
import socketserver
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "test", "integration"))
from clickhouse import ClickHouse  # noqa: E402
from ports import free_port  # noqa: E402

MEMCG = "/sys/fs/cgroup/memory"
TABLES = ("processes", "steps", "runs", "signals", "samples", "host_samples", "collector_stats",
          "tools", "batch_submissions", "batch_jobs")
# Epoch times (shifted by a copy's slot); the other *_ns are durations or boot-relative.
EPOCH = {"start_ns", "end_ns", "ts_ns", "detected_ns", "at_ns", "first_seen_ns", "last_seen_ns",
         "submit_ns", "first_ns", "launcher_start_ns"}
# Row ids that point at rows of the same host (shifted with a copy); tool ids stay: a
# host's tools are few and shared by its runs.
IDS = {"id", "run_id", "parent_id", "step_id", "process_id", "root_process_id",
       "command_process_id", "engine_process_id", "first_process_id", "submission_id"}
KEYED_BY_ID = {"processes", "steps", "runs", "signals", "batch_submissions", "tools"}
DAY_S = 86400


class Counter:
    def __init__(self):
        self.lock = threading.Lock()
        self.sent, self.json, self.requests = 0, 0, 0


def proxy(target_port, counter):
    """An HTTP proxy in front of ClickHouse counting the bodies the shipper sends."""
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            plain = gzip.decompress(body) if self.headers.get("Content-Encoding") == "gzip" else body
            if "INSERT" in self.path:
                with counter.lock:
                    counter.sent += len(body)
                    counter.json += len(plain)
                    counter.requests += 1
            c = http.client.HTTPConnection("127.0.0.1", target_port, timeout=60)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            c.request("POST", self.path, body=body, headers=headers)
            r = c.getresponse()
            answer = r.read()
            self.send_response(r.status)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
            c.close()

        def log_message(self, *a):
            pass

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True

    s = Server(("127.0.0.1", free_port()), Handler)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    return s


def wait_for(pred, timeout, what):
    end = time.time() + timeout
    while time.time() < end:
        try:
            if pred():
                return
        except (sqlite3.Error, OSError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"timed out: {what}")


def one(db, sql):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()


def ship_workload(build, ch, name, loop, span):
    """Daemons + live shipper through the counting proxy while `loop` runs in a cgroup of its
    own for about span seconds; returns rows per table, bytes sent and the span measured."""
    work = tempfile.mkdtemp(prefix=f"tracer-fleetbench-{name}-")
    os.chmod(work, 0o777)
    sock, db, state = (os.path.join(work, n) for n in ("a.sock", "a.db", "ship.db"))
    group = f"tracer-fleetbench-{uuid.uuid4().hex[:8]}"
    os.mkdir(f"{MEMCG}/{group}")
    counter = Counter()
    px = proxy(ch.http_port, counter)
    database = f"ship_{name}"
    sink = f"clickhouse://127.0.0.1:{px.server_address[1]}/{database}"
    procs = []
    try:
        agg = subprocess.Popen([f"{build}/tracer-aggregator", "--socket", sock, "--db", db, "--user", "nobody",
                                "--log-level", "warn", "--outbox-mib", "512", "--shipper-state", state,
                                "--scope-cgroup", f"/{group}", "--collector-user", "nobody"])
        procs.append(agg)
        wait_for(lambda: os.path.exists(sock), 30, "aggregator socket")
        col = subprocess.Popen([f"{build}/tracer-collector", "--socket", sock, "--user", "nobody",
                                "--aggregator-user", "nobody", "--log-level", "warn"])
        procs.append(col)
        wait_for(lambda: one(db, "SELECT count(*) FROM collector_stats"), 60, "collector snapshot")
        shipper = subprocess.Popen([f"{build}/tracer-shipper", "--db", db, "--state", state, "--sink", sink,
                                    "--user", "nobody", "--log-level", "warn"])
        procs.append(shipper)
        script = os.path.join(work, "loop.sh")
        with open(script, "w") as f:
            f.write(f"#!/bin/bash\necho $$ > {MEMCG}/{group}/cgroup.procs\nend=$((SECONDS + {span}))\n"
                    f"i=0\nwhile [ $SECONDS -lt $end ]; do i=$((i+1)); {loop}; done\necho $i > {work}/loops\n")
        os.chmod(script, 0o755)
        t0 = time.time()
        subprocess.run([script], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       cwd=work, env=dict(os.environ, TRACER_BENCH_WORK=work))
        time.sleep(3)  # the last rows written
        for p in (col, agg):
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=120)
        measured = time.time() - t0
        shipper.send_signal(signal.SIGTERM)
        shipper.wait(timeout=60)
        drain = subprocess.run([f"{build}/tracer-shipper", "--db", db, "--state", state, "--sink", sink,
                                "--user", "nobody", "--once", "--log-level", "warn"],
                               capture_output=True, text=True, timeout=600)
        if drain.returncode != 0:
            raise RuntimeError(f"shipper --once: {drain.returncode} {drain.stderr[-400:]}")
        loops = int(open(os.path.join(work, "loops")).read())
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        px.shutdown()
        for _ in range(50):
            try:
                os.rmdir(f"{MEMCG}/{group}")
                break
            except OSError:
                time.sleep(0.1)
    rows = {t: int(ch.query(f"SELECT count() FROM {database}.{t}")) for t in TABLES}
    final = {t: int(ch.query(f"SELECT count() FROM {database}.{t} FINAL")) for t in TABLES}
    local_processes = one(db, "SELECT count(*) FROM processes")
    return {"name": name, "span_s": measured, "loops": loops, "rows": rows, "final": final,
            "sent_bytes": counter.sent, "json_bytes": counter.json, "requests": counter.requests,
            "local_processes": local_processes, "database": database}


def columns(ch, database, table):
    return [r[0] for r in ch.rows(f"SELECT name FROM system.columns WHERE database = '{database}' "
                                  f"AND table = '{table}'")]


def copy_expr(table, col, stride_id, stride_v, day_shift_ns, slot_ns):
    """The SELECT expression of col for host h, slot k (h and k come from arrayJoin)."""
    shift = f"(toInt64({day_shift_ns}) + h * toInt64({slot_ns // 100}) + k * toInt64({slot_ns}))"
    if col == "_host":
        return "concat('sim-host-', toString(h)) AS _host"
    if col == "_version":
        return f"_version + toUInt64(h * 0 + k) * {stride_v} AS _version"
    if col == "_key":
        return "_newkey AS _key"  # key_expr, in the query below (an alias here would shadow)
    if col in ("hostname", "host_id"):
        return f"if(isNull(`{col}`), `{col}`, concat('sim-host-', toString(h))) AS `{col}`"
    if col in EPOCH:
        if table == "collector_stats" and col == "first_seen_ns":
            return f"`{col}` + toInt64({day_shift_ns}) AS `{col}`"
        return f"`{col}` + {shift} AS `{col}`"
    if col in IDS and table != "tools":
        return f"`{col}` + k * {stride_id} AS `{col}`"
    return f"`{col}`"


def key_expr(table, stride_id, day_shift_ns, slot_ns):
    """The copy's key, built from the source's columns as the shipper builds it."""
    shift = f"(toInt64({day_shift_ns}) + h * toInt64({slot_ns // 100}) + k * toInt64({slot_ns}))"
    if table in KEYED_BY_ID and table != "tools":
        return f"toString(id + k * {stride_id})"
    if table == "samples":
        return f"concat(toString(process_id + k * {stride_id}), ':', toString(ts_ns + {shift}))"
    if table == "host_samples":
        return f"toString(ts_ns + {shift})"
    return "_key"  # tools, collector_stats (one stream per host, refreshed), batch_jobs


def simulate(build, ch, source, hosts, day_s, span_s):
    """hosts x day_s of the source database's rows, in database sim (the shipper's DDL)."""
    # The shipper's own DDL makes the tables: ship one empty outbox to it.
    work = tempfile.mkdtemp(prefix="tracer-fleetbench-ddl-")
    os.chmod(work, 0o777)
    ch.query("DROP DATABASE IF EXISTS sim")
    empty = os.path.join(work, "empty.db")
    agg = subprocess.Popen([f"{build}/tracer-aggregator", "--socket", os.path.join(work, "s"), "--db", empty,
                            "--user", "nobody", "--log-level", "warn", "--outbox-mib", "1", "--collector-user", "nobody"])
    wait_for(lambda: os.path.exists(os.path.join(work, "s")), 30, "aggregator")
    agg.send_signal(signal.SIGTERM)
    agg.wait(timeout=60)
    subprocess.run([f"{build}/tracer-shipper", "--db", empty, "--state", os.path.join(work, "st.db"), "--sink",
                    f"clickhouse://127.0.0.1:{ch.http_port}/sim", "--user", "nobody", "--once",
                    "--log-level", "warn"], check=True, timeout=120)
    slot_ns = int(span_s * 1e9)
    slots = int(day_s // span_s) + 1
    t0 = int(ch.query(f"SELECT min(ts_ns) FROM {source}.host_samples"))
    day0 = (int(time.time()) // DAY_S - 1) * DAY_S * 10**9  # yesterday, UTC midnight
    day_end = day0 + day_s * 10**9
    started = time.time()
    for table in TABLES:
        cols = columns(ch, "sim", table)
        have = set(columns(ch, source, table))
        if not int(ch.query(f"SELECT count() FROM {source}.{table}")):
            continue
        # One stride for every id column: larger than any id of the source.
        stride_id = max(int(ch.query(f"SELECT ifNull(max(id), 0) FROM {source}.{t}"))
                        for t in ("processes", "steps", "runs", "signals")) + 1
        stride_v = int(ch.query(f"SELECT max(_version) FROM {source}.{table}")) + 1
        exprs = ", ".join(copy_expr(table, c, stride_id, stride_v, day0 - t0, slot_ns) if c in have or
                          c.startswith("_") else f"NULL AS `{c}`" for c in cols)
        ks = 1 if table == "tools" else slots
        for h in range(hosts):
            time_col = {"processes": "start_ns", "steps": "start_ns", "runs": "start_ns",
                        "signals": "detected_ns", "samples": "ts_ns", "host_samples": "ts_ns",
                        "collector_stats": "last_seen_ns", "batch_submissions": "submit_ns",
                        "batch_jobs": "first_ns"}.get(table)
            where = f"ifNull(`{time_col}`, 0) < {day_end}" if time_col else "1"
            ch.query(f"INSERT INTO sim.{table} SELECT {', '.join(c for c in cols)} FROM (SELECT {exprs} FROM "
                     f"(SELECT *, arrayJoin(range({ks})) AS k, toInt64({h}) AS h, "
                     f"{key_expr(table, stride_id, day0 - t0, slot_ns)} AS _newkey FROM {source}.{table})) "
                     f"WHERE {where}")
        print(f"  sim.{table}: {ch.query(f'SELECT count() FROM sim.{table}').strip()} rows "
              f"({time.time() - started:.0f} s)", flush=True)
    ch.query("OPTIMIZE TABLE sim.collector_stats FINAL")
    for table in ("runs", "processes", "steps"):
        bad = int(ch.query(f"SELECT countIf(_key != toString(id)) FROM sim.{table}"))
        if bad:
            raise RuntimeError(f"sim.{table}: {bad} rows whose key is not their id")
    load_s = time.time() - started
    parts = ch.rows("SELECT table, sum(rows), sum(data_compressed_bytes), sum(data_uncompressed_bytes), "
                    "sum(bytes_on_disk), uniqExact(partition), count() FROM system.parts WHERE database = 'sim' "
                    "AND active GROUP BY table ORDER BY table")
    biggest = ch.rows("SELECT table, name, sum(data_compressed_bytes) AS c, sum(data_uncompressed_bytes) FROM "
                      "system.columns WHERE database = 'sim' GROUP BY table, name ORDER BY c DESC LIMIT 8")
    return {"hosts": hosts, "day_s": day_s, "slots": slots, "load_s": load_s, "day0": day0,
            "parts": [[p[0]] + [int(x) for x in p[1:]] for p in parts],
            "columns": [[b[0], b[1], int(b[2]), int(b[3])] for b in biggest]}


def time_verbs(build, ch, repeats, hosts, before_build=None):
    url = f"clickhouse://127.0.0.1:{ch.http_port}/sim"
    # A run in the middle of a host's day, and that host.
    host = f"sim-host-{hosts // 2}"
    n = int(ch.query(f"SELECT count() FROM sim.runs WHERE _host = '{host}'"))
    rid = ch.rows(f"SELECT toString(id) FROM sim.runs WHERE _host = '{host}' ORDER BY start_ns "
                  f"LIMIT 1 OFFSET {n // 2}")[0][0]
    verbs = {"runs": ["runs"], "show HOST:ID": ["show", f"{host}:{rid}"], "idle": ["idle"],
             "idle HOST": ["idle", host], "runs --json": ["runs", "--json"],
             "runs --limit 500": ["runs", "--limit", "500"], "idle HOST --json": ["idle", "--json", host],
             "idle --sweep --rate 2.5": ["idle", "--sweep", "--rate", "2.5"]}
    out = {}
    for name, argv in verbs.items():
        times, answer = timed(build, url, argv, repeats)
        out[name] = {"times": times, "lines": len(answer.splitlines()), "argv": argv}
        if name == "idle HOST --json":
            mine = answer
    if before_build:
        # The same host read by the build before this one (every column copied as JSON rows):
        # its time, and whether it says the same.
        times, theirs = timed(before_build, url, ["idle", "--json", host], 3)
        out["idle HOST --json"].update(times_before=times, same_as_before=theirs == mine)
        print(f"  idle HOST --json, build before: median {statistics.median(times):.3f} s, "
              f"same answer: {theirs == mine}", flush=True)
    return out


def timed(build, url, argv, repeats):
    """Wall times of repeats runs of `tracer --fleet URL argv`, and the last one's stdout."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        p = subprocess.run([f"{build}/tracer", "--fleet", url, *argv], capture_output=True, text=True,
                           timeout=900)
        times.append(time.perf_counter() - t)
        if p.returncode not in (0, 3):
            raise RuntimeError(f"tracer --fleet {' '.join(argv)}: {p.returncode} {p.stderr[-400:]}")
    print(f"  {' '.join(argv)}: median {statistics.median(times):.3f} s ({min(times):.3f}-{max(times):.3f})",
          flush=True)
    return times, p.stdout


def mib(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{int(n)} B"


def fmt_int(n):
    return f"{int(round(n)):,}"


def report(args, shipped, sim, verbs, when=None, load=None):
    now = when or time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load = load or open("/proc/loadavg").read().split()[0]
    lines = ["<!-- bench-fleet:start -->", "## Fleet store (ClickHouse)", "",
             f"Produced by `sudo make bench-fleet` (`test/bench/fleet_bench.py {' '.join(sys.argv[1:])}`), {now}, "
             f"Linux {os.uname().release}, {os.cpu_count()} CPUs (load {load} at the end, shared with other "
             f"work), ClickHouse {ch_version} (Debian's), on 127.0.0.1.", "",
             "**Shipped per host.** Collector, aggregator (scoped to a cgroup holding only the workload) and a "
             "live shipper to ClickHouse through a counting proxy; rows are every row ClickHouse received "
             "(refreshed copies included; FINAL keeps fewer), bytes the INSERT bodies as sent (gzip) and "
             "unpacked (JSON). Per day = measured x 86,400 s / span.", ""]
    lines += ["| workload | span | loops | processes (local) | rows shipped | of which samples | "
              "sent (gzip) | JSON | rows / day | sent / day | JSON / day |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in shipped:
        day = DAY_S / s["span_s"]
        total = sum(s["rows"].values())
        lines.append(f"| {s['label']} | {s['span_s']:.0f} s | {s['loops']} | {fmt_int(s['local_processes'])} | "
                     f"{fmt_int(total)} | {fmt_int(s['rows']['samples'])} | {mib(s['sent_bytes'])} | "
                     f"{mib(s['json_bytes'])} | {fmt_int(total * day)} | {mib(s['sent_bytes'] * day)} | "
                     f"{mib(s['json_bytes'] * day)} |")
    storm, demo = shipped
    rate = storm["local_processes"] / storm["span_s"]
    per_proc = storm["sent_bytes"] / storm["local_processes"]
    rows_proc = sum(storm["rows"].values()) / storm["local_processes"]
    lines += ["", f"The storm ran at {rate:,.0f} exec/s here (`helpers/storm 5000 2 /bin/true` under `tracer run`, "
              f"back to back, on a machine shared with other work): {rows_proc:.2f} rows and {per_proc:.0f} bytes "
              f"sent (gzip) per process. A host that execs at 2,494/s all day (issue 57's storm) would ship "
              f"{fmt_int(2494 * DAY_S * rows_proc)} rows and {mib(2494 * DAY_S * per_proc)} a day: the ceiling. "
              f"The demo loop is one run of {demo['span_s'] / demo['loops']:.1f} s "
              f"({demo['local_processes'] / demo['loops']:.0f} processes, "
              f"{demo['final']['steps'] / max(demo['final']['runs'], 1):.0f} steps) after another: "
              f"{fmt_int(DAY_S * demo['loops'] / demo['span_s'])} runs a day, a host never idle; a real typical "
              "host ships less.", ""]
    lines += ["", "Rows shipped per table (received / under FINAL):", ""]
    for s in shipped:
        lines.append(f"- {s['label']}: " + ", ".join(f"{t} {fmt_int(s['rows'][t])}/{fmt_int(s['final'][t])}"
                                                      for t in TABLES if s["rows"][t]))
    lines += ["", f"**{sim['hosts']} hosts x 1 day.** The demo loop's shipped rows copied {sim['slots']} times "
              f"per host (one copy per {shipped[1]['span_s']:.0f} s slot of the day, times shifted, ids, keys "
              "and versions rebuilt, hostnames per host) into a database made by the shipper's DDL "
              f"(partitioned by day), loaded in {sim['load_s']:.0f} s. From `system.parts` (active parts):", "",
              "| table | rows | compressed | uncompressed | on disk | partitions | parts |",
              "|---|---|---|---|---|---|---|"]
    tot = [0, 0, 0, 0]
    for p in sim["parts"]:
        lines.append(f"| {p[0]} | {fmt_int(p[1])} | {mib(p[2])} | {mib(p[3])} | {mib(p[4])} | {p[5]} | {p[6]} |")
        tot = [a + b for a, b in zip(tot, p[1:5])]
    lines.append(f"| all | {fmt_int(tot[0])} | {mib(tot[1])} | {mib(tot[2])} | {mib(tot[3])} | | |")
    lines += ["", "Largest columns (compressed / uncompressed): " +
              ", ".join(f"{c[0]}.{c[1]} {mib(c[2])} / {mib(c[3])}" for c in sim["columns"]) + ".", "",
              f"**Fleet verbs on it** ({args.repeats} runs each, wall time of `tracer --fleet URL ...`, output "
              "discarded; goal under 1 s for runs, show, idle):", "",
              "| verb | median | min | max | runs of it | output lines |", "|---|---|---|---|---|---|"]
    for name, v in verbs.items():
        t = v["times"]
        lines.append(f"| `{name}` | "
                     f"{statistics.median(t):.3f} s | {min(t):.3f} s | {max(t):.3f} s | {len(t)} | {v['lines']} |")
    idle = verbs.get("idle HOST --json", {})
    before = idle.get("times_before")
    if before:
        lines += ["", f"`idle HOST --json` by the build before the TabSeparated copy (`--before-build`, every "
                  f"column of the host's rows as JSON, a statement prepared per row), same store: median "
                  f"{statistics.median(before):.3f} s over {len(before)} runs ({min(before):.3f}-{max(before):.3f} s), "
                  f"the same answer byte for byte: {'yes' if idle.get('same_as_before') else 'NO'}."]
    lines += ["", "<!-- bench-fleet:end -->"]
    return lines


def publish(lines, path):
    text = open(path).read()
    start, end = "<!-- bench-fleet:start -->", "<!-- bench-fleet:end -->"
    block = "\n".join(lines)
    if start in text and end in text:
        text = text[:text.index(start)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(text)
    print(block)


ch_version = "?"


def main():
    global ch_version
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--span-storm", type=int, default=60)
    ap.add_argument("--span-demo", type=int, default=240)
    ap.add_argument("--hosts", type=int, default=100)
    ap.add_argument("--day-s", type=int, default=DAY_S)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "performance.md"))
    ap.add_argument("--before-build", help="also time `idle HOST --json` with this older build, same store")
    ap.add_argument("--report-only", metavar="JSON", help="rewrite the page from a run's bench-fleet.json")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    if args.report_only:
        global ch_version
        r = json.load(open(args.report_only))
        ch_version, sys.argv[1:] = r.get("ch_version", "18.16.1"), r.get("argv", [])
        args.repeats = len(next(iter(r["verbs"].values()))["times"])
        publish(report(args, r["shipped"], r["sim"], r["verbs"], r.get("when"), r.get("load")), args.out)
        return
    if os.geteuid() != 0:
        sys.exit("bench-fleet loads BPF programs: run it as root")
    if not ClickHouse.available():
        sys.exit("clickhouse-server is not installed (deploy/install-deps.sh tests)")
    ch = ClickHouse(tempfile.mkdtemp(prefix="tracer-fleetbench-ch-"))
    ch.start()
    try:
        ch_version = ch.query("SELECT version()").strip()
        storm = f"{build}/tracer run --socket $TRACER_BENCH_WORK/a.sock --db $TRACER_BENCH_WORK/a.db " \
                f"--run storm -- {build}/helpers/storm 5000 2 /bin/true"
        demo = f"{build}/tracer run --socket $TRACER_BENCH_WORK/a.sock --db $TRACER_BENCH_WORK/a.db " \
               f"--pipeline demo-variant-calling -- {ROOT}/examples/demo/pipeline.sh $TRACER_BENCH_WORK/w$i"
        shipped = []
        for name, label, loop, span in (("storm", "exec storm (busy)", storm, args.span_storm),
                                        ("demo", "demo pipeline on a loop (typical)", demo + "; rm -rf $TRACER_BENCH_WORK/w$i", args.span_demo)):
            print(f"shipping: {label}, {span} s", flush=True)
            s = ship_workload(build, ch, name, loop, span)
            s["label"] = label
            shipped.append(s)
            with open(os.path.join(build, "bench-fleet-shipped.json"), "w") as f:
                json.dump(shipped, f, indent=1)
            print(f"  {sum(s['rows'].values())} rows, {s['sent_bytes']} bytes sent in {s['span_s']:.0f} s, {s['loops']} loops, "
                  f"{s['local_processes']} processes", flush=True)
        print(f"simulating {args.hosts} hosts x {args.day_s} s", flush=True)
        sim = simulate(build, ch, "ship_demo", args.hosts, args.day_s, shipped[1]["span_s"])
        print("timing the fleet verbs", flush=True)
        before = os.path.abspath(args.before_build) if args.before_build else None
        verbs = time_verbs(build, ch, args.repeats, args.hosts, before)
        publish(report(args, shipped, sim, verbs), args.out)
        with open(os.path.join(build, "bench-fleet.json"), "w") as f:
            json.dump({"shipped": shipped, "sim": sim, "verbs": verbs, "ch_version": ch_version,
                       "argv": sys.argv[1:], "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                       "load": open("/proc/loadavg").read().split()[0]}, f, indent=1)
    finally:
        ch.stop()


if __name__ == "__main__":
    main()
