"""The verbs over the fleet store (docs/shipping.md, "Reading the fleet"): runs recorded
here by two aggregators, shipped to one ClickHouse under two host ids, read back with
`tracer --fleet`. Ground truth: the same verb on the host's own database, where the run
is whole; and the ClickHouse server the test stops."""
import json
import os
import pwd
import subprocess
import time
import uuid

from clickhouse import ClickHouse
from harness import Failure, plain_build_only, remove_cgroup, start_daemons, test, write_script

MEMCG = "/sys/fs/cgroup/memory"
HOSTS = ("fleet-a", "fleet-b")


def clickhouse(ctx):
    if not ClickHouse.available():
        raise Failure("clickhouse-server is not installed (deploy/install-deps.sh tests)")
    ch = ClickHouse(ctx.path("ch"))
    ch.start()
    ctx.cleanups.append(ch.stop)
    return ch


def private_file(ctx, name, text, owner=None):
    path = ctx.path(name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)
    if owner:
        os.chown(path, pwd.getpwnam(owner).pw_uid, -1)
    return path


def record_host(ctx, host, group, sink, cred):
    """A host: its own daemons (recording only `tracer run`s in the test's cgroup) and
    database, one run that fails a tool and burns CPU in two steps, shipped as host. Its
    command substitution with a pipe is no step (its rows were queued with one first)."""
    sock, db, state = ctx.path(f"{host}.sock"), ctx.path(f"{host}.db"), ctx.path(f"{host}-ship.db")
    agg, col = start_daemons(ctx, sock, db, extra_agg=("--outbox-mib", "64", "--shipper-state", state,
                                                        "--scope", "runs", "--scope-cgroup", f"/{group}"))
    script = write_script(ctx, f"{host}.sh",
                          f"{ctx.helper('cpuburn')} 300\n"
                          "n=$(ls / | wc -l)\n"
                          f"{ctx.helper('cpuburn')} 150 &\n"
                          "gzip -c /etc/services > /dev/null\n"
                          "wait\n"
                          "bash -c 'exit 3'\n")
    run = subprocess.run(["sh", "-c", f"echo $$ > {MEMCG}/{group}/cgroup.procs; exec {ctx.bin('tracer')} run "
                          f"--socket {sock} --db {db} --run run-{host} -- {script}"],
                         capture_output=True, text=True, timeout=120)
    ctx.check(run.returncode == 3, f"{host}: the run fails with its script's status 3: {run.returncode} "
              f"{run.stderr[-300:]}")
    time.sleep(1.5)  # the run's records are committed and queued
    ctx.stop(col)
    ctx.stop(agg)
    ship = subprocess.run([ctx.bin("tracer-shipper"), "--db", db, "--state", state, "--sink", sink,
                           "--host-id", host, "--credentials", cred, "--user", "nobody", "--once"],
                          capture_output=True, text=True, timeout=300)
    ctx.check(ship.returncode == 0, f"{host}: shipped: {ship.returncode} {ship.stderr[-300:]}")
    rid = ctx.one("SELECT id FROM runs WHERE name = ?", f"run-{host}", db=db)
    return db, rid


