"""make fleet-cutoff-test: host h2 of the nspawn fleet (machines.py) cut off from
ClickHouse for FLEET_CUTOFF_S seconds (default 600) while it runs work, then restored.

The cut is a real one: the machines share the host's network namespace, so an iptables
rule on the host drops every TCP packet to ClickHouse's port sent by a socket of h2's
cgroup2 subtree (/machine.slice/machine-NAME.scope: -m cgroup --path matches the
subtree). h2's shipper sees connection failures (curl's connect timeout); h1, h3 and the
fleet verbs, read on h1, still reach ClickHouse. Checked before the cut: a TCP connect
from inside h2 to ClickHouse fails and one from h1 succeeds.

Work on h2: run cut-long (a burn and a sleep every second, from 20 s before the cut to
30 s after it: it keeps starting processes across the cut) and cut-short (starts and
ends inside the cut, exit 3, so its status is not "ok").

During the cut: nothing new of h2 reaches the store; once the fleet's 3-minute silence
has passed (cuts of at least 210 s), `--fleet idle` says h2 stopped reporting (h1 and
h3 do not) and cut-long reads "unknown ... the records of h2 are missing" in `--fleet
runs` and `show` (records_missing "h2", watched false), not running or ok. The
shipper's journal shows its retries: in the cut's second half no gap between two
failed attempts exceeds the retry cap plus one request's timeout.

After the restore, within RESTORE_BOUND_S: cut-short is in the store, and every sample
h2 took before the restore is there. Then, with h2's collector and aggregator stopped
(its database fixed): per table (runs, steps, processes, samples) h2's local rows are
the store's rows of h2 under FINAL (not withdrawn), key for key, once each; and both
runs' status, end and process count as `--fleet show` reads them equal h2's own
`tracer show`, and `--fleet runs` gives h2's status."""
import json
import os
import subprocess
import time

from harness import Failure, test
from machines import CLEAN_ENV
from test_fleet_machines import boot_fleet, fleet_json

LEAD_S, TAIL_S = 20, 30
SILENT_S = 180  # FLEET_SILENT_NS: a host with nothing new for 3 minutes stopped reporting
# The shipper's defaults (shipper/options.c): --retry-max-ms 60000, --timeout-ms 30000.
RETRY_CAP_S, REQUEST_TIMEOUT_S = 60, 30
# The restore to everything delivered: one backoff wait at the cap, one request that may
# still be timing out, and 30 s to send the backlog.
RESTORE_BOUND_S = RETRY_CAP_S + REQUEST_TIMEOUT_S + 30
TABLES = {"runs": "id", "steps": "id", "processes": "id", "samples": "process_id || ':' || ts_ns"}
# What h2 holds that its shipper sends: a process still running outside any run (a daemon
# of the machine, the shipper itself) ships when it ends, not before (docs/shipping.md,
# "Live rows and tombstones"); the aggregator stopped, it stays unsent.
SHIPPED = {"processes": "WHERE state != 'running' OR run_id IS NOT NULL"}

LONG_SH = "end=$((SECONDS + {s})); while [ $SECONDS -lt $end ]; do /fleet/bin/burn 0.05; sleep 1; done"
SHORT_SH = "for i in $(seq {n}); do /fleet/bin/burn 0.2; sleep 0.5; done; exit 3"


class Cut:
    """The iptables rule that drops MACHINE's TCP to ClickHouse's port."""

    def __init__(self, machine, port):
        self.spec = ["OUTPUT", "-p", "tcp", "-d", "127.0.0.1", "--dport", str(port),
                     "-m", "cgroup", "--path", f"/{machine.cgroup}", "-j", "DROP"]
        self.on = False

    def apply(self):
        p = subprocess.run(["iptables", "-w", "-I", *self.spec], capture_output=True, text=True)
        if p.returncode != 0:
            raise Failure(f"iptables -I {' '.join(self.spec)}: {p.stderr.strip()}")
        self.on = True

    def restore(self):
        if self.on:
            subprocess.run(["iptables", "-w", "-D", *self.spec], capture_output=True, check=True)
            self.on = False


