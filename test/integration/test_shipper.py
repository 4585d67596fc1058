"""The outbox and tracer-shipper against a real ClickHouse (started by the test on
127.0.0.1) and a local HTTP test server for the generic sink and fault injection.
Every check compares what arrived with the local SQLite database: counts per
table exact, nothing twice."""
import gzip
import http.server
import json
import os
import pwd
import random
import signal
import subprocess
import sys
import threading
import time

from clickhouse import ClickHouse
from harness import Failure, plain_build_only, start_daemons, test, wait_for_socket

# Finished records per shipped table, as the local database has them.
FINISHED = {
    "processes": "SELECT count(*) FROM processes WHERE state != 'running'",
    "samples": "SELECT count(*) FROM samples",
    "host_samples": "SELECT count(*) FROM host_samples",
    "runs": "SELECT count(*) FROM runs WHERE status IS NOT NULL AND status != 'running'",
    "steps": "SELECT count(*) FROM steps WHERE status != 'running'",
    "signals": "SELECT count(*) FROM signals WHERE active = 0",
    "collector_stats": "SELECT count(*) FROM collector_stats WHERE final = 1",
}


def credentials(ctx, text, owner="nobody"):
    path = ctx.path("sink.cred")
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)
    os.chown(path, pwd.getpwnam(owner).pw_uid, -1)
    return path


def clickhouse(ctx, name="ch"):
    if not ClickHouse.available():
        raise Failure("clickhouse-server is not installed (deploy/install-deps.sh tests)")
    ch = ClickHouse(ctx.path(name))
    ch.start()
    ctx.cleanups.append(ch.stop)
    return ch


def workload(ctx, sock, db, name, burn_ms=1500, storm=200):
    script = ctx.path(f"{name}.sh")
    with open(script, "w") as f:
        f.write("#!/bin/bash\n"
                f"{ctx.helper('cpuburn')} {burn_ms} &\n"
                f"{ctx.helper('storm')} {storm} 2 /bin/true > /dev/null\n"
                "gzip -c /etc/services > /dev/null\n"
                "bash -c 'exit 3' || true\n"
                "wait\n")
    os.chmod(script, 0o755)
    p = subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", name, "--", script],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise Failure(f"workload {name}: {p.returncode} {p.stderr[-500:]}")


def state_db(ctx):
    """The shipper's own database (progress, dead letters, health)."""
    return ctx.path("shipper-state.db")


