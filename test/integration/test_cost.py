"""Cost, right-sizing and idle: arithmetic against hand-computed values on a
database with known usage, and the IMDSv2 token protocol against a local
server (including 401 and timeouts)."""
import http.server
import shutil
import json
import os
import sys
import signal
import sqlite3
import subprocess
import threading
import time

from harness import Failure, test

HOUR = 3600 * 10**9
T0 = 1_800_000_000 * 10**9  # an arbitrary epoch, whole seconds


def empty_db(ctx, path):
    """A database with the current schema, made by the aggregator itself."""
    sock = ctx.path("mk.sock")
    agg = subprocess.Popen([ctx.bin("tracer-aggregator"), "--db", path, "--socket", sock, "--user", "nobody",
                            "--host-sample-ms", "0"], stderr=subprocess.PIPE, text=True)
    end = time.time() + 10
    while not os.path.exists(sock) and time.time() < end:
        time.sleep(0.05)
    agg.send_signal(signal.SIGTERM)
    agg.communicate(timeout=10)
    if not os.path.exists(path):
        raise Failure("aggregator made no database")


def known_usage_db(ctx):
    """One hour on a 4-CPU, 16 GiB host. Run 'align' (pipeline p) has two steps:
    bwa: 1800 CPU-s and 4 GiB all hour; sort: no CPU, 2 GiB for the first half hour.
    Outside any run: a daemon with 360 CPU-s and 1 GiB all hour."""
    db = ctx.path("cost.db")
    empty_db(ctx, db)
    con = sqlite3.connect(db)
    for i in range(3600):
        con.execute("INSERT INTO host_samples (ts_ns, interval_ns, cpus, mem_total_kb) VALUES (?,?,?,?)",
                    (T0 + i * 10**9, 10**9, 4, 16 * 1024 * 1024))
    con.execute("INSERT INTO runs (id, name, pipeline, start_ns, end_ns, status) VALUES "
                "(1, 'align', 'p', ?, ?, 'ok')", (T0, T0 + HOUR))
    con.execute("INSERT INTO steps (id, run_id, key, name, kind, status, start_ns, end_ns) VALUES "
                "(1, 1, '1', 'bwa', 'script-step', 'ok', ?, ?), (2, 1, '2', 'sort', 'script-step', 'ok', ?, ?)",
                (T0, T0 + HOUR, T0, T0 + HOUR // 2))
    procs = [  # id, run, step, uid, start, end, cpu_ns, rss_kb
        (1, 1, 1, 0, T0, T0 + HOUR, 1800 * 10**9, 4 * 1024 * 1024),
        (2, 1, 2, 0, T0, T0 + HOUR // 2, 0, 2 * 1024 * 1024),
        (3, None, None, 65534, T0 - HOUR, T0 + 2 * HOUR, 3 * 360 * 10**9, 1024 * 1024),
    ]
    for pid, run, step, uid, start, end, cpu, rss in procs:
        con.execute("INSERT INTO processes (id, run_id, step_id, pid, proc_start_boot_ns, start_ns, end_ns, "
                    "state, uid, gid, cpu_user_ns, cpu_sys_ns, max_rss_kb) VALUES (?,?,?,?,?,?,?,?,?,?,?,0,?)",
                    (pid, run, step, 1000 + pid, 0, start, end, "exited", uid, uid, cpu, rss))
        # One sample per minute: cumulative CPU growing evenly, RSS constant.
        for m in range(0, (end - start) // (60 * 10**9) + 1):
            ts = start + m * 60 * 10**9
            con.execute("INSERT INTO samples (process_id, ts_ns, cpu_user_ns, cpu_sys_ns, rss_kb) VALUES "
                        "(?,?,?,0,?)", (pid, ts, cpu * (ts - start) // (end - start), rss))
    con.commit()
    con.close()
    return db


def tracer_json(ctx, *args):
    p = subprocess.run([ctx.bin("tracer"), *args, "--json"], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise Failure(f"tracer {' '.join(args)}: {p.returncode} {p.stderr}")
    return json.loads(p.stdout)


@test
def cost_arithmetic_matches_hand_computed_values(ctx):
    """$1/h, half by CPU, half by memory. Hand-computed:
    bwa  = 0.5 x 1800/(4 x 3600) + 0.5 x 4/16        = 0.0625 + 0.125   = $0.1875
    sort = 0.5 x 0             + 0.5 x (2 x 0.5)/16 = $0.03125
    the daemon inside the hour = 0.5 x 360/14400 + 0.5 x 1/16 = 0.0125 + 0.03125 = $0.04375
    idle = 1 - 0.1875 - 0.03125 - 0.04375 = $0.7375"""
    db = known_usage_db(ctx)
    doc = tracer_json(ctx, "cost", "--db", db, "--rate", "1", "align")
    got = {r["key"]: r["usd"] for r in doc["breakdown"]}
    want = {"bwa": 0.1875, "sort": 0.03125, "(not in a run)": 0.04375}
    for k, v in want.items():
        ctx.close(got.get(k), v, 1e-6, f"cost of {k}")
    ctx.close(doc["total_usd"], 1.0, 1e-9, "one hour at $1/h")
    ctx.close(doc["idle_usd"], 0.7375, 1e-6, "idle capacity")
    ctx.close(sum(got.values()) + doc["idle_usd"], doc["total_usd"], 1e-12, "parts add up to the bill")
    # By user, priced from the table (m5.xlarge on-demand: $0.192/h): the same shares.
    doc = tracer_json(ctx, "cost", "--db", db, "--instance-type", "m5.xlarge", "--region", "us-east-1",
                      "--by", "user", "align")
    ctx.close(doc["total_usd"], 0.192, 1e-9, "m5.xlarge hour from the price table")
    users = {r["key"]: r["usd"] for r in doc["breakdown"]}
    ctx.close(users.get("root"), 0.192 * (0.1875 + 0.03125), 1e-6, "root's processes")
    ctx.close(users.get("nobody"), 0.192 * 0.04375, 1e-6, "nobody's daemon")
    # Cost centers from a mapping file: users first, then groups, then cgroup prefixes.
    centers = ctx.path("centers.ini")
    with open(centers, "w") as f:
        f.write("[users]\nroot = genomics\n[groups]\nnogroup = platform\n")
    doc = tracer_json(ctx, "cost", "--db", db, "--rate", "1", "--by", "costcenter", "--cost-centers", centers,
                      "align")
    cc = {r["key"]: r["usd"] for r in doc["breakdown"]}
    ctx.close(cc.get("genomics"), 0.21875, 1e-6, "genomics cost center")
    ctx.close(cc.get("platform"), 0.04375, 1e-6, "platform cost center (by group)")
    with open(centers, "w") as f:
        f.write("[users]\nroot genomics\n")
    bad = subprocess.run([ctx.bin("tracer"), "cost", "--db", db, "--rate", "1", "--by", "costcenter",
                          "--cost-centers", centers, "align"], capture_output=True, text=True, timeout=30)
    ctx.check(bad.returncode == 1 and ":2:" in bad.stderr, f"a bad mapping line is named: {bad.stderr}")


class FakeImds(http.server.BaseHTTPRequestHandler):
    """IMDSv2: PUT /latest/api/token (with the TTL header) gives a token; GETs need it."""
    mode = "ok"
    tokens_issued = 0
    tokens = set()

    def log_message(self, *a):
        pass

    def do_PUT(self):
        if self.path != "/latest/api/token" or "X-aws-ec2-metadata-token-ttl-seconds" not in self.headers:
            self.send_response(400)
            self.end_headers()
            return
        if self.mode == "slow":
            time.sleep(3)
        FakeImds.tokens_issued += 1
        token = f"tok{FakeImds.tokens_issued}"
        FakeImds.tokens.add(token)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(token.encode())

    def do_GET(self):
        token = self.headers.get("X-aws-ec2-metadata-token")
        # "expire": the first token stops working, as after its TTL: a 401 asks for a new one.
        if self.mode == "expire" and token == "tok1":
            FakeImds.tokens.discard("tok1")
        if token not in FakeImds.tokens or self.mode == "deny":
            self.send_response(401)
            self.end_headers()
            return
        values = {"/latest/meta-data/instance-type": "m5.xlarge",
                  "/latest/meta-data/placement/availability-zone": "us-east-1b",
                  "/latest/meta-data/placement/region": "us-east-1",
                  "/latest/meta-data/instance-life-cycle": "on-demand"}
        if self.path not in values:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.end_headers()
        self.wfile.write(values[self.path].encode())


@test
def imdsv2_token_flow_401_and_timeouts(ctx):
    """The instance type comes from a local IMDSv2: token first, one refresh on 401,
    'unknown' quickly when the service denies or hangs: then shares of the host without
    dollars, and the reason on stderr."""
    db = known_usage_db(ctx)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeImds)
    server.handle_error = lambda *a: None  # the client hanging up on a slow answer is the point
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    none = "http://127.0.0.1:9"  # nothing listens: the GCP probe fails at once
    try:
        for mode in ("ok", "expire"):
            FakeImds.mode, FakeImds.tokens_issued, FakeImds.tokens = mode, 0, set()
            doc = tracer_json(ctx, "cost", "--db", db, "--imds-endpoint", url, "--gcp-endpoint", none, "align")
            ctx.check("m5.xlarge on-demand us-east-1" in doc["price_source"], f"{mode}: {doc['price_source']}")
            ctx.close(doc["total_usd"], 0.192, 1e-9, f"{mode}: priced as m5.xlarge")
            if mode == "expire":
                ctx.check(FakeImds.tokens_issued == 2, f"a 401 fetched one new token: {FakeImds.tokens_issued}")
        for mode in ("deny", "slow"):
            FakeImds.mode, FakeImds.tokens = mode, set()
            start = time.time()
            p = subprocess.run([ctx.bin("tracer"), "cost", "--db", db, "--imds-endpoint", url,
                                "--gcp-endpoint", none, "--json", "align"], capture_output=True, text=True,
                               timeout=30)
            took = time.time() - start
            ctx.check(p.returncode == 0 and "instance unknown" in p.stderr, f"{mode}: {p.returncode} {p.stderr}")
            doc = json.loads(p.stdout) if p.stdout.startswith("{") else {}
            ctx.check(doc.get("total_usd", 0) is None and doc.get("breakdown"),
                      f"{mode}: shares without dollars: {p.stdout[:200]}")
            ctx.check(took < 2.5, f"{mode}: gave up within the 1 s timeouts ({took:.1f} s)")
    finally:
        server.shutdown()


@test
def on_prem_sends_no_metadata_request_and_reads_the_site_rate(ctx):
    """Off a cloud (this machine's firmware names none) with nothing configured, cost,
    recommend and idle never touch the network (strace: no connect, no sendto) and
    still answer: shares without dollars, sizes without instances, periods without
    cost. A rate in the site's cost.conf prices the hour; a bad line is named."""
    if not shutil.which("strace"):
        raise Failure("strace is not installed (deploy/install-deps.sh tests)")
    db = known_usage_db(ctx)
    blank = os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "etc", "cost.conf")
    why = "not a cloud instance"
    # On a cloud runner the firmware names it and auto would ask: say no in the file instead.
    if any(os.path.exists(f"/sys/class/dmi/id/{f}") and any(w in open(f"/sys/class/dmi/id/{f}").read().lower()
                                                            for w in ("amazon", "google"))
           for f in ("sys_vendor", "product_name", "bios_vendor", "bios_version")):
        blank, why = ctx.path("no-detect.conf"), "detect = no"
        with open(blank, "w") as f:
            f.write("[cost]\ndetect = no\n")
    for verb, extra in (("cost", ["align"]), ("recommend", ["align"]), ("idle", ["--since", "3h"])):
        trace = ctx.path(f"{verb}.strace")
        # LeakSanitizer cannot run under ptrace: leaks are checked by every other test.
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
        p = subprocess.run(["strace", "-f", "-qq", "-o", trace, "-e", "trace=connect,sendto,sendmsg",
                            ctx.bin("tracer"), verb, "--db", db, "--cost-conf", blank, "--json", *extra],
                           capture_output=True, text=True, timeout=60, env=env)
        ctx.check(p.returncode == 0, f"{verb} answers without a price: {p.returncode} {p.stderr}")
        calls = [line for line in open(trace) if "AF_INET" in line or "sendto(" in line or "sendmsg(" in line]
        ctx.check(not calls, f"{verb}: no network call on-prem: {calls[:3]}")
        ctx.check("no price for this host" in p.stderr and why in p.stderr,
                  f"{verb} says why it has no price: {p.stderr}")
        doc = json.loads(p.stdout)
        if verb == "cost":
            ctx.check(doc["total_usd"] is None and all(r["usd"] is None for r in doc["breakdown"]),
                      f"no dollars without a price: {doc['total_usd']}")
            shares = {r["key"]: r["share"] for r in doc["breakdown"]}
            # The same shares as at $1/h (cost_arithmetic_matches_hand_computed_values).
            ctx.close(shares.get("bwa"), 0.1875, 1e-6, "bwa's share of the host")
            ctx.close(doc["idle_share"], 0.7375, 1e-6, "idle share")
        if verb == "recommend":
            ctx.check(doc["price_source"] is None and all("instance" not in s for s in doc["steps"]),
                      "sizes only")
    # The site's rate, from cost.conf.
    conf = ctx.path("cost.conf")
    with open(conf, "w") as f:
        f.write("# on-prem node\n[cost]\nrate = 2.5   ; all in\n")
    doc = tracer_json(ctx, "cost", "--db", db, "--cost-conf", conf, "align")
    ctx.close(doc["total_usd"], 2.5, 1e-9, "one hour at the configured $2.5/h")
    ctx.check(conf in doc["price_source"], f"says where the rate came from: {doc['price_source']}")
    ctx.close({r["key"]: r["usd"] for r in doc["breakdown"]}["bwa"], 2.5 * 0.1875, 1e-9, "bwa at $2.5/h")
    # An option still wins over the file.
    doc = tracer_json(ctx, "cost", "--db", db, "--cost-conf", conf, "--rate", "1", "align")
    ctx.close(doc["total_usd"], 1.0, 1e-9, "--rate overrides cost.conf")
    with open(conf, "w") as f:
        f.write("[cost]\nrate = 2.5\nrate_per_cpu = 0.1\n")
    p = subprocess.run([ctx.bin("tracer"), "cost", "--db", db, "--cost-conf", conf, "align"],
                       capture_output=True, text=True, timeout=30)
    ctx.check(p.returncode == 1 and f"{conf}:3: unknown key 'rate_per_cpu'" in p.stderr,
              f"a bad line is named and stops: {p.returncode} {p.stderr}")


@test
def idle_periods_and_gaps_match_hand_computed_values(ctx):
    """30 minutes of host samples: 10 idle (2% CPU), 10 with a run (90%), 10 idle (1%).
    The run's two steps leave a 5-minute gap. At $0.36/h: each idle 10 minutes costs
    $0.06, the gap $0.03."""
    db = ctx.path("idle.db")
    empty_db(ctx, db)
    con = sqlite3.connect(db)
    s = 10**9
    for i in range(1, 1801):
        busy = 2.0 if i <= 600 else 90.0 if i <= 1200 else 1.0
        con.execute("INSERT INTO host_samples (ts_ns, interval_ns, cpus, mem_total_kb, cpu_busy_pct) "
                    "VALUES (?,?,?,?,?)", (T0 + i * s, s, 4, 16 * 1024 * 1024, busy))
    con.execute("INSERT INTO runs (id, name, start_ns, end_ns, status, steps) VALUES (1, 'job', ?, ?, 'ok', 2)",
                (T0 + 600 * s, T0 + 1200 * s))
    con.execute("INSERT INTO steps (id, run_id, key, name, kind, status, start_ns, end_ns) VALUES "
                "(1, 1, '1', 'a', 'script-step', 'ok', ?, ?), (2, 1, '2', 'b', 'script-step', 'ok', ?, ?)",
                (T0 + 600 * s, T0 + 700 * s, T0 + 1000 * s, T0 + 1200 * s))
    con.commit()
    con.close()
    doc = tracer_json(ctx, "idle", "--db", db, "--rate", "0.36", "--since", "1h")
    host = [(p["from_ns"] - T0) // s for p in doc["host_idle"]], [(p["to_ns"] - T0) // s for p in doc["host_idle"]]
    ctx.check(host == ([0, 1200], [600, 1800]), f"two idle periods, 0-600 s and 1200-1800 s: {host}")
    ctx.check(all(abs(p["usd"] - 0.06) < 1e-9 for p in doc["host_idle"]), f"$0.06 each: {doc['host_idle']}")
    gaps = [((p["from_ns"] - T0) // s, (p["to_ns"] - T0) // s, round(p["usd"], 9)) for p in doc["idle_in_runs"]]
    ctx.check(gaps == [(700, 1000, 0.03)], f"the gap between the steps: {gaps}")
    doc = tracer_json(ctx, "idle", "--db", db, "--rate", "0.36", "--since", "1h", "--cpu-below", "1.5")
    ctx.check(len(doc["host_idle"]) == 1, "at 1.5% only the 1% stretch is idle")
    ctx.check(doc.get("host_samples") == 1800 and doc.get("sampled_ns") == 1800 * 10**9,
              f"the 1800 one-second samples inserted: {doc.get('host_samples')}, {doc.get('sampled_ns')}")
    # No samples at all is said, not shown as a host with no idle time.
    empty = ctx.path("nosamples.db")
    empty_db(ctx, empty)
    doc = tracer_json(ctx, "idle", "--db", empty, "--rate", "0.36")
    ctx.check(doc.get("host_samples") == 0 and doc["host_idle"] == [], f"no data: {doc.get('host_samples')}")
    text = subprocess.run([ctx.bin("tracer"), "idle", "--db", empty, "--rate", "0.36"], capture_output=True,
                          text=True, timeout=30).stdout
    ctx.check("No host samples" in text, f"the text says there is no data:\n{text}")


@test
def recommend_shrinks_a_step_that_used_a_tenth_of_its_limit(ctx):
    """A step peaking at ~51 MiB under a 512 MiB cgroup limit is over-provisioned: give
    it peak + 20% rounded up to 64 MiB, and the cheapest instance type that fits."""
    from test_telemetry import MemoryCgroup
    cg = MemoryCgroup(f"tracer-it-rec-{os.getpid()}", "512M")
    script = ctx.path("small.sh")
    with open(script, "w") as f:
        # A step long enough to be worth sizing (10 s of wall time, docs/cost.md).
        f.write(f"#!/bin/bash\necho $$ > {cg.path}/cgroup.procs\n"
                f"bash -c '{ctx.helper('memhog')} 50 0 {ctx.path('hog.json')}; sleep 10.5'\n")
    os.chmod(script, 0o755)
    try:
        ctx.tracer_run([script], expect=0)
    finally:
        cg.remove()
    doc = tracer_json(ctx, "recommend", "--db", ctx.db, "--instance-type", "m5.2xlarge")
    steps = {s["name"]: s for s in doc["steps"]}
    s = steps.get("memhog")
    if not s:
        raise Failure(f"no memhog step: {list(steps)}")
    peak_gib = s["peak_rss_kb"] / 1048576
    ctx.check(abs(s["memory_given_gib"] - 0.5) < 1e-9 and s["memory_given_from"] == "cgroup limit",
              f"given: the 512 MiB limit: {s['memory_given_gib']} {s['memory_given_from']}")
    ctx.check(s["memory_verdict"] == "over-provisioned", f"told to shrink: {s['memory_verdict']}")
    import math
    want = math.ceil(peak_gib * 1.2 * 16) / 16
    ctx.close(s["memory_recommended_gib"], want, 1e-9, "peak + 20%, rounded up to 64 MiB")
    ctx.check(s["cpus_recommended"] == 1, f"one CPU: {s['cpus_recommended']}")
    # The run records the architecture its binaries ran on: this machine's.
    import platform
    con = sqlite3.connect(ctx.db)
    arch = con.execute("SELECT arch FROM runs ORDER BY id DESC LIMIT 1").fetchone()[0]
    con.close()
    ctx.check(arch == platform.machine(), f"runs.arch {arch} vs uname -m {platform.machine()}")
    table_arch = {"x86_64": "x86_64", "aarch64": "arm64"}.get(platform.machine())
    ctx.check(doc["arch"] == table_arch, f"advice for {table_arch} binaries: {doc['arch']}")
    # The cheapest fitting type of this architecture, computed here from the bundled table.
    rows = [line.rstrip("\n").split("\t") for line in open(os.path.join(os.path.dirname(__file__), "..", "..",
                                                                         "deploy", "etc", "prices.tsv"))
            if not line.startswith("#")]
    fits = [r for r in rows if r[1] == "us-east-1" and r[3] == "on-demand" and r[7] not in
            ("gpu", "burstable") and int(r[5]) >= 1 and float(r[6]) >= want]
    cheapest = min((r for r in fits if r[8] == table_arch), key=lambda r: float(r[4]))
    ctx.check(s["instance"]["type"] == cheapest[2], f"instance {s['instance']['type']} vs {cheapest[2]}")
    # A cheaper type of the other architecture is only an option, named as such.
    other = min((r for r in fits if r[8] != table_arch), key=lambda r: float(r[4]))
    if float(other[4]) < float(cheapest[4]):
        ctx.check(s.get("other_arch", {}).get("type") == other[2] and s["other_arch"]["arch"] == other[8],
                  f"other-architecture option {s.get('other_arch')} vs {other[2]}")
    else:
        ctx.check("other_arch" not in s, f"no option when it is not cheaper: {s.get('other_arch')}")
    hours = s["wall_ns"] / 3.6e12
    ctx.close(s["usd_saving"], hours * (0.384 - float(cheapest[4])), 1e-9, "saving vs m5.2xlarge for its wall time")


@test
def recommend_sizes_a_run_of_one_command(ctx):
    """`tracer run -- CMD` with no script or engine has no steps: recommend sizes the run
    as one, named after its program, from the peak the process reports itself
    (getrusage's ru_maxrss at its end). A 10.5 s Python holding ~120 MiB on one thread:
    peak + 20% rounded up to 64 MiB, one CPU, given the host's memory."""
    import math
    own = ctx.path("own.txt")
    prog = ("import resource, time\nx = bytearray(120 << 20)\nfor i in range(0, len(x), 4096): x[i] = 1\n"
            "end = time.time() + 10.5\nwhile time.time() < end: time.sleep(0.05)\n"
            f"open('{own}', 'w').write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n")
    # The interpreter itself, not a shim (pyenv's python3 is a bash script: a script run).
    ctx.tracer_run([os.path.realpath(sys.executable), "-c", prog], "--run", "one-command", expect=0)
    run = ctx.one("SELECT id FROM runs WHERE name = 'one-command'")
    ctx.check(ctx.one("SELECT count(*) FROM steps WHERE run_id = ?", run) == 0, "a single command has no steps")
    doc = tracer_json(ctx, "recommend", "--db", ctx.db, str(run))
    if len(doc["steps"]) != 1:
        raise Failure(f"the run sized as one: {doc['steps']}")
    s = doc["steps"][0]
    own_kb = int(open(own).read())
    ctx.check(s["name"].startswith("python3"), f"named after its program: {s['name']}")
    ctx.check(not s.get("too_short") and s["wall_ns"] >= 10e9, f"long enough to size: {s}")
    # Our peak against the process's own, within 5%; the advice from ours, never below its own.
    ctx.close(s["peak_rss_kb"], own_kb, 0.05 * own_kb, "the run's peak vs the process's own ru_maxrss")
    want = math.ceil(s["peak_rss_kb"] / 1048576 * 1.2 * 16) / 16
    ctx.close(s["memory_recommended_gib"], want, 1e-9, "peak + 20%, rounded up to 64 MiB")
    ctx.check(s["memory_recommended_gib"] * 1048576 >= own_kb, f"advice not below its own peak {own_kb} kB: {s}")
    ctx.check(s["memory_given_from"] == "host" and s["cpus_recommended"] == 1,
              f"given the host's memory, one CPU for one thread: {s}")


@test
def cost_of_a_window_bills_only_what_was_observed(ctx):
    """`cost --since 30d` on a database that holds a few seconds: only the time a collector
    watched is billed (at $1/h: its seconds / 3600), not 720 h of "idle capacity" nobody
    saw; --whole-window bills all 720 h. Ground truth: the collector streams' spans and the
    runs' spans read from SQLite and merged here, and the window's own length."""
    ctx.tracer_run(["bash", "-c", "for i in 1 2 3; do gzip -c /bin/bash > /dev/null; done"], "--run", "seen",
                   expect=0)
    doc = tracer_json(ctx, "cost", "--db", ctx.db, "--since", "30d", "--rate", "1")
    # A stream is seen from its first frame, a little after its collector began to watch,
    # so a run it recorded from its start counts whole (it was watched all along).
    spans = sorted(ctx.query("SELECT first_seen_ns, last_seen_ns FROM collector_stats UNION ALL "
                             "SELECT start_ns, end_ns FROM runs WHERE end_ns IS NOT NULL", db=ctx.db))
    run_ns = ctx.one("SELECT end_ns - start_ns FROM runs WHERE name = 'seen'", db=ctx.db)
    merged = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    seen_ns = sum(max(0, min(b, doc["to_ns"]) - max(a, doc["from_ns"])) for a, b in merged)
    ctx.check(0 < seen_ns < 600e9, f"the database holds a short watch: {seen_ns} ns")
    ctx.check(doc.get("observed_ns", 0) >= run_ns, f"observed {doc.get('observed_ns')} holds the run's {run_ns} ns")
    ctx.check(doc.get("observed_ns") == seen_ns, f"observed_ns {doc.get('observed_ns')} vs the streams' {seen_ns}")
    ctx.close(doc["total_usd"], seen_ns / 1e9 / 3600, 1e-12, "billed: the observed seconds at $1/h")
    ctx.close(sum(r["usd"] for r in doc["breakdown"]) + doc["idle_usd"], doc["total_usd"], 1e-12,
              "parts add up to the bill")
    whole = tracer_json(ctx, "cost", "--db", ctx.db, "--since", "30d", "--rate", "1", "--whole-window")
    ctx.close(whole["total_usd"], (whole["to_ns"] - whole["from_ns"]) / 1e9 / 3600, 1e-6,
              "--whole-window: all 720 h")
    text = subprocess.run([ctx.bin("tracer"), "cost", "--db", ctx.db, "--since", "30d", "--rate", "1"],
                          capture_output=True, text=True, timeout=60).stdout
    ctx.check("observed:" in text and "e-0" not in text, f"the text says what was observed, amounts in decimals: {text}")