def in_machine(m, *cmd):
    """CMD in machine M's own cgroup (a scope of its systemd), in the background."""
    return subprocess.Popen([*m.enter(), *CLEAN_ENV, "systemd-run", "--scope", "--quiet", "--", *cmd],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def can_connect(m, port):
    return m.sh(f"timeout 5 bash -c 'echo > /dev/tcp/127.0.0.1/{port}'", check=False).returncode == 0


def wait_for(what, cond, timeout, step=2, fail=True):
    """Seconds until COND() is true; after TIMEOUT a Failure (or None, FAIL false)."""
    t0 = time.time()
    while not cond():
        if time.time() - t0 > timeout:
            if not fail:
                return None
            raise Failure(f"{what}: not within {timeout} s")
        time.sleep(step)
    return time.time() - t0


def store_count(ch, host, table, where=""):
    return int(ch.query(f"SELECT count() FROM tracer.{table} FINAL WHERE _host = '{host}' "
                        f"AND _withdrawn = 0 {where}").strip())


def local_count(ctx, m, table):
    return ctx.one(f"SELECT count(*) FROM {table} {SHIPPED.get(table, '')}", db=local_db(m))


def local_db(m):
    return os.path.join(m.root, "var/lib/tracer/tracer.db")


def silent_hosts(h1, conf):
    return {h["host"]: h.get("silent") for h in fleet_json(None, h1, conf, "idle")["hosts"]}


def own_run(m, name):
    runs = [r for r in json.loads(m.run("tracer", "runs", "--json").stdout)["runs"] if r.get("name") == name]
    if len(runs) != 1:
        raise Failure(f"{m.host} recorded run {name} once: {runs}")
    return runs[0]["id"]


def check_silent(ctx, fleet, h1, conf, h2, long_id, cut_at, cut_s):
    """Past the fleet's 3 minutes: h2 stopped reporting, its open run reads unknown."""
    if cut_s < SILENT_S + 30:
        print(f"    (a {cut_s} s cut is shorter than the fleet's {SILENT_S} s silence: not checked)", flush=True)
        return
    time.sleep(max(0, cut_at + SILENT_S + 2 - time.time()))
    waited = wait_for("h2 stopped reporting in --fleet idle", lambda: silent_hosts(h1, conf).get(h2.machine_id),
                      cut_at + cut_s - 15 - time.time())
    silent = silent_hosts(h1, conf)
    print(f"    h2 silent in --fleet idle {time.time() - cut_at:.0f} s into the cut", flush=True)
    others = {fleet.host_of(h): s for h, s in silent.items() if h != h2.machine_id}
    ctx.check(others == {"h1": False, "h3": False}, f"during the cut h1 and h3 still report: {others}")
    ctx.check(waited < 20, f"h2 silent within 20 s of the fleet's {SILENT_S} s: {waited:.0f} s later")
    run = f"{h2.machine_id}:{long_id}"
    doc = fleet_json(ctx, h1, conf, "show", run).get("run") or {}
    ctx.check(doc.get("records_missing") == "h2" and doc.get("watched") is False,
              f"--fleet show --json: cut-long's records_missing is h2, not watched: "
              f"{ {k: doc.get(k) for k in ('status', 'watched', 'records_missing')} }")
    for verb in (("runs",), ("show", run)):
        p = h1.run("tracer", "--fleet", conf, *verb, timeout=120)
        said = " ".join(ln for ln in p.stdout.splitlines() if verb[0] == "show" or "cut-long" in ln
                        or "records of" in ln)
        said = " ".join(said.split())
        ctx.check(p.returncode == 0 and "unknown" in said and "records of h2 are missing" in said
                  and " ok " not in said and (verb[0] == "show" or " running " not in said),
                  f"--fleet {verb[0]} during the cut: cut-long unknown, h2's records missing: {p.stdout[-800:]}")
    rows = [r for r in fleet_json(ctx, h1, conf, "runs")["runs"] if r.get("host") == h2.machine_id]
    ctx.check([r.get("name") for r in rows if r.get("watched") is False] == ["cut-long"],
              f"--fleet runs --json: h2's one run in the store, cut-long, unwatched: {rows}")


def shipper_failures(h2, since):
    """Epoch seconds of each failed delivery h2's shipper logged since SINCE."""
    p = h2.run("journalctl", "-u", "tracer-shipper", "-o", "short-unix", "--no-pager", f"--since=@{int(since)}")
    return [float(ln.split()[0]) for ln in p.stdout.splitlines() if "delivery failed" in ln]


def check_retries(ctx, h2, cut_at, restored_at):
    fails = [t for t in shipper_failures(h2, cut_at) if t <= restored_at + 1]
    half = [t for t in fails if t >= (cut_at + restored_at) / 2]
    gaps = [b - a for a, b in zip(half, half[1:])]
    bound = RETRY_CAP_S + REQUEST_TIMEOUT_S + 5
    short = restored_at - cut_at < 2 * bound  # too short a cut for two failures in its second half
    ctx.check(fails and (short or (gaps and max(gaps) <= bound)),
              f"the shipper kept retrying through the cut: {len(fails)} failures, gaps in its second half "
              f"{[round(g) for g in gaps]} s (each at most the cap {RETRY_CAP_S} s + a request {REQUEST_TIMEOUT_S} s)")
    last = restored_at - fails[-1] if fails else None
    print(f"    shipper: {len(fails)} failed deliveries in the cut; second-half gaps "
          f"max {max(gaps or [0]):.0f} s, mean {sum(gaps) / max(len(gaps), 1):.0f} s; last failure "
          f"{last if last is None else round(last)} s before the restore", flush=True)


def compare_tables(ctx, ch, h2):
    """h2's local rows are the store's rows of h2 under FINAL, key for key, once each."""
    counts = {}
    for table, key in TABLES.items():
        local = {str(k) for (k,) in ctx.query(f"SELECT {key} FROM {table} {SHIPPED.get(table, '')}",
                                                db=local_db(h2))}
        store = [k for (k,) in ch.rows(f"SELECT _key FROM tracer.{table} FINAL WHERE _host = '{h2.machine_id}' "
                                       "AND _withdrawn = 0")]
        every = int(ch.query(f"SELECT count() FROM tracer.{table} FINAL WHERE _host = '{h2.machine_id}'").strip())
        keys = int(ch.query(f"SELECT uniqExact(_key) FROM tracer.{table} WHERE _host = '{h2.machine_id}'").strip())
        only_local = sorted(local - set(store))[:5]
        about = [ctx.query(f"SELECT * FROM {table} WHERE {key} = ?", k, db=local_db(h2)) for k in only_local[:2]]
        ctx.check(len(store) == len(set(store)) and set(store) == local,
                  f"{table}: h2 holds {len(local)}, the store {len(store)} ({len(set(store))} keys); only local "
                  f"{only_local} {about}, only in the store {sorted(set(store) - local)[:5]}")
        ctx.check(every == keys, f"{table}: {every} rows of h2 under FINAL for {keys} keys")
        counts[table] = (len(local), len(store))
    return counts


def check_runs(ctx, h1, conf, h2, ids):
    """Each run as the fleet reads it is as h2's own tracer shows it."""
    listed = {r["id"]: r for r in fleet_json(ctx, h1, conf, "runs")["runs"] if r.get("host") == h2.machine_id}
    for name, rid in ids.items():
        own = json.loads(h2.run("tracer", "show", "--json", str(rid)).stdout)["run"]
        fleet = fleet_json(ctx, h1, conf, "show", f"{h2.machine_id}:{rid}")["run"]
        got = {k: fleet.get(k) for k in ("status", "end_ns", "processes")}
        want = {k: own.get(k) for k in ("status", "end_ns", "processes")}
        ctx.check(got == want and own.get("end_ns") and "records_missing" not in fleet,
                  f"{name}: --fleet show {got} vs h2's own tracer show {want}")
        ctx.check((listed.get(rid) or {}).get("status") == own.get("status"),
                  f"{name}: --fleet runs status {(listed.get(rid) or {}).get('status')} vs h2's {own.get('status')}")
        print(f"    {name}: h2 and the fleet read {want}", flush=True)


def before_restore(ctx, ch, h2, at):
    """h2's samples taken before AT: (local count, store count)."""
    local = ctx.one("SELECT count(*) FROM samples WHERE ts_ns < ?", at, db=local_db(h2))
    return local, store_count(ch, h2.machine_id, "samples", f"AND ts_ns < {at}")


def cut_off(ctx, fleet, ch, h1, conf, cut_s):
    """The cut and its work: returns (the runs' ids, when the cut began and ended)."""
    h2 = fleet.machines["h2"]
    cut = Cut(h2, ch.http_port)
    ctx.cleanups.append(cut.restore)
    long = in_machine(h2, "tracer", "run", "--run", "cut-long", "--", "bash", "-c",
                      LONG_SH.format(s=LEAD_S + cut_s + TAIL_S))
    ctx.procs.append(long)
    wait_for("cut-long running in the store", lambda: ch.rows(
        f"SELECT 1 FROM tracer.runs FINAL WHERE _host = '{h2.machine_id}' AND name = 'cut-long' "
        "AND status = 'running'"), 60)
    time.sleep(max(0, LEAD_S - 5))
    cut.apply()
    cut_at = time.time()
    ctx.check(not can_connect(h2, ch.http_port) and can_connect(h1, ch.http_port),
              "the cut: a connect from inside h2 to ClickHouse fails, one from h1 succeeds")
    print(f"    h2 cut off from ClickHouse for {cut_s} s", flush=True)
    time.sleep(min(30, cut_s / 6))
    short = in_machine(h2, "tracer", "run", "--run", "cut-short", "--", "bash", "-c",
                       SHORT_SH.format(n=max(5, min(20, cut_s // 12))))
    ctx.procs.append(short)
    short.wait(timeout=cut_s)
    ctx.check(short.returncode == 3, f"cut-short ended inside the cut with its exit 3: {short.returncode}")
    frozen = {t: store_count(ch, h2.machine_id, t) for t in TABLES}
    ids = {"cut-long": own_run(h2, "cut-long"), "cut-short": own_run(h2, "cut-short")}
    check_silent(ctx, fleet, h1, conf, h2, ids["cut-long"], cut_at, cut_s)
    time.sleep(max(0, cut_at + cut_s - time.time()))
    now = {t: store_count(ch, h2.machine_id, t) for t in TABLES}
    ctx.check(now == frozen and not ch.rows(f"SELECT 1 FROM tracer.runs FINAL WHERE _host = '{h2.machine_id}' "
                                            "AND name = 'cut-short'"),
              f"nothing of h2 reached the store during the cut (cut-short absent): {frozen} then {now}")
    cut.restore()
    restored_at = time.time()
    check_retries(ctx, h2, cut_at, restored_at)
    return ids, long, cut_at, restored_at


@test
def fleet_host_cut_off_then_back(ctx):
    cut_s = int(os.environ.get("TRACER_FLEET_CUTOFF_S") or 600)
    t0 = time.time()
    ch, fleet = boot_fleet(ctx, "fleet-cutoff-test")
    conf = fleet.fleet_config(ch)
    h1, h2 = fleet.machines["h1"], fleet.machines["h2"]
    wait_for("three hosts reporting", lambda: list(silent_hosts(h1, conf).values()) == [False] * 3, 90)
    print(f"    fleet up in {time.time() - t0:.0f} s", flush=True)
    ids, long, cut_at, restored_at = cut_off(ctx, fleet, ch, h1, conf, cut_s)
    short_s = wait_for("cut-short at the sink after the restore", lambda: ch.rows(
        f"SELECT 1 FROM tracer.runs FINAL WHERE _host = '{h2.machine_id}' AND name = 'cut-short' "
        "AND status != 'running'"), RESTORE_BOUND_S + 60, step=1)
    at = int((restored_at - 10) * 1e9)  # samples held (a fork child's, up to 5 s) are queued by then
    backlog_s = wait_for("h2's samples before the restore at the sink", lambda: len(set(before_restore(
        ctx, ch, h2, at))) == 1, RESTORE_BOUND_S + 60, step=1) + short_s
    ctx.check(backlog_s <= RESTORE_BOUND_S, f"the backlog delivered {backlog_s:.0f} s after the restore "
              f"(bound {RESTORE_BOUND_S} s: the retry cap {RETRY_CAP_S} s + a request + 30 s)")
    print(f"    after the restore: cut-short at the sink in {short_s:.1f} s, every sample of the cut in "
          f"{backlog_s:.1f} s ({before_restore(ctx, ch, h2, at)[0]} samples taken before it)", flush=True)
    long.wait(timeout=LEAD_S + TAIL_S + 120)
    ctx.check(long.returncode == 0, f"cut-long ended with its exit 0: {long.returncode}")
    h2.run("systemctl", "stop", "tracer-collector", "tracer-aggregator", check=True)
    drained = wait_for("h2's stopped database all in the store", lambda: all(
        local_count(ctx, h2, t) == store_count(ch, h2.machine_id, t) for t in TABLES),
        RESTORE_BOUND_S, fail=False)
    counts = compare_tables(ctx, ch, h2)
    unsent = ctx.one("SELECT count(*) FROM processes WHERE state = 'running' AND run_id IS NULL", db=local_db(h2))
    print(f"    h2's database stopped {time.time() - restored_at:.0f} s after the restore, in the store "
          f"{drained if drained is None else round(drained)} s later; (local, store under FINAL): {counts}; "
          f"{unsent} processes still running outside a run, not sent until they end", flush=True)
    check_runs(ctx, h1, conf, h2, ids)
    during = ctx.one("SELECT count(*) FROM processes WHERE run_id = ? AND start_ns BETWEEN ? AND ?",
                     ids["cut-long"], int(cut_at * 1e9), int(restored_at * 1e9), db=local_db(h2))
    in_store = store_count(ch, h2.machine_id, "processes", f"AND run_id = {ids['cut-long']} AND start_ns "
                           f"BETWEEN {int(cut_at * 1e9)} AND {int(restored_at * 1e9)}")
    ctx.check(during > 0 and in_store == during, f"cut-long's processes started during the cut: h2 {during}, "
              f"the store {in_store}")
    print(f"    cut-long started {during} processes during the cut, all in the store; test {time.time() - t0:.0f} s",
          flush=True)
