"""What runs now, in the fleet store (docs/shipping.md, "Live rows and tombstones"): a
running run, its open step and running process reach ClickHouse while they run and are
refreshed; at the end each is one row under FINAL, equal to the host's own row; a run the
aggregator takes back (a `tracer run` killed before it started its command) is withdrawn
at the sink; `tracer --fleet top` lists what the host's own `tracer top` lists, with its
host; a host that stopped reporting is named; ClickHouse down is one line and a non-zero
exit. Ground truth: the host's SQLite database, /proc, and the server the test stops."""
import json
import os
import signal
import statistics
import subprocess
import time
import uuid

from harness import Failure, plain_build_only, remove_cgroup, start_daemons, test
from test_fleet import clickhouse, private_file, tracer

MEMCG = "/sys/fs/cgroup/memory"
HOST = "live-a"
LIVE = ("processes", "steps", "runs")


def sink_row(ch, table, key):
    """The record's row under FINAL as the fleet reads it: (row or None, copies before FINAL)."""
    rows = ch.query(f"SELECT * FROM tracer.{table} FINAL WHERE _host = '{HOST}' AND _key = '{key}' "
                    "FORMAT JSONEachRow").splitlines()
    copies = int(ch.query(f"SELECT count() FROM tracer.{table} WHERE _host = '{HOST}' AND _key = '{key}'"))
    return (json.loads(rows[0]) if rows else None), copies


def local_row(ctx, db, table, key):
    import sqlite3
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    try:
        r = con.execute(f"SELECT * FROM {table} WHERE id = ?", (key,)).fetchone()
        return dict(r) if r else None
    finally:
        con.close()


def row_differences(local, sink):
    """Columns where the sink's row is not the host's (Int64 arrive quoted; REAL to 15 digits)."""
    out = []
    for k, v in local.items():
        s = sink.get(k)
        if isinstance(v, float):
            ok = s is not None and abs(float(s) - v) <= 1e-12 * max(abs(v), 1e-300)
        elif isinstance(v, int):
            ok = s is not None and int(s) == v
        else:
            ok = s == v
        if not ok:
            out.append((k, v, s))
    return out


def launcher_of(tracer_pid):
    """The traced `tracer run` under strace (its only child)."""
    with open(f"/proc/{tracer_pid}/task/{tracer_pid}/children") as f:
        kids = f.read().split()
    return int(kids[0]) if kids else None


def compare_top(ctx, conf, db, rid):
    """--fleet top --json against the host's own top --json: the run, its steps, their tools."""
    def shape(doc, host=None):
        runs = [r for r in doc["runs"] if r["id"] == rid and (host is None or r.get("host") == host)]
        return [(r["id"], r["name"], r["watched"], [(s["name"], [(t["tool"], t["processes"]) for t in s["tools"]])
                                                    for s in r["steps"]]) for r in runs]
    code, out, err = tracer(ctx, "top", "--db", db, "--json")
    fcode, fout, ferr = tracer(ctx, "--fleet", conf, "top", "--json")
    if code or fcode:
        return f"exit local {code} fleet {fcode}: {ferr[-300:]}"
    local, fleet = shape(json.loads(out)), shape(json.loads(fout), HOST)
    if not local or local != fleet or not local[0][3] or not local[0][3][0][1]:
        return f"local {local} fleet {fleet}"
    keys = {k for r in json.loads(fout)["runs"] for k in r} - {k for r in json.loads(out)["runs"] for k in r}
    return None if keys == {"host", "hostname"} else f"fleet adds {keys}, not host and hostname"