def shipping_daemons(ctx):
    """The daemons, the aggregator queueing for a shipper: (sock, db, agg, col)."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db, extra_agg=("--outbox-mib", "64", "--shipper-state", state_db(ctx)))
    return sock, db, agg, col


def pending(ctx, db):
    """Outbox records the shipper has not delivered yet (by its watermark)."""
    through = 0
    if os.path.exists(state_db(ctx)):
        rows = ctx.query("SELECT value FROM shipper_state WHERE key = 'delivered_through'", db=state_db(ctx))
        through = int(rows[0][0]) if rows else 0
    return ctx.one("SELECT count(*) FROM outbox WHERE id > ?", through, db=db)


def shipper(ctx, db, sink, *extra, once=True, wait=True, cred=None):
    args = [ctx.bin("tracer-shipper"), "--db", db, "--state", state_db(ctx), "--sink", sink, "--user", "nobody",
            *extra]
    if cred:
        args += ["--credentials", cred]
    if once:
        args.append("--once")
    p = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    ctx.procs.append(p)
    if not wait:
        return p
    _, err = p.communicate(timeout=300)
    return p.returncode, err


# What runs now is shipped too (a live copy that the final row replaces): finished, at the sink.
FINISHED_AT_SINK = {
    "processes": "state != 'running'",
    "runs": "status IS NOT NULL AND status != 'running'",
    "steps": "status != 'running'",
}


def compare_counts(ctx, ch, db, host=None):
    """Per table: finished rows in ClickHouse (FINAL) == their distinct keys == finished
    local rows; every key at the sink is one row under FINAL."""
    for table, sql in FINISHED.items():
        conds = [c for c in (f"_host = '{host}'" if host else "", FINISHED_AT_SINK.get(table, "")) if c]
        where = ("WHERE " + " AND ".join(conds)) if conds else ""
        local = ctx.one(sql, db=db)
        final = int(ch.query(f"SELECT count() FROM tracer.{table} FINAL {where}").strip())
        keys = int(ch.query(f"SELECT uniqExact(_key) FROM tracer.{table} FINAL {where}").strip())
        ctx.check(final == keys == local, f"{table}: ClickHouse {final} rows, {keys} keys, local {local}")
        host_only = f"WHERE _host = '{host}'" if host else ""
        every = int(ch.query(f"SELECT count() FROM tracer.{table} FINAL {host_only}").strip())
        distinct = int(ch.query(f"SELECT uniqExact(_key) FROM tracer.{table} {host_only}").strip())
        ctx.check(every == distinct, f"{table}: {every} rows under FINAL for {distinct} keys")


def stop_daemons(ctx, agg, col):
    ctx.stop(col)
    ctx.stop(agg)


@test
@plain_build_only("CI time: the shipper's code runs under ASan in the soak and outbox tests")
def shipper_delivers_everything_to_clickhouse(ctx):
    """Happy path, then the sink goes down while records keep coming, then it comes
    back: everything arrives, nothing twice, with credentials from a 0600 file. The
    runs table was made by an older tracer (without the v10 and v11 columns): the
    shipper adds them and their values arrive."""
    ch = clickhouse(ctx)
    ch.query("CREATE DATABASE tracer")
    ch.query("CREATE TABLE tracer.runs (_host String, _key String, _version UInt64, id Nullable(Int64), "
             "name Nullable(String)) ENGINE = ReplacingMergeTree(_version) ORDER BY (_host, _key)")
    sock, db, agg, col = shipping_daemons(ctx)
    workload(ctx, sock, db, "first")
    cred = credentials(ctx, f"user = {ch.user}\npassword = {ch.password}\n")
    sink = f"clickhouse://127.0.0.1:{ch.http_port}/tracer"
    # A live shipper delivers while records arrive.
    live = shipper(ctx, db, sink, "--batch-age-ms", "200", once=False, wait=False, cred=cred)
    time.sleep(3)
    ch.stop()  # the sink goes away ...
    workload(ctx, sock, db, "during-outage")
    time.sleep(2)
    state = dict(ctx.query("SELECT key, value FROM shipper_state", db=state_db(ctx)))
    ctx.check("last_error" in state, f"the outage is visible: {state}")
    st = subprocess.run([ctx.bin("tracer"), "status", "--db", db, "--shipper-state", state_db(ctx), "--json"],
                        capture_output=True, text=True, timeout=30)
    doc = json.loads(st.stdout) if st.stdout.startswith("{") else {}
    ship = doc.get("shipping", {})
    ctx.check(ship.get("pending_records", 0) > 0 and ship.get("last_error"),
              f"tracer status shows the backlog and the error: {ship}")
    ch.start()  # ... and comes back
    stop_daemons(ctx, agg, col)
    deadline = time.time() + 90
    while time.time() < deadline and pending(ctx, db) > 0:
        time.sleep(0.5)
    ctx.check(pending(ctx, db) == 0, "the live shipper delivered the whole outbox")
    live.send_signal(signal.SIGTERM)
    live.communicate(timeout=30)
    compare_counts(ctx, ch, db)
    names = {r[0] for r in ch.rows("SELECT name FROM tracer.runs FINAL")}
    ctx.check({"first", "during-outage"} <= names, f"both runs arrived: {names}")
    import platform
    got = {(r[0], r[1]) for r in ch.rows("SELECT name, arch FROM tracer.runs FINAL")}
    ctx.check({("first", platform.machine()), ("during-outage", platform.machine())} <= got,
              f"columns added since the table was made arrive too: {got}")
    images = ch.rows("SELECT count() FROM tracer.runs FINAL WHERE images > 0")
    ctx.check(int(images[0][0]) >= 2, f"runs.images arrived: {images}")
    # The credentials file must be the shipper's own and private.
    os.chmod(cred, 0o644)
    rc, err = shipper(ctx, db, sink, cred=cred)
    ctx.check(rc == 1 and "mode 0600" in err, f"a readable credentials file is refused: {rc} {err[-300:]}")


@test
def shipper_killed_repeatedly_loses_and_duplicates_nothing(ctx):
    """kill -9 the shipper in the middle of uploads, five times; after a final run
    the results in ClickHouse are exact."""
    ch = clickhouse(ctx)
    sock, db, agg, col = shipping_daemons(ctx)
    workload(ctx, sock, db, "crashy", burn_ms=3000, storm=3000)
    stop_daemons(ctx, agg, col)
    total = pending(ctx, db)
    cred = credentials(ctx, f"user = {ch.user}\npassword = {ch.password}\n")
    sink = f"clickhouse://127.0.0.1:{ch.http_port}/tracer"
    rnd = random.Random(42)
    firsts = []

    def inserts():  # ClickHouse's own count of INSERT queries it has run
        return int(ch.query("SELECT sum(value) FROM system.events WHERE event = 'InsertQuery'").strip() or 0)

    for _ in range(5):
        # Kill only once this shipper has delivered something: a fixed delay said
        # nothing on a slow machine, where the kills all fell before the first upload.
        # Its state is read only after its first INSERT reached the sink: reading it
        # while the shipper creates it made that start fail (SQLITE_READONLY).
        before, left_before, started = inserts(), pending(ctx, db), time.time()
        p = shipper(ctx, db, sink, "--batch-records", "10", once=False, wait=False, cred=cred)
        while inserts() == before and p.poll() is None and time.time() - started < 60:
            time.sleep(0.01)
        while pending(ctx, db) == left_before and p.poll() is None and time.time() - started < 60:
            time.sleep(0.01)
        firsts.append(time.time() - started)
        time.sleep(rnd.uniform(0, 0.3))
        p.kill()
        _, err = p.communicate(timeout=30)
        ctx.check(p.returncode == -signal.SIGKILL,
                  f"the shipper was still running when killed: {p.returncode} {err[-400:]}")
    left = pending(ctx, db)
    print(f"       first delivery after each start: {', '.join(f'{t:.2f}' for t in firsts)} s; {left} of {total} left")
    ctx.check(0 < left < total, f"the kills happened mid-way: {left} of {total} left")
    rc, err = shipper(ctx, db, sink, cred=cred)
    ctx.check(rc == 0, f"final --once: {rc} {err[-300:]}")
    compare_counts(ctx, ch, db)


class Collector(http.server.BaseHTTPRequestHandler):
    """A generic sink: stores records by (host, kind, key, version); fault modes."""
    records = {}
    requests = []
    batches = []  # (Idempotency-Key, the outbox ids it carried)
    mode = "ok"
    lock = threading.Lock()

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        lines = [json.loads(line) for line in body.decode().splitlines() if line]
        with self.lock:
            Collector.requests.append((time.time(), self.headers.get("Idempotency-Key"), len(lines)))
            Collector.batches.append((self.headers.get("Idempotency-Key"),
                                      tuple(sorted(r["version"] for r in lines))))
            n = len(Collector.requests)
        if Collector.mode == "poison" and any(r["kind"] == "runs" and r["record"]["name"] == "poison"
                                              for r in lines):
            self.send_response(400)
            self.end_headers()
            self.wfile.write(b"run 'poison' is not acceptable")
            return
        if Collector.mode == "retry-after" and n == 1:
            self.send_response(503)
            self.send_header("Retry-After", "2")
            self.end_headers()
            return
        if Collector.mode == "retry-after":
            time.sleep(1.5)  # a slow sink, within the shipper's timeout
        if Collector.mode == "too-slow" and n <= 3:
            with self.lock:  # it took the records, but answers after the shipper gave up
                for r in lines:
                    Collector.records[(r["host"], r["kind"], r["key"], r["version"])] = r
            time.sleep(2.5)
        with self.lock:
            for r in lines:
                Collector.records[(r["host"], r["kind"], r["key"], r["version"])] = r
        self.send_response(200)
        self.end_headers()


def generic_sink(ctx, mode):
    Collector.records, Collector.requests, Collector.batches, Collector.mode = {}, [], [], mode
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    ctx.cleanups.append(server.shutdown)
    return f"http://127.0.0.1:{server.server_address[1]}/ingest"


def queued_outbox(ctx, db):
    return {(r[0], r[1], r[2]) for r in ctx.query("SELECT kind, record_key, id FROM outbox", db=db)}


@test
def poison_batch_is_set_aside_and_the_rest_flows(ctx):
    """The sink answers 400 for any batch holding run 'poison': those batches go to
    dead_letters with the answer, every other record arrives. (The run's records
    usually fit one batch of 25; when the aggregator's commits spread them over
    two, both are refused and both are set aside.)"""
    sock, db, agg, col = shipping_daemons(ctx)
    workload(ctx, sock, db, "before")
    subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", "poison", "--",
                        "/bin/true"], capture_output=True, timeout=60)
    workload(ctx, sock, db, "after")
    stop_daemons(ctx, agg, col)
    queued = queued_outbox(ctx, db)
    url = generic_sink(ctx, "poison")
    rc, err = shipper(ctx, db, url, "--batch-records", "25")
    ctx.check(rc == 1, f"--once reports the refused batch: {rc}")
    dead = ctx.query("SELECT first_outbox_id, last_outbox_id, records, http_status, answer, payload "
                     "FROM dead_letters", db=state_db(ctx))
    ctx.check(1 <= len(dead) <= 2 and all(d[3] == 400 and "poison" in d[4] for d in dead),
              f"the batches holding the poison run are dead letters, refused with the sink's answer: {dead}")
    ctx.check(all('"poison"' in d[5] for d in dead), "each dead letter holds a record of the poison run")
    if dead:
        expect = {(k, key, v) for k, key, v in queued if not any(d[0] <= v <= d[1] for d in dead)}
        got = {(k, key, v) for (_, k, key, v) in Collector.records}
        ctx.check(got == expect, f"every other record arrived: {len(got)} vs {len(expect)}")
        ctx.check(all(d[5].count("\n") == d[2] for d in dead), "each batch is kept, one line per record")
    ctx.check(pending(ctx, db) == 0, "the queue is not blocked")
    st = json.loads(subprocess.run([ctx.bin("tracer"), "status", "--db", db, "--shipper-state", state_db(ctx),
                                    "--json"], capture_output=True, text=True, timeout=30).stdout)
    ctx.check(st.get("shipping", {}).get("dead_letter_records") == (sum(d[2] for d in dead) if dead else None),
              f"tracer status counts the dead letters: {st.get('shipping')}")
    keys = [k for _, k, _ in Collector.requests]
    ctx.check(all(k and k.startswith("tracer-") for k in keys), f"every batch has an idempotency key: {keys[:3]}")


@test
def retry_after_and_slow_sink_are_honoured(ctx):
    """503 with Retry-After: 2 on the first request: the next comes at least 2 s later;
    the sink then answers slowly (1.5 s): delivered, each record once."""
    sock, db, agg, col = shipping_daemons(ctx)
    workload(ctx, sock, db, "slow")
    stop_daemons(ctx, agg, col)
    queued = queued_outbox(ctx, db)
    url = generic_sink(ctx, "retry-after")
    rc, err = shipper(ctx, db, url, "--timeout-ms", "5000")
    ctx.check(rc == 0, f"delivered: {rc} {err[-300:]}")
    times = [t for t, _, _ in Collector.requests]
    ctx.check(len(times) >= 2 and times[1] - times[0] >= 1.95, f"waited as asked: {times[:2]}")
    ctx.check(len(times) >= 2 and times[1] - times[0] < 5, "and not much longer")
    got = {(k, key, v) for (_, k, key, v) in Collector.records}
    ctx.check(got == queued, f"each record once: {len(got)} of {len(queued)}")
    keys = [k for _, k, _ in Collector.requests]
    ctx.check(keys[0] == keys[1], "the retried batch kept its idempotency key")


@test
def a_retried_batch_keeps_its_records_and_key(ctx):
    """The sink takes the first three requests but answers after the shipper's timeout, while the
    daemons keep adding records: every retry carries the batch first sent, under the same
    Idempotency-Key (the key names exactly one set of records), so a sink that deduplicates by
    key holds each record once; and everything arrives."""
    sock, db, agg, col = shipping_daemons(ctx)
    workload(ctx, sock, db, "first", burn_ms=200, storm=100)
    url = generic_sink(ctx, "too-slow")
    ship = shipper(ctx, db, url, "--timeout-ms", "1000", "--batch-age-ms", "100", "--retry-max-ms", "1000",
                   once=False, wait=False)
    time.sleep(1.5)  # the first attempt is out and timing out
    workload(ctx, sock, db, "second", burn_ms=200, storm=100)
    stop_daemons(ctx, agg, col)
    end = time.time() + 60
    while pending(ctx, db) and time.time() < end:
        time.sleep(0.3)
    ctx.stop(ship)
    ctx.check(pending(ctx, db) == 0, f"delivered in 60 s: {pending(ctx, db)} pending")
    by_key = {}
    for key, ids in Collector.batches:
        by_key.setdefault(key, set()).add(ids)
    ctx.check(len(Collector.batches) > len(by_key),
              f"the slow answers caused retries: {len(Collector.batches)} requests, {len(by_key)} keys")
    changed = {k: sorted(len(v) for v in sets) for k, sets in by_key.items() if len(sets) > 1}
    ctx.check(not changed, f"a key names one set of records on every retry; these changed "
              f"(record counts per attempt): {changed}")
    owners = {}
    for key, sets in by_key.items():
        for ids in sets:
            for i in ids:
                owners.setdefault(i, set()).add(key)
    twice = sum(1 for keys in owners.values() if len(keys) > 1)
    ctx.check(twice == 0, f"{twice} records sent under two different keys")
    got = {(k, key, v) for (_, k, key, v) in Collector.records}
    queued = queued_outbox(ctx, db)
    ctx.check(queued <= got, f"every record queued arrived: {len(queued - got)} missing")


@test
def outbox_full_drops_least_valuable_first_and_counts(ctx):
    """A 1 MiB outbox and no shipper: samples go first, then host samples, then
    processes; for each table, what is queued plus what was dropped is exactly what
    was written."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db, extra_agg=("--outbox-mib", "1", "--shipper-state", state_db(ctx)))
    script = ctx.path("fill.sh")
    with open(script, "w") as f:
        f.write("#!/bin/bash\n"
                + "".join(f"{ctx.helper('cpuburn')} 4000 &\n" for _ in range(4))
                + f"{ctx.helper('storm')} 1500 2 /bin/true > /dev/null\nwait\n")
    os.chmod(script, 0o755)
    subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", "fill", "--", script],
                   capture_output=True, timeout=120)
    stop_daemons(ctx, agg, col)
    dropped = dict(ctx.query("SELECT kind, records FROM outbox_drops", db=db))
    # Live copies of running work (priority 1) are superseded by their final rows: apart.
    # Tombstones (a row taken back, docs/shipping.md) are not records written: apart too.
    queued = dict(ctx.query("SELECT kind, count(*) FROM outbox WHERE NOT (priority = 1 AND kind IN "
                            "('processes', 'steps', 'runs')) AND payload NOT LIKE '%\"_withdrawn\":1%' "
                            "GROUP BY kind", db=db))
    ctx.check(sum(dropped.values()) > 0, f"the outbox overflowed: {dropped}")
    for kind in ("samples", "host_samples", "processes"):
        written = ctx.one(FINISHED[kind], db=db)
        ctx.check(queued.get(kind, 0) + dropped.get(kind, 0) == written,
                  f"{kind}: queued {queued.get(kind, 0)} + dropped {dropped.get(kind, 0)} == written {written}")
    # Least valuable first: when processes were last dropped, every sample and host sample
    # queued before then had gone already; any still queued came in later.
    last = dict(ctx.query("SELECT kind, last_ns FROM outbox_drops", db=db))
    if "processes" in last:
        for kind in ("samples", "host_samples"):
            oldest = ctx.one("SELECT min(created_ns) FROM outbox WHERE kind = ?", kind, db=db)
            ctx.check(oldest is None or oldest > last["processes"],
                      f"{kind} queued before the last process drop would have gone first")
    size = ctx.one("SELECT bytes FROM outbox_size", db=db)
    ctx.check(size <= 1 << 20, f"within the limit: {size} bytes")
    ctx.check(size == ctx.one("SELECT total(length(payload)) FROM outbox", db=db), "the size is exact")
    st = json.loads(subprocess.run([ctx.bin("tracer"), "status", "--db", db, "--json"], capture_output=True,
                                   text=True, timeout=30).stdout)
    ctx.check(st.get("shipping", {}).get("dropped_records") == sum(dropped.values()),
              f"tracer status shows the drops: {st.get('shipping')}")