def tracer(ctx, *args):
    p = subprocess.run([ctx.bin("tracer"), *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def json_differences(a, b, path="$"):
    """Where two documents differ. REAL values travel with 15 significant digits (the
    outbox's payload is SQLite's JSON), so floats agree to 1e-12 relative."""
    if isinstance(a, float) or isinstance(b, float):
        ok = isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            abs(a - b) <= 1e-12 * max(abs(a), abs(b), 1e-300)
        return [] if ok else [(path, a, b)]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [(path, sorted(a.keys() - b.keys()), sorted(b.keys() - a.keys()))]
        return [d for k in a for d in json_differences(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [(path, f"{len(a)} items", f"{len(b)} items")]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in json_differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [(path, a, b)]


def report_parts(path):
    """The report's page without its data, and the data (the JSON its page draws)."""
    page = open(path).read()
    head, rest = page.split('<script type="application/json" id="tracer-data">', 1)
    data, tail = rest.split("</script>", 1)
    data = json.loads(data)
    # Steps are rows of step_columns: as objects, a difference names its column.
    data["steps"] = [dict(zip(data["step_columns"], r)) for r in data["steps"]]
    return head + tail, data


def same(ctx, what, local, fleet, as_json=False):
    ctx.check(local[0] == fleet[0] == 0, f"{what}: exit local {local[0]} fleet {fleet[0]}: {fleet[2][-300:]}")
    if as_json:
        diff = json_differences(json.loads(local[1]), json.loads(fleet[1]))
        if diff:
            raise Failure(f"{what}: fleet --json differs from local (path, local, fleet): {diff[:4]}")
    elif local[1] != fleet[1]:
        diff = [(a, b) for a, b in zip(local[1].splitlines(), fleet[1].splitlines()) if a != b]
        raise Failure(f"{what}: fleet output differs from local; first differing lines "
                      f"(local, fleet): {diff[:3]}; lines {len(local[1].splitlines())} vs "
                      f"{len(fleet[1].splitlines())}")


@test
@plain_build_only("CI time: the shipper's and CLI's code run under ASan in their own tests")
def fleet_verbs_read_clickhouse_as_the_host_reads_its_database(ctx):
    """Two hosts' runs in one ClickHouse: `tracer --fleet CONFIG show|signals|explain|timeline|
    cost|recommend HOST:ID` prints what the host's own `tracer VERB ID` prints (text and --json), `report`
    writes the same HTML, `runs` lists both hosts with a HOST column and otherwise each
    host's own lines and --json rows, `idle` says which hosts stopped reporting and `idle
    HOST` is the host's own; with ClickHouse stopped each verb says so in one line and
    exits non-zero."""
    ch = clickhouse(ctx)
    ctx.fleet_ch = ch
    secret = f"user = {ch.user}\npassword = {ch.password}\n"
    cred = private_file(ctx, "ch.cred", secret, owner="nobody")  # the shipper's
    mine = private_file(ctx, "reader.cred", secret)  # the reader's own (root here)
    sink = f"clickhouse://127.0.0.1:{ch.http_port}/tracer"
    group = f"tracer-fleet-{uuid.uuid4().hex[:8]}"
    os.mkdir(f"{MEMCG}/{group}")
    try:
        recorded = {host: record_host(ctx, host, group, sink, cred) for host in HOSTS}
    finally:
        remove_cgroup(f"{MEMCG}/{group}")
    conf = private_file(ctx, "fleet.conf", f"[fleet]\nurl = {sink}\ncredentials = {mine}\n")
    for host, (db, rid) in recorded.items():
        name = f"{host}:{rid}"
        for verb in ("show", "signals", "explain", "timeline", "energy"):
            for fmt in ((), ("--json",)):
                same(ctx, f"{verb} {' '.join(fmt)} {name}", tracer(ctx, verb, "--db", db, *fmt, str(rid)),
                     tracer(ctx, "--fleet", conf, verb, *fmt, name), as_json=bool(fmt))
        # cost and recommend price the host at a given rate (the reader's machine is not
        # the run's host, so the fleet forms never ask a cloud's metadata service).
        for verb in (("cost", "--rate", "2.5", "--no-detect"), ("recommend", "--rate", "2.5", "--no-detect")):
            for fmt in ((), ("--json",)):
                same(ctx, f"{verb[0]} {' '.join(fmt)} {name}", tracer(ctx, *verb, "--db", db, *fmt, str(rid)),
                     tracer(ctx, "--fleet", conf, *verb, *fmt, name), as_json=bool(fmt))
        local_html, fleet_html = ctx.path(f"{host}-local.html"), ctx.path(f"{host}-fleet.html")
        local, fleet = (tracer(ctx, "report", "--db", db, "--html", local_html, str(rid)),
                        tracer(ctx, "--fleet", conf, "report", "--html", fleet_html, name))
        ctx.check(local[0] == fleet[0] == 0, f"report {name}: exit {local[0]} {fleet[0]}: {fleet[2][-300:]}")
        (lpage, ldata), (fpage, fdata) = report_parts(local_html), report_parts(fleet_html)
        ctx.check(lpage == fpage, f"report {name}: the same HTML around its data")
        # Files are not shipped (docs/shipping.md): a step's file list is the one gap.
        diff = [d for d in json_differences(ldata, fdata) if not d[0].endswith(".files") and d[0] != "$.file_paths"
                and not d[0].endswith(".generated_at")]
        ctx.check(not diff, f"report {name}: the same data (path, local, fleet): {diff[:4]}")
    energy_window_is_the_hosts_summed(ctx, conf, recorded)
    cost_window_is_the_hosts_summed(ctx, conf, recorded)
    # runs: both hosts, each row as its host lists it, plus the host.
    code, out, err = tracer(ctx, "--fleet", conf, "runs", "--json")
    ctx.check(code == 0, f"fleet runs: {code} {err}")
    fleet_rows = json.loads(out)["runs"]
    ctx.check(sorted(r["host"] for r in fleet_rows) == sorted(HOSTS), f"one run per host: {fleet_rows}")
    for host, (db, rid) in recorded.items():
        local_rows = json.loads(tracer(ctx, "runs", "--db", db, "--json")[1])["runs"]
        mine = [{k: v for k, v in r.items() if k != "host"} for r in fleet_rows if r["host"] == host]
        ctx.check(mine == local_rows, f"runs --json of {host}: fleet {mine} local {local_rows}")
    code, out, err = tracer(ctx, "--fleet", conf, "runs")
    lines = out.splitlines()
    ctx.check(code == 0 and lines[0].startswith("HOST "), f"fleet runs: a HOST column: {out}")
    width = lines[0].index("ID")
    for host, (db, rid) in recorded.items():
        local = tracer(ctx, "runs", "--db", db)[1].splitlines()
        rows = [ln[width:] for ln in lines[1:] if ln.startswith(host + " ")]
        notes = [ln for ln in lines[1:] if not any(ln.startswith(h + " ") for h in HOSTS)]
        fleet = [lines[0][width:]] + rows + notes
        ctx.check(fleet == local, f"runs of {host} minus HOST: fleet {fleet} local {local}")
    # idle: which hosts stopped reporting, against each host's own newest word; a host
    # whose collector row the test writes as just now is reporting.
    ch.query("INSERT INTO tracer.collector_stats (_host, _key, _version, hostname, last_seen_ns, final) "
             f"VALUES ('fleet-live', 's1', 1, 'live', {time.time_ns()}, 0)")
    code, out, err = tracer(ctx, "--fleet", conf, "idle", "--json")
    ctx.check(code == 0, f"fleet idle: {code} {err}")
    hosts = {h["host"]: h for h in json.loads(out)["hosts"]}
    ctx.check(set(hosts) == {*HOSTS, "fleet-live"}, f"fleet idle lists every host: {sorted(hosts)}")
    ctx.check(not hosts["fleet-live"]["silent"] and hosts["fleet-live"]["state"] == "reporting",
              f"a host heard just now is reporting: {hosts['fleet-live']}")
    for host, (db, rid) in recorded.items():
        last = max(ctx.one("SELECT max(last_seen_ns) FROM collector_stats", db=db),
                   ctx.one("SELECT coalesce(max(ts_ns), 0) FROM host_samples", db=db))
        ctx.check(hosts[host]["silent"] and "collector stopped" in hosts[host]["state"] and
                  hosts[host]["last_heard_ns"] == last,
                  f"{host} stopped its collector, last heard at {last}: {hosts[host]}")
        same(ctx, f"idle {host}", tracer(ctx, "idle", "--db", db, "--json"),
             tracer(ctx, "--fleet", conf, "idle", "--json", host), as_json=True)
        # Thresholds that make the host's quiet seconds idle, priced: the comparison then
        # holds spans and amounts, not two empty lists.
        judge = ("--min", "1s", "--cpu-below", "100", "--rate", "2.5", "--no-detect")
        local = tracer(ctx, "idle", "--db", db, "--json", *judge)
        spans = json.loads(local[1]).get("host_idle", []) if local[0] == 0 else []
        ctx.check(spans and all(p.get("usd", 0) > 0 for p in spans),
                  f"idle {host} {' '.join(judge)}: the host's own has priced idle spans: {local[1][:400]}")
        same(ctx, f"idle {host} {' '.join(judge)} --json", local,
             tracer(ctx, "--fleet", conf, "idle", "--json", *judge, host), as_json=True)
        same(ctx, f"idle {host} {' '.join(judge)}", tracer(ctx, "idle", "--db", db, *judge),
             tracer(ctx, "--fleet", conf, "idle", *judge, host))
    # The sweep: every host's idle time in one call, priced as on one host: each
    # host's part is what that host's own `tracer idle` says of its database.
    code, out, err = tracer(ctx, "--fleet", conf, "idle", "--sweep", "--json", "--rate", "2.5")
    ctx.check(code == 0, f"fleet idle sweep: {code} {err}")
    sweep = {h["host"]: h for h in json.loads(out)["hosts"]}
    for host, (db, rid) in recorded.items():
        ctx.check("idle" in sweep.get(host, {}), f"the sweep has {host}'s idle time: {sweep.get(host)}")
        same(ctx, f"idle sweep {host}", tracer(ctx, "idle", "--db", db, "--json", "--rate", "2.5"),
             (code, json.dumps(sweep[host]["idle"]), err), as_json=True)
    code, text, err = tracer(ctx, "--fleet", conf, "idle", "--sweep", "--rate", "2.5")
    ctx.check(code == 0 and all(f"\n{h} (" in text for h in recorded) and "Host idle" in text,
              f"fleet idle sweep, text: {code} {text[-500:]} {err}")
    # The URL itself, without the config file: the stock default user needs no password.
    code, out, err = tracer(ctx, "--fleet", sink, "show", "--json", f"{HOSTS[0]}:{recorded[HOSTS[0]][1]}")
    ctx.check(code == 0 and json.loads(out), f"--fleet URL: {code} {err}")
    # A bare id both hosts have is ambiguous; an unknown run is named.
    if recorded[HOSTS[0]][1] == recorded[HOSTS[1]][1]:
        code, out, err = tracer(ctx, "--fleet", conf, "show", str(recorded[HOSTS[0]][1]))
        ctx.check(code == 1 and "HOST:ID" in err, f"an id on two hosts is ambiguous: {code} {err}")
    code, out, err = tracer(ctx, "--fleet", conf, "show", "fleet-c:1")
    ctx.check(code == 1 and "no run 'fleet-c:1'" in err, f"unknown host: {code} {err}")
    # A verb that does not read the fleet yet refuses, never shows this host's database.
    code, out, err = tracer(ctx, "--fleet", conf, "status")
    ctx.check(code == 1 and "not available over the fleet" in err and not out, f"status: {code} {err}")
    pipeline_sized_from_every_host(ctx, conf, recorded)  # it renames a pipeline in the store
    host_without_capacity_is_said_and_left_out(ctx, ch, conf, recorded)  # it adds a host
    ch.stop()
    for verb in (("runs",), ("show", f"{HOSTS[0]}:1"), ("report", "--html", ctx.path("x.html"), f"{HOSTS[0]}:1"),
                 ("idle",), ("idle", HOSTS[0]), ("cost", "--since", "1d", "--rate", "1"),
                 ("recommend", "--pipeline", "p", "--rate", "1")):
        code, out, err = tracer(ctx, "--fleet", conf, *verb)
        ctx.check(code != 0 and len(err.strip().splitlines()) == 1 and "unreachable" in err,
                  f"{verb[0]} with ClickHouse stopped: exit {code}, stderr {err!r}")


def cost_window_is_the_hosts_summed(ctx, conf, recorded):
    """`--fleet cost --since 30d --by pipeline|user`: each host's entry is that host's own
    `tracer cost --since 30d --json` (the same rate; its window's ends aside, taken a moment
    apart), the fleet's total is the sum of the hosts' totals (to 1e-9 dollars) and each
    part the sum of that part over the hosts; the text names every host."""
    empty = private_file(ctx, "empty-cost.conf", "")
    for by in ("pipeline", "user"):
        args = ("cost", "--since", "30d", "--by", by, "--rate", "2.5", "--cost-conf", empty, "--no-detect")
        local = {host: json.loads(tracer(ctx, *args, "--db", db, "--json")[1])
                 for host, (db, _) in recorded.items()}
        code, out, err = tracer(ctx, "--fleet", conf, *args, "--json")
        ctx.check(code == 0, f"fleet cost --by {by}: {code} {err}")
        fleet = json.loads(out)
        hosts = {h["host"]: h["cost"] for h in fleet["hosts"]}
        ctx.check(set(hosts) == set(HOSTS), f"--by {by}: a row per host: {sorted(hosts)}")
        for host, doc in local.items():
            mine = {k: v for k, v in hosts.get(host, {}).items() if k not in ("from_ns", "to_ns")}
            theirs = {k: v for k, v in doc.items() if k not in ("from_ns", "to_ns")}
            diff = json_differences(theirs, mine)
            ctx.check(not diff, f"--by {by}: {host}'s row is its own cost --since (path, local, fleet): {diff[:4]}")
            ctx.check(doc["total_usd"] > 0 and doc["observed_ns"] > 0, f"{host} priced: {doc['total_usd']}")
        total = sum(d["total_usd"] for d in local.values())
        ctx.close(fleet["total_usd"], total, 1e-9, f"--by {by}: the fleet's total is the hosts' summed")
        ctx.close(fleet["idle_usd"], sum(d["idle_usd"] for d in local.values()), 1e-9, f"--by {by}: idle")
        ctx.check(fleet["observed_ns"] == sum(d["observed_ns"] for d in local.values()),
                  f"--by {by}: observed {fleet['observed_ns']}")
        want = {}
        for doc in local.values():
            for p in doc["breakdown"]:
                w = want.setdefault(p["key"], {"processes": 0, "cpu_ns": 0, "usd": 0.0})
                for k in w:
                    w[k] += p[k]
        got = {p["key"]: p for p in fleet["breakdown"]}
        ctx.check(set(got) == set(want), f"--by {by}: parts {sorted(got)} vs {sorted(want)}")
        for key, w in want.items():
            g = got.get(key, {})
            ctx.check(g.get("processes") == w["processes"] and g.get("cpu_ns") == w["cpu_ns"],
                      f"--by {by} {key}: processes/CPU {g.get('processes')}/{g.get('cpu_ns')} vs {w}")
            ctx.close(g.get("usd"), w["usd"], 1e-9, f"--by {by} {key}: usd")
        code, text, err = tracer(ctx, "--fleet", conf, *args)
        ctx.check(code == 0 and text.startswith("Fleet cost over the last 30d: $") and
                  all(f"\n{h} " in text for h in HOSTS), f"fleet cost, text: {code} {text[-600:]} {err}")


def host_without_capacity_is_said_and_left_out(ctx, ch, conf, recorded):
    """A host whose process rows reached the store but none of its host samples: `--fleet
    cost --since` prices the other hosts as before (exit 0, the same total as without it,
    to 1e-9 dollars), names it on stderr and as a `not priced` row, `skipped` in --json."""
    args = ("cost", "--since", "30d", "--rate", "2.5", "--cost-conf", private_file(ctx, "nocap.conf", ""),
            "--no-detect")
    code, out, err = tracer(ctx, "--fleet", conf, *args, "--json")
    before = json.loads(out)["total_usd"] if code == 0 else None
    now = time.time_ns()
    ch.query("INSERT INTO tracer.processes (_host, _key, _version, id, run_id, start_ns, end_ns) "
             f"VALUES ('fleet-bare', '1', 1, 1, 1, {now - 10**9}, {now})")
    code, out, err = tracer(ctx, "--fleet", conf, *args, "--json")
    doc = json.loads(out) if code == 0 else {}
    ctx.check(code == 0 and sorted(h["host"] for h in doc.get("hosts", [])) == sorted(HOSTS),
              f"the hosts with samples are priced: {code} {err} {[h['host'] for h in doc.get('hosts', [])]}")
    ctx.check([s["host"] for s in doc.get("skipped", [])] == ["fleet-bare"] and "fleet-bare" in err and
              "not priced" in err, f"the bare host is said: {doc.get('skipped')} {err!r}")
    ctx.close(doc.get("total_usd"), before, 1e-9, "the total leaves the bare host out")
    code, text, err = tracer(ctx, "--fleet", conf, *args)
    ctx.check(code == 0 and any(ln.startswith("fleet-bare ") and "not priced" in ln for ln in text.splitlines()),
              f"the text has its row: {code} {text[-400:]}")


def pipeline_sized_from_every_host(ctx, conf, recorded):
    """`--fleet recommend --pipeline P`: a pipeline whose runs are all on one host reads as
    that host's own `recommend --pipeline P` (text and --json); one with runs on both
    hosts counts the runs of both (each step's instances the sum of the hosts')."""
    args = ("recommend", "--rate", "2.5", "--no-detect")
    pipelines = {host: ctx.one("SELECT name FROM pipelines", db=db) for host, (db, _) in recorded.items()}
    for host, (db, _) in recorded.items():
        for fmt in ((), ("--json",)):
            same(ctx, f"recommend --pipeline {pipelines[host]} {' '.join(fmt)} ({host})",
                 tracer(ctx, *args, "--db", db, *fmt, "--pipeline", pipelines[host]),
                 tracer(ctx, "--fleet", conf, *args, *fmt, "--pipeline", pipelines[host]), as_json=bool(fmt))
    # Both hosts' scripts have the same name when the test's files share a directory; else
    # name one host's pipeline after the other's in the store, so it has runs on both.
    a, b = HOSTS
    ch_query = getattr(ctx, "fleet_ch").query
    if pipelines[a] != pipelines[b]:
        ch_query(f"ALTER TABLE tracer.runs UPDATE pipeline = '{pipelines[a]}' WHERE _host = '{b}'")
        for _ in range(100):  # a mutation: done in the background
            if ch_query(f"SELECT count() FROM tracer.runs WHERE _host = '{b}' AND pipeline != "
                        f"'{pipelines[a]}'").strip() == "0":
                break
            time.sleep(0.1)
    code, out, err = tracer(ctx, "--fleet", conf, *args, "--json", "--pipeline", pipelines[a])
    ctx.check(code == 0, f"recommend over two hosts: {code} {err}")
    both = {s["name"]: s["instances"] for s in json.loads(out)["steps"]}
    want = {}
    for host, (db, _) in recorded.items():
        doc = json.loads(tracer(ctx, *args, "--db", db, "--json", "--pipeline", pipelines[host])[1])
        for s in doc["steps"]:
            want[s["name"]] = want.get(s["name"], 0) + s["instances"]
    ctx.check(both == want and sum(want.values()) >= 2 * len(recorded),
              f"recommend --pipeline over two hosts counts both hosts' runs: {both} vs {want}")


def utc_day(ns):
    return time.strftime("%Y%m%d", time.gmtime(ns // 10**9))


@test
def fleet_retention_drops_whole_old_days(ctx):
    """The shipper's ClickHouse tables are partitioned by the UTC day of each record's
    time: every shipped process row sits in the partition of its start day as the host's
    own database has it. A copy of the shipped processes and host samples moved 40 days back (an
    INSERT at the sink) is what `tracer --fleet URL retention --days 30` drops, a day
    partition at a time; --dry-run lists it and drops nothing; the shipped rows all stay;
    tools (not partitioned by day) are said to be kept."""
    ch = clickhouse(ctx)
    cred = private_file(ctx, "ch.cred", f"user = {ch.user}\npassword = {ch.password}\n", owner="nobody")
    sink = f"clickhouse://127.0.0.1:{ch.http_port}/tracer"
    group = f"tracer-fleet-{uuid.uuid4().hex[:8]}"
    os.mkdir(f"{MEMCG}/{group}")
    try:
        db, _ = record_host(ctx, "fleet-r", group, sink, cred)
    finally:
        remove_cgroup(f"{MEMCG}/{group}")
    part_of = dict(ch.rows("SELECT name, partition FROM system.parts WHERE database = 'tracer' "
                           "AND table = 'processes' AND active"))
    start = {str(k): s for k, s in ctx.query("SELECT id, start_ns FROM processes", db=db)}
    at_sink = ch.rows("SELECT _key, _part FROM tracer.processes")
    wrong = [(k, part_of[p], utc_day(start[k])) for k, p in at_sink if part_of[p] != utc_day(start[k])]
    ctx.check(at_sink and not wrong, f"{len(at_sink)} process rows, each in its start day's partition: {wrong[:3]}")
    shift = 40 * 86400 * 10**9
    for table, times in (("processes", ("start_ns", "end_ns")), ("host_samples", ("ts_ns",))):
        cols = [c for c, in ch.rows(f"SELECT name FROM system.columns WHERE database = 'tracer' "
                                    f"AND table = '{table}'")]
        exprs = ", ".join("concat('old-', _key)" if c == "_key" else f"`{c}` - {shift}" if c in times else f"`{c}`"
                          for c in cols)
        ch.query(f"INSERT INTO tracer.{table} SELECT {exprs} FROM tracer.{table}")

    def counts():
        return {t: tuple(int(x) for x in ch.rows(f"SELECT countIf(_key LIKE 'old-%'), countIf(_key NOT LIKE "
                                                 f"'old-%') FROM tracer.{t}")[0]) for t in ("processes", "host_samples")}
    before = counts()
    ctx.check(before["processes"][0] == before["processes"][1] == len(at_sink) and
              before["host_samples"][0] == before["host_samples"][1] > 0, f"old copies at the sink: {before}")
    old_days = {utc_day(start[k] - shift) for k, _ in at_sink}
    code, out, err = tracer(ctx, "--fleet", sink, "retention", "--days", "30", "--dry-run")
    ctx.check(code == 0 and all(f"would drop processes {d}" in out for d in old_days) and counts() == before,
              f"--dry-run lists the old days {sorted(old_days)} and drops nothing: {code} {out} {err}")
    code, out, err = tracer(ctx, "--fleet", sink, "retention", "--days", "30")
    after = counts()
    ctx.check(code == 0 and after["processes"] == (0, len(at_sink)) and after["host_samples"] == (0, before["host_samples"][1]),
              f"retention dropped the old copies, kept every shipped row: {code} {after} {err}")
    ctx.check("tools: not partitioned by day, kept" in out, f"tools kept: {out}")
    left = {p for p, in ch.rows("SELECT DISTINCT partition FROM system.parts WHERE database = 'tracer' AND active")}
    cutoff = utc_day(time.time_ns() - 30 * 86400 * 10**9)
    # 19700101 holds records with no time (age unknown): kept, and said so.
    ctx.check(not [p for p in left if p.isdigit() and len(p) == 8 and "19700101" < p < cutoff],
              f"no day partition before {cutoff} is left: {sorted(left)}")


def energy_window_is_the_hosts_summed(ctx, conf, recorded):
    """`--fleet energy --since 30d --by pipeline|user`: each part is the sum of that part
    over every host's own `tracer energy --since 30d` (the same coefficients), processes and
    CPU exactly (to 2 ns of rounding), Wh and g CO2e to 1e-9; the text has the same model
    lines and the summed rows. By pipeline each host's run is its own part (the script's
    name); by user both hosts' are root's, so that part merges."""
    econf = private_file(ctx, "energy.conf", "[energy]\ncpu-watts-per-core = 10\nregion = eu-west-1\n")
    empty = private_file(ctx, "empty-cost.conf", "")
    for by in ("pipeline", "user"):
        args = ("energy", "--since", "30d", "--by", by, "--energy-conf", econf, "--cost-conf", empty,
                "--no-detect")
        local = [json.loads(tracer(ctx, *args, "--db", db, "--json")[1]) for db, _ in recorded.values()]
        code, out, err = tracer(ctx, "--fleet", conf, *args, "--json")
        ctx.check(code == 0, f"fleet energy --by {by}: {code} {err}")
        fleet = json.loads(out)
        ctx.check(fleet["model"] == local[0]["model"] == local[1]["model"],
                  f"--by {by}: the same model: {fleet['model']} vs {local[0]['model']}")
        want = {}
        for doc in local:
            for p in doc["parts"]:
                w = want.setdefault(p["key"], {"processes": 0, "cpu_ns": 0, "energy_wh": 0.0, "co2e_g": 0.0,
                                               "memory_gib_hours": 0.0})
                for k in w:
                    w[k] += p[k]
        got = {p["key"]: p for p in fleet["parts"]}
        ctx.check(set(got) == set(want) and len(want) >= 1, f"--by {by}: parts {sorted(got)} vs {sorted(want)}")
        ctx.check(sum(w["processes"] for w in want.values()) >= 10, f"--by {by}: both hosts' processes: {want}")
        for key, w in want.items():
            g = got.get(key, {})
            ctx.check(g.get("processes") == w["processes"] and abs(g.get("cpu_ns", 0) - w["cpu_ns"]) <= 2,
                      f"--by {by} {key}: processes/CPU {g.get('processes')}/{g.get('cpu_ns')} vs {w}")
            for k in ("energy_wh", "co2e_g", "memory_gib_hours"):
                ctx.close(g.get(k), w[k], 1e-9 * abs(w[k]) + 1e-15, f"--by {by} {key}: {k}")
        text = tracer(ctx, "--fleet", conf, *args)[1].splitlines()
        local_text = tracer(ctx, *args, "--db", recorded[HOSTS[0]][0])[1].splitlines()
        ctx.check(text[1:7] == local_text[1:7],
                  f"--by {by}: the model's lines and the header as local's: {text[:7]} vs {local_text[:7]}")
        rows = {ln[:40].rstrip(): int(ln[40:].split()[0]) for ln in text[7:] if ln.strip()}
        ctx.check(rows == {k: w["processes"] for k, w in want.items()}, f"--by {by}: text rows {rows}")