@test
@plain_build_only("CI time: the shipper's and CLI's code run under ASan in their own tests")
def running_work_is_live_at_the_sink_and_taken_back_rows_are_withdrawn(ctx):
    """A run whose tool grows for 14 s: within 10 s of its start its run, step and
    process are in ClickHouse, running, and refreshed (newer copies, more CPU) while it
    runs (its step's peak memory, its process's CPU and peak so far, which grow towards its
    final row's); `tracer --fleet top` shows it as the host's `tracer top` does, with the host.
    A `tracer run` held (strace delays its fork) and killed before its command is a run
    the aggregator takes back: at the sink it is withdrawn and no verb lists it. At the
    end each record is one row under FINAL, equal to the host's row, and the sink holds
    exactly the host's runs, steps and processes. A host that stopped reporting: top, runs
    and show say whose records are missing, idle names it; ClickHouse stopped: one line,
    exit 1."""
    ch = clickhouse(ctx)
    secret = f"user = {ch.user}\npassword = {ch.password}\n"
    cred = private_file(ctx, "ch.cred", secret, owner="nobody")
    conf = private_file(ctx, "fleet.conf", f"[fleet]\nurl = clickhouse://127.0.0.1:{ch.http_port}/tracer\n"
                        f"credentials = {private_file(ctx, 'reader.cred', secret)}\n")
    sink = f"clickhouse://127.0.0.1:{ch.http_port}/tracer"
    group = f"tracer-live-{uuid.uuid4().hex[:8]}"
    os.mkdir(f"{MEMCG}/{group}")
    ctx.cleanups.append(lambda: remove_cgroup(f"{MEMCG}/{group}"))
    sock, db, state = ctx.path("a.sock"), ctx.path("a.db"), ctx.path("a-ship.db")
    agg, col = start_daemons(ctx, sock, db, extra_agg=("--outbox-mib", "64", "--shipper-state", state,
                                                        "--scope", "runs", "--scope-cgroup", f"/{group}"))
    ship = subprocess.Popen([ctx.bin("tracer-shipper"), "--db", db, "--state", state, "--sink", sink,
                             "--host-id", HOST, "--credentials", cred, "--user", "nobody",
                             "--batch-age-ms", "200"], stderr=subprocess.PIPE, text=True)
    ctx.procs.append(ship)
    script = ctx.path("live.sh")
    with open(script, "w") as f:
        # A tool that grows by 8 MiB every 0.7 s for 14 s: its step's and run's peak
        # memory change while it runs, so their live rows do.
        f.write("#!/bin/bash\n/usr/bin/python3 -c 'import time\nb = []\nfor i in range(20):\n"
                "    b.append(bytearray(8 << 20)); time.sleep(0.7)'\n")
    os.chmod(script, 0o755)
    enter = f"echo $$ > {MEMCG}/{group}/cgroup.procs; exec "
    held = subprocess.Popen(["sh", "-c", enter + "strace -f -qq -o /dev/null -e trace=clone,clone3,fork,vfork "
                             "-e inject=clone,clone3,fork,vfork:delay_enter=60000000 "
                             f"{ctx.bin('tracer')} run --socket {sock} --db {db} --run taken-back -- /bin/true"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ctx.procs.append(held)
    run = subprocess.Popen(["sh", "-c", enter + f"{ctx.bin('tracer')} run --socket {sock} --db {db} "
                            f"--run live-one -- {script}"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
    ctx.procs.append(run)
    seen, versions, so_far, taken, top_said = {}, [], [], None, "never compared"
    while run.poll() is None:
        ids = ctx.query("SELECT r.id, p.id, p.step_id, p.start_ns FROM runs r JOIN processes p ON p.run_id = r.id "
                        "WHERE r.name = 'live-one' AND p.exe LIKE '%/python3%'", db=db)
        if ids:
            rid, pid, sid, start = ids[0]
            for table, key in (("runs", rid), ("steps", sid), ("processes", pid)):
                row, _ = sink_row(ch, table, key)
                state_col = "state" if table == "processes" else "status"
                if table not in seen and row and row[state_col] == "running":
                    seen[table] = time.time_ns() - start
            # The process's live copy carries its numbers so far (its newest sample's
            # CPU, its sampled peak memory); its samples, its step and run change too.
            row, _ = sink_row(ch, "processes", pid)
            if row and row["state"] == "running" and row["max_rss_kb"] is not None:
                so_far.append((int(row["_version"]), int(row["cpu_user_ns"] or 0) + int(row["cpu_sys_ns"] or 0),
                               int(row["max_rss_kb"])))
            row, _ = sink_row(ch, "steps", sid)
            samples = int(ch.query(f"SELECT count() FROM tracer.samples WHERE _host = '{HOST}' AND "
                                   f"process_id = {pid}"))
            if row and row["status"] == "running":
                versions.append((int(row["_version"]), json.dumps({k: v for k, v in row.items()
                                                                   if k != "_version"}), samples))
            if top_said and len(seen) == 3:
                top_said = compare_top(ctx, conf, db, rid)
        back = ctx.query("SELECT id FROM runs WHERE name = 'taken-back'", db=db)
        if back and taken is None and sink_row(ch, "runs", back[0][0])[0]:
            taken = back[0][0]
            # SIGKILL waits while strace holds the fork; strace's end releases it.
            os.kill(launcher_of(held.pid), signal.SIGKILL)
            os.kill(held.pid, signal.SIGKILL)
        time.sleep(0.25)
    ctx.check(run.returncode == 0, f"the live run succeeded: {run.returncode} {run.stderr.read()[-300:]}")
    ctx.check(set(seen) == set(LIVE) and max(seen.values()) <= 10e9,
              f"run, step and process at the sink, running, within 10 s of the process's start: {seen}")
    ctx.check(len({v for v, _, _ in versions}) >= 2 and len({r for _, r, _ in versions}) >= 2
              and versions[-1][2] > versions[0][2],
              f"refreshed while it runs (newer copies of its step, more samples of its process): "
              f"(version, samples) {[(v, n) for v, _, n in versions]}")
    final = local_row(ctx, db, "processes", pid)
    grew = sorted({(v, c, m) for v, c, m in so_far})
    # Ground truth: the process's own final row (its exit's rusage and peak). Its live
    # copies grow towards it (the tool adds 8 MiB every 0.7 s) and never pass it.
    ctx.check(len({m for _, _, m in grew}) >= 2 and all(a[1] <= b[1] and a[2] <= b[2] for a, b in zip(grew, grew[1:]))
              and grew[-1][2] <= final["max_rss_kb"] and grew[-1][2] >= final["max_rss_kb"] // 2
              and 0 < grew[-1][1] <= final["cpu_user_ns"] + final["cpu_sys_ns"],
              f"the running process's copy at the sink refreshed while it runs: (version, cpu ns, "
              f"peak KiB) {grew[:3]}..{grew[-2:]}, final cpu {final['cpu_user_ns'] + final['cpu_sys_ns']} "
              f"peak {final['max_rss_kb']}")
    ctx.check(top_said is None, f"--fleet top --json lists the run as the host's top does: {top_said}")
    ctx.check(taken is not None, "the held tracer run reached the sink before it was killed")
    held.wait(timeout=30)
    time.sleep(2)  # its end committed: the run taken back
    ctx.stop(col)
    ctx.stop(agg)
    deadline = time.time() + 60
    while time.time() < deadline:  # everything queued is delivered
        through = ctx.query("SELECT value FROM shipper_state WHERE key = 'delivered_through'", db=state)
        if ctx.one("SELECT count(*) FROM outbox WHERE id > ?", int(through[0][0]) if through else 0, db=db) == 0:
            break
        time.sleep(0.25)
    ctx.stop(ship)
    # The end: one row per record under FINAL, the host's own.
    counts = {}
    for table, key in (("runs", rid), ("steps", sid), ("processes", pid)):
        row, copies = sink_row(ch, table, key)
        mine = local_row(ctx, db, table, key)
        diff = row_differences(mine, row) if row and mine else "missing"
        ctx.check(not diff and row["_withdrawn"] == 0, f"{table} {key}: the sink's row is the host's: {diff}")
        counts[table] = copies
    if taken is not None:
        row, copies = sink_row(ch, "runs", taken)
        ctx.check(row and row["_withdrawn"] == 1 and copies >= 2 and local_row(ctx, db, "runs", taken) is None,
                  f"the run taken back is withdrawn at the sink ({copies} copies): {row}")
        code, out, _ = tracer(ctx, "--fleet", conf, "runs", "--json")
        ctx.check(code == 0 and "taken-back" not in out and "live-one" in out,
                  f"no fleet verb lists the withdrawn run: {out[-400:]}")
    for table in LIVE:
        at_sink = {int(k) for (k,) in ch.rows(f"SELECT _key FROM tracer.{table} FINAL WHERE _host = '{HOST}' "
                                                  "AND _withdrawn = 0")}
        local = {i for (i,) in ctx.query(f"SELECT id FROM {table}", db=db)}
        ctx.check(at_sink == local, f"{table}: the sink holds what the host holds: only at the sink "
                  f"{sorted(at_sink - local)[:5]}, only here {sorted(local - at_sink)[:5]}")
        raw = int(ch.query(f"SELECT count() FROM tracer.{table} WHERE _host = '{HOST}'"))
        final = int(ch.query(f"SELECT count() FROM tracer.{table} FINAL WHERE _host = '{HOST}'"))
        print(f"{table}: {raw} rows before FINAL, {final} under FINAL, {len(at_sink)} not withdrawn")
    print(f"latency to ClickHouse (s): {({k: round(v / 1e9, 2) for k, v in seen.items()})}, median "
          f"{statistics.median(seen.values()) / 1e9:.2f}; copies of the live run's records {counts}")
    host_stopped_reporting(ctx, ch, conf)
    ch.stop()
    for verb in (("top", "--once"), ("runs",), ("idle",)):
        code, out, err = tracer(ctx, "--fleet", conf, *verb)
        ctx.check(code != 0 and len(err.strip().splitlines()) == 1 and "unreachable" in err,
                  f"--fleet {verb[0]} with ClickHouse stopped: one line, non-zero exit: {code} {err!r}")


def host_stopped_reporting(ctx, ch, conf):
    """A host whose last word is 10 minutes old, with a run still running in the store (as
    a host that went away leaves it): top says whose records are missing, idle names it."""
    now = time.time_ns()
    ch.query("INSERT INTO tracer.collector_stats (_host, _key, _version, host_id, hostname, last_seen_ns, "
             f"final) VALUES ('gone-b', 's1', 1, 'gone-b-mid', 'gone-b-name', {now - 600 * 10**9}, 0)")
    ch.query("INSERT INTO tracer.runs (_host, _key, _version, id, name, host_id, hostname, start_ns, status) "
             f"VALUES ('gone-b', '1', 1, 1, 'left-behind', 'gone-b-mid', 'gone-b-name', {now - 900 * 10**9}, "
             "'running')")
    code, out, err = tracer(ctx, "--fleet", conf, "top", "--json")
    runs = [r for r in json.loads(out)["runs"] if r.get("host") == "gone-b"] if code == 0 else []
    ctx.check(len(runs) == 1 and runs[0]["watched"] is False, f"--fleet top: the run is not watched: {runs} {err}")
    code, out, err = tracer(ctx, "--fleet", conf, "top", "--once")
    line = [ln for ln in out.splitlines() if "left-behind" in ln]
    ctx.check(code == 0 and line and "stopped reporting" in line[0] and "records of gone-b-name are missing"
              in line[0], f"--fleet top says whose records are missing: {line or out}")
    for verb in (("runs",), ("show", "gone-b:1")):
        code, out, err = tracer(ctx, "--fleet", conf, *verb)
        said = " ".join(ln for ln in out.splitlines() if verb[0] == "show" or "left-behind" in ln
                        or "records of" in ln)
        ctx.check(code == 0 and "records of gone-b-name are missing" in " ".join(said.split())
                  and "unknown" in said and " ok " not in said,
                  f"--fleet {verb[0]}: the run is unknown, gone-b-name's records missing: {code} {out[-600:]} {err}")
    code, out, err = tracer(ctx, "--fleet", conf, "show", "--json", "gone-b:1")
    doc = json.loads(out) if code == 0 else {}
    ctx.check(doc.get("run", {}).get("records_missing") == "gone-b-name",
              f"--fleet show --json: records_missing names the host: {out[:400]} {err}")
    code, out, err = tracer(ctx, "--fleet", conf, "idle", "--json")
    hosts = {h["host"]: h for h in json.loads(out)["hosts"]} if code == 0 else {}
    ctx.check(hosts.get("gone-b", {}).get("silent") is True and hosts.get(HOST, {}).get("silent") is True,
              f"--fleet idle: both hosts stopped reporting (the test stopped {HOST}'s collector): {hosts}")