# --- a fleet -----------------------------------------------------------------------------

CLONE_NEWNET = 0x40000000


class NetnsRelay:
    """Makes ClickHouse (on the root namespace's 127.0.0.1) reachable as 127.0.0.1:port
    inside a network namespace: the listening socket is made in the namespace, the
    outgoing connections in the root one. Nothing listens beyond a loopback."""

    def __init__(self, netns, target_port):
        import ctypes
        self.target = target_port
        libc = ctypes.CDLL(None, use_errno=True)
        made = {}

        def make_listener():
            fd = os.open(f"/var/run/netns/{netns}", os.O_RDONLY)
            if libc.setns(fd, CLONE_NEWNET) != 0:
                made["error"] = os.strerror(ctypes.get_errno())
                return
            os.close(fd)
            import socket
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            s.listen(16)
            made["sock"] = s
        t = threading.Thread(target=make_listener)  # only this thread enters the namespace
        t.start()
        t.join()
        if "sock" not in made:
            raise Failure(f"cannot listen in {netns}: {made.get('error')}")
        self.listener = made["sock"]
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        import socket
        while True:
            try:
                inner, _ = self.listener.accept()
            except OSError:
                return
            outer = socket.create_connection(("127.0.0.1", self.target))
            for a, b in ((inner, outer), (outer, inner)):
                threading.Thread(target=self.pump, args=(a, b), daemon=True).start()

    @staticmethod
    def pump(a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(2)
                except OSError:
                    pass

    def close(self):
        self.listener.close()


@test
@plain_build_only("CI time: three hosts' daemons run the code every other test runs under ASan")
def fleet_of_three_hosts_ships_to_one_clickhouse(ctx):
    """Three hosts: each a collector seeing its own machine id (a mount namespace), its
    own aggregator and outbox, and a shipper in its own network namespace. One
    ClickHouse; a fleet query returns each host's exact numbers."""
    ch = clickhouse(ctx)
    hosts = []
    for i in range(3):
        ns = f"tracer-it-{os.getpid()}-{i}"
        subprocess.run(["ip", "netns", "add", ns], check=True)
        ctx.cleanups.append(lambda ns=ns: subprocess.run(["ip", "netns", "delete", ns]))
        subprocess.run(["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"], check=True)
        machine_id = ctx.path(f"machine-id-{i}")
        host_id = f"{i + 1:x}" * 32
        with open(machine_id, "w") as f:
            f.write(host_id + "\n")
        sock, db = ctx.path(f"h{i}.sock"), ctx.path(f"h{i}.db")
        agg = ctx.spawn([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db, "--user", "nobody",
                         "--outbox-mib", "64", "--shipper-state", db + ".ship"])
        end = time.time() + 10
        while not os.path.exists(sock) and time.time() < end:
            time.sleep(0.05)
        col = ctx.spawn(["unshare", "-m", "--propagation", "private", "sh", "-c",
                         f"mount --bind {machine_id} /etc/machine-id && exec {ctx.bin('tracer-collector')} "
                         f"--socket {sock} --user nobody --aggregator-user nobody"])
        hosts.append({"ns": ns, "sock": sock, "db": db, "agg": agg, "col": col, "host_id": host_id})
    for h in hosts:
        end = time.time() + 20
        while time.time() < end:
            try:
                if ctx.query("SELECT count(*) FROM collector_stats WHERE snapshot_processes > 0", db=h["db"])[0][0]:
                    break
            except Exception:
                pass
            time.sleep(0.1)
    for i, h in enumerate(hosts):
        workload(ctx, h["sock"], h["db"], f"fleet-{i}", burn_ms=500 + 500 * i)
    for h in hosts:
        ctx.stop(h["col"])
        ctx.stop(h["agg"])
        got = ctx.query("SELECT DISTINCT host_id FROM collector_stats", db=h["db"])
        ctx.check(got == [(h["host_id"],)], f"the collector saw its own machine id: {got}")
    cred = credentials(ctx, f"user = {ch.user}\npassword = {ch.password}\n")
    for h in hosts:
        relay = NetnsRelay(h["ns"], ch.http_port)
        ctx.cleanups.append(relay.close)
        p = subprocess.run(["ip", "netns", "exec", h["ns"], ctx.bin("tracer-shipper"), "--db", h["db"],
                            "--state", h["db"] + ".ship", "--sink",
                            f"clickhouse://127.0.0.1:{relay.port}/tracer", "--credentials", cred,
                            "--user", "nobody", "--once"], capture_output=True, text=True, timeout=300)
        ctx.check(p.returncode == 0, f"shipper in {h['ns']}: {p.returncode} {p.stderr[-400:]}")
    hosts_seen = {r[0] for r in ch.rows("SELECT DISTINCT _host FROM tracer.processes")}
    ctx.check(hosts_seen == {h["host_id"] for h in hosts}, f"three hosts in ClickHouse: {hosts_seen}")
    for i, h in enumerate(hosts):
        compare_counts(ctx, ch, h["db"], host=h["host_id"])
        local = ctx.one("SELECT cpu_ns, processes FROM runs WHERE name = ?", f"fleet-{i}", db=h["db"])
        remote = ch.rows(f"SELECT cpu_ns, processes FROM tracer.runs FINAL WHERE _host = '{h['host_id']}' "
                         f"AND name = 'fleet-{i}'")
        ctx.check(remote == [[str(local[0]), str(local[1])]], f"host {i}'s run: {remote} vs {local}")


FORK_CHILDREN = r'''
import json, os, sys, time

def busy_then_exec(seconds, argv):
    """A fork child that works on its own (so live samples see it), then execs."""
    pid = os.fork()
    if pid:
        return pid
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        spin = time.monotonic() + 0.05
        while time.monotonic() < spin:
            pass
        time.sleep(0.15)
    if argv == ["exit"]:
        os._exit(0)
    if argv[0] == "idle":  # no exec, no exit for a while, nothing changing: not sampled
        time.sleep(float(argv[1]))
        os._exit(0)
    os.execv(argv[0], argv)

pids = {name: busy_then_exec(float(s), argv.split()) for name, s, argv in
        (a.split(":") for a in sys.argv[2:])}
with open(sys.argv[1], "w") as f:
    json.dump(pids, f)
for name, pid in pids.items():
    if not name.startswith("bg_"):  # bg_: left running when this parent exits
        os.waitpid(pid, 0)
'''


def run_fork_children(ctx, sock, db, name, children, during=None, in_run=True):
    """`tracer run` of a Python parent whose fork children work, then exec: children
    is name -> (seconds before the exec, argv). Returns name -> pid. in_run=False: the
    parent is started directly, in no run (the interpreter itself, not a version
    manager's shim script, which would be a run of its own)."""
    script, pids = ctx.path("fork_children.py"), ctx.path(f"{name}.pids")
    with open(script, "w") as f:
        f.write(FORK_CHILDREN)
    args = [f"{n}:{s}:{argv}" for n, (s, argv) in children.items()]
    launch = [ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", name, "--", "python3"]
    p = subprocess.Popen([*(launch if in_run else [sys.executable]), script, pids, *args],
                         stderr=subprocess.PIPE, text=True)
    ctx.procs.append(p)
    if during:
        during()
    _, err = p.communicate(timeout=120)
    if p.returncode != 0:
        raise Failure(f"run {name}: {p.returncode} {err[-500:]}")
    with open(pids) as f:
        return json.load(f)


def check_samples_match_outbox(ctx, db, stopped=False):
    """Nothing shipped that SQLite does not keep, nothing kept that is not shipped,
    except the samples still held: those of a process that is running, has not
    exec'd yet and is younger than the hold (any process on the host may be one).
    Once the aggregator has stopped, nothing is held."""
    # Held for at most 5 s after the fork; 3 s more for the sample period, the
    # collector's flush and the commit.
    held = {r[0] for r in ctx.query(
        "SELECT p.id FROM outbox_held h JOIN processes p ON p.id = h.process_id "
        "WHERE p.end_ns IS NULL AND p.image = 0 AND p.start_ns > ?", time.time_ns() - 8_000_000_000, db=db)}
    all_held = ctx.one("SELECT count(*) FROM outbox_held", db=db)
    ctx.check(all_held == len(held), f"only running, pre-exec processes younger than 8 s are held: "
              f"{len(held)} of {all_held}")
    if stopped:
        ctx.check(all_held == 0, f"the stopped aggregator released every hold: {all_held} left")
    local = {f"{a}:{b}" for a, b in ctx.query("SELECT process_id, ts_ns FROM samples", db=db) if a not in held}
    queued = {r[0] for r in ctx.query("SELECT record_key FROM outbox WHERE kind = 'samples'", db=db)}
    only_local = sorted(local - queued)[:3]
    about = [ctx.query("SELECT pid, exe, state, image, end_ns IS NULL FROM processes WHERE id = ?",
                       int(k.split(":")[0]), db=db) for k in only_local]
    ctx.check(local == queued, f"samples: {len(local)} local and not held ({len(held)} processes held), "
              f"{len(queued)} queued, {len(local - queued)} only local, {len(queued - local)} only queued; "
              f"first only local (pid, exe, state, image, running): {about}")
    rows = ctx.one("SELECT count(*) FROM outbox WHERE kind = 'samples'", db=db)
    ctx.check(rows == len(queued), f"each sample queued once: {rows} rows for {len(queued)} keys")
    orphans = ctx.one("SELECT count(*) FROM outbox o WHERE kind = 'samples' AND NOT EXISTS "
                      "(SELECT 1 FROM processes p WHERE p.id = json_extract(o.payload, '$.process_id'))",
                      db=db)
    ctx.check(orphans == 0, f"no queued sample of a process that is not recorded: {orphans}")


@test
def held_samples_of_an_idle_child_ship_when_the_hold_ends(ctx):
    """A fork child sampled while it works, then idle without exec or exit (an unchanged
    process is not sampled again): its held samples are queued once the 5 s hold is over,
    not only at its exit."""
    sock, db = ctx.path("s.sock"), ctx.path("idle.db")
    agg, col = start_daemons(ctx, sock, db, extra_agg=("--outbox-mib", "64"))
    started = time.time()
    pids = run_fork_children(ctx, sock, db, "idle", {"bg_idle": (1.5, "idle 12")})

    def end_child():
        try:
            os.kill(pids["bg_idle"], signal.SIGKILL)
        except ProcessLookupError:
            pass
    ctx.cleanups.append(end_child)
    # The hold ends 5 s after the fork; the aggregator checks every second and commits.
    time.sleep(max(0, started + 8 - time.time()))
    row = ctx.query("SELECT id, state, image FROM processes WHERE pid = ?", pids["bg_idle"], db=db)
    ctx.check(len(row) == 1 and row[0][1:] == ("running", 0), f"the child is running, not exec'd: {row}")
    if len(row) == 1:
        pid_id = row[0][0]
        local = {f"{pid_id}:{ts}" for (ts,) in ctx.query("SELECT ts_ns FROM samples WHERE process_id = ?",
                                                          pid_id, db=db)}
        queued = {k for (k,) in ctx.query("SELECT record_key FROM outbox WHERE kind = 'samples' AND "
                                          "record_key LIKE ?", f"{pid_id}:%", db=db)}
        held = ctx.one("SELECT count(*) FROM outbox_held WHERE process_id = ?", pid_id, db=db)
        ctx.check(len(local) >= 1, f"sampled while it worked: {len(local)} samples")
        ctx.check(local == queued and held == 0, f"8 s after its fork: {len(local)} samples kept, "
                  f"{len(queued)} queued, still held: {held}")
    ctx.stop(col)
    ctx.stop(agg)


@test
def samples_of_a_child_that_execs_into_noise_are_never_shipped(ctx):
    """A fork child in no run is sampled before its exec; the exec makes it deny-listed
    noise (outside runs: inside one it would be kept as the run's plumbing). SQLite
    forgets it, so none of its samples may reach the outbox (the sink would keep them for
    ever). A child working alone for longer than the hold (5 s) has its
    samples shipped: its pre-exec image stays a row of its own. Held samples of a
    child that execs a recorded program, or exits, are shipped. An aggregator that
    crashed has its holds released by the next one; one that stops releases its own."""
    deny = ctx.path("tools.deny")
    with open(deny, "w") as f:
        f.write("sleep\n")
    sock, db = ctx.path("s.sock"), ctx.path("hold.db")
    agg_args = ("--outbox-mib", "64", "--tools-deny", deny)
    agg, col = start_daemons(ctx, sock, db, extra_agg=agg_args)
    pids = run_fork_children(ctx, sock, db, "noise", {
        "early": (2.5, "/bin/sleep 0.2"), "late": (8, "/bin/sleep 0.2"), "kept": (2.5, "/bin/true"),
        "no_exec": (2.5, "exit")}, in_run=False)
    time.sleep(1.5)  # the last samples and exits reach SQLite

    early = ctx.query("SELECT id FROM processes WHERE pid = ?", pids["early"], db=db)
    ctx.check(early == [], f"the child that became noise is not recorded: {early}")
    late = ctx.query("SELECT state, exe FROM processes WHERE pid = ? ORDER BY image", pids["late"], db=db)
    ctx.check(len(late) == 1 and late[0][0] == "exec" and "python" in late[0][1],
              f"the long-lived child keeps its pre-exec image only: {late}")
    late_samples = ctx.one("SELECT count(*) FROM samples s JOIN processes p ON p.id = s.process_id "
                           "WHERE p.pid = ?", pids["late"], db=db)
    ctx.check(late_samples >= 3, f"its samples (it worked 8 s, sampled every 1 s): {late_samples}")
    kept = ctx.query("SELECT exe, state FROM processes WHERE pid = ?", pids["kept"], db=db)
    ctx.check(kept == [("/usr/bin/true", "exited")], f"the recorded child is one row: {kept}")
    kept_samples = ctx.one("SELECT count(*) FROM samples s JOIN processes p ON p.id = s.process_id "
                           "WHERE p.pid = ?", pids["kept"], db=db)
    ctx.check(kept_samples >= 1, f"its pre-exec samples stay with it: {kept_samples}")
    no_exec = ctx.query("SELECT p.state, count(s.ts_ns) FROM processes p JOIN samples s ON s.process_id = p.id "
                        "WHERE p.pid = ? GROUP BY p.id", pids["no_exec"], db=db)
    ctx.check(len(no_exec) == 1 and no_exec[0][0] == "exited" and no_exec[0][1] >= 1,
              f"a child that exits without an exec keeps its samples: {no_exec}")
    check_samples_match_outbox(ctx, db)

    state = {"agg": agg}

    def crash_and_restart():
        time.sleep(1.5)  # the child has been sampled (and held) by now
        state["agg"].kill()
        state["agg"].wait()
        state["agg"] = ctx.spawn([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db,
                                  "--user", "nobody", *agg_args])
        wait_for_socket(sock)

    pids = run_fork_children(ctx, sock, db, "crash", {"across": (4, "/bin/true")}, during=crash_and_restart)
    time.sleep(1.5)
    across = ctx.one("SELECT count(*) FROM samples s JOIN processes p ON p.id = s.process_id "
                     "WHERE p.pid = ?", pids["across"], db=db)
    ctx.check(across >= 2, f"the child sampled across the crash: {across} samples")
    check_samples_match_outbox(ctx, db)

    started = time.time()
    pids = run_fork_children(ctx, sock, db, "stop", {"bg_at_stop": (4, "exit")})
    time.sleep(max(0, started + 2 - time.time()))  # sampled and held, still before its 5 s
    ctx.stop(state["agg"])
    at_stop = ctx.one("SELECT count(*) FROM samples s JOIN processes p ON p.id = s.process_id "
                      "WHERE p.pid = ?", pids["bg_at_stop"], db=db)
    ctx.check(at_stop >= 1, f"the child sampled before the aggregator stopped: {at_stop} samples")
    check_samples_match_outbox(ctx, db, stopped=True)
    ctx.stop(col)


@test
def no_outbox_while_no_shipper_is_configured(ctx):
    """The packaged aggregator queues for the shipper only while the shipper's configuration
    exists (--outbox-when, as the unit passes /etc/tracer/shipper.conf): with none, a
    workload of 200 processes is recorded and nothing is queued, and `tracer status` says
    no shipper is configured (text and JSON). Once the file exists, the next run's
    processes are queued (one outbox record per process row of that run) without a restart,
    and status says configured; once it is gone again, the run after that queues nothing.
    On the code before: the outbox filled regardless (the flag did not exist)."""
    sock, db = ctx.path("s.sock"), ctx.db
    conf = ctx.path("shipper.conf")
    agg, col = start_daemons(ctx, sock, db, extra_agg=("--outbox-mib", "16", "--outbox-when", conf))
    status = [ctx.bin("tracer"), "status", "--db", db, "--socket", sock, "--shipper-state", state_db(ctx),
              "--shipper-config", conf]

    def queued_for(run):
        """Processes of the run with a record queued (a live copy of a running one aside)."""
        return ctx.one("SELECT count(DISTINCT p.id) FROM outbox o JOIN processes p ON o.kind = 'processes' "
                       "AND o.record_key = CAST(p.id AS TEXT) WHERE o.priority != 1 AND "
                       "p.run_id = (SELECT id FROM runs WHERE name = ?)", run)

    def processes_of(run):
        return ctx.one("SELECT count(*) FROM processes WHERE run_id = (SELECT id FROM runs WHERE name = ?)", run)

    workload(ctx, sock, db, "unshipped", burn_ms=200)
    ctx.check(processes_of("unshipped") >= 200 and ctx.one("SELECT count(*) FROM outbox") == 0,
              f"no shipper: {processes_of('unshipped')} processes recorded, "
              f"{ctx.one('SELECT count(*) FROM outbox')} outbox records")
    text = subprocess.run(status, capture_output=True, text=True, timeout=30).stdout
    doc = json.loads(subprocess.run(status + ["--json"], capture_output=True, text=True, timeout=30).stdout or "{}")
    ctx.check("shipping: none configured" in text and "the outbox is off" in text
              and doc.get("shipper_configured") is False,
              f"status says no shipper is configured: {text[-400:]} / {doc.get('shipper_configured')}")
    with open(conf, "w") as f:
        f.write("[shipper]\nsink = clickhouse://127.0.0.1:9/tracer\n")
    workload(ctx, sock, db, "shipped", burn_ms=200)
    ctx.check(queued_for("shipped") == processes_of("shipped") >= 200,
              f"configured: every process of the next run queued: {queued_for('shipped')} of {processes_of('shipped')}")
    doc = json.loads(subprocess.run(status + ["--json"], capture_output=True, text=True, timeout=30).stdout or "{}")
    ctx.check(doc.get("shipper_configured") is True and doc.get("shipping", {}).get("pending_records", 0) > 0,
              f"status: configured, records waiting: {doc.get('shipper_configured')} {doc.get('shipping')}")
    os.unlink(conf)
    workload(ctx, sock, db, "unshipped-again", burn_ms=200)
    ctx.check(queued_for("unshipped-again") == 0 and processes_of("unshipped-again") >= 200,
              f"configuration removed: nothing queued: {queued_for('unshipped-again')}")
    text = subprocess.run(status, capture_output=True, text=True, timeout=30).stdout
    ctx.check("no shipper is configured" in text, f"status says nothing will deliver what waits: {text[-400:]}")
    stop_daemons(ctx, agg, col)
