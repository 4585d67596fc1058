"""Energy and carbon (docs/energy.md): `tracer energy --json` against the documented model
computed independently in Python from the database's own rows, on a recorded run, with the
default coefficients and with an energy.conf of other ones."""
import http.server
import json
import os
import pwd
import subprocess
import threading
import time

from harness import Failure, Skip, plain_build_only, start_daemons, test
from test_cost import FakeImds

GIB_KB = 1024.0 * 1024.0
GB_PER_GIB = 1.073741824


def usage_by_process(ctx, run_id, ids=False):
    """Per process: (step key, CPU seconds, GiB-seconds held), by the rule docs/cost.md states:
    each sample's RSS held until the next (the first's from the start), the last to the end; a
    process never sampled holds its peak for its whole life."""
    rows = ctx.query("SELECT p.id, p.step_id, s.name, p.start_ns, coalesce(p.end_ns, (SELECT max(ts_ns) "
                     "FROM samples x WHERE x.process_id = p.id), p.start_ns), p.cpu_user_ns + p.cpu_sys_ns, "
                     "coalesce(p.max_rss_kb, 0) FROM processes p LEFT JOIN steps s ON s.id = p.step_id "
                     "WHERE p.run_id = ?", run_id)
    out = []
    for pid, step_id, step, start, end, cpu_ns, peak_kb in rows:
        samples = ctx.query("SELECT ts_ns, rss_kb FROM samples WHERE process_id = ? ORDER BY ts_ns", pid)
        if cpu_ns is None:
            cpu_ns = max((c for c, in ctx.query("SELECT cpu_user_ns + cpu_sys_ns FROM samples WHERE "
                                                "process_id = ?", pid)), default=0)
        if not samples:
            gib_s = peak_kb / GIB_KB * (end - start) / 1e9
        else:
            edges = [start] + [t for t, _ in samples] + [end]
            rss = [samples[0][1]] + [r for _, r in samples]
            gib_s = sum(max(0, min(edges[i + 1], end) - max(edges[i], start)) / 1e9 * rss[i] / GIB_KB
                        for i in range(len(rss)))
        key = f"{step} (step {step_id})" if step_id else "(outside steps)"
        out.append((pid if ids else key, cpu_s_of(cpu_ns), gib_s))
    return out


def cpu_s_of(cpu_ns):
    return cpu_ns / 1e9


def expected(parts_usage, w_core, w_gb, pue, grid):
    by = {}
    for key, cpu_s, gib_s in parts_usage:
        b = by.setdefault(key, [0.0, 0.0, 0])
        b[0] += cpu_s
        b[1] += gib_s
        b[2] += 1
    out = {}
    for key, (cpu_s, gib_s, n) in by.items():
        wh = (cpu_s * w_core + gib_s * GB_PER_GIB * w_gb) / 3600 * pue
        out[key] = (n, wh, wh / 1000 * grid)
    return out


def energy_json(ctx, *args):
    p = subprocess.run([ctx.bin("tracer"), "energy", "--db", ctx.db, "--json", *args],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise Failure(f"tracer energy failed ({p.returncode}): {p.stderr}")
    return json.loads(p.stdout)


def compare(ctx, doc, want, what):
    got = {p["key"]: p for p in doc["parts"]}
    ctx.check(set(got) == set(want), f"{what}: parts {sorted(got)} vs {sorted(want)}")
    for key, (n, wh, g) in want.items():
        p = got.get(key)
        if not p:
            continue
        ctx.check(p["processes"] == n, f"{what} {key}: {p['processes']} processes vs {n}")
        ctx.close(p["energy_wh"], wh, 1e-9 * wh + 1e-15, f"{what} {key}: Wh")
        ctx.close(p["co2e_g"], g, 1e-9 * g + 1e-15, f"{what} {key}: g CO2e")
    total_wh = sum(w for _, w, _ in want.values())
    ctx.close(doc["total"]["energy_wh"], total_wh, 1e-9 * total_wh, f"{what}: total Wh")


@test
@plain_build_only("arithmetic over recorded rows in the CLI; the recording itself runs under ASan elsewhere")
def energy_matches_the_documented_model(ctx):
    burn = ctx.helper("cpuburn")
    ctx.tracer_run(["sh", "-c", f"{burn} 700 & /usr/bin/python3 -c 'import time; b = b\"1\" * (160 << 20); "
                    "time.sleep(1.6)'; wait"], "--run", "energy", expect=0)
    run_id = ctx.one("SELECT id FROM runs WHERE name = 'energy'")
    usage = usage_by_process(ctx, run_id)
    held = sum(g for _, _, g in usage)
    # b"1" * n writes every page; a zeroed bytearray's pages may stay untouched (out of RSS).
    ctx.check(held > 0.15, f"the 160 MiB held for 1.6 s shows in the rows: {held:.3f} GiB-s")
    ctx.check(sum(c for _, c, _ in usage) > 0.6, "the 0.7 s burner's CPU is in the rows")

    # Defaults: 12 W per core (this VM's CPU model is in no table), 0.3725 W/GB, PUE 1.67,
    # the world's 475 gCO2e/kWh (no region anywhere: an empty cost.conf is given).
    empty = ctx.path("empty.conf")
    open(empty, "w").close()
    doc = energy_json(ctx, "energy", "--energy-conf", empty, "--cost-conf", empty)
    m = doc["model"]
    ctx.check((m["memory_watts_per_gb"], m["pue"], m["grid_gco2e_per_kwh"]) == (0.3725, 1.67, 475.0),
              f"default coefficients: {m}")
    compare(ctx, doc, expected(usage, m["cpu_watts_per_core"], 0.3725, 1.67, 475.0), "defaults")

    # A configuration: every coefficient changes, and the region names the grid (eu-west-1 is
    # Ireland: 335.99 gCO2e/kWh in the documented table).
    conf = ctx.path("energy.conf")
    with open(conf, "w") as f:
        f.write("[energy]\ncpu-watts-per-core = 20\nmemory-watts-per-gb = 0.5\npue = 1.2\nregion = eu-west-1\n")
    doc = energy_json(ctx, "energy", "--energy-conf", conf, "--cost-conf", empty)
    m = doc["model"]
    ctx.check(m["cpu_watts_per_core"] == 20 and conf in m["cpu_source"] and m["grid_gco2e_per_kwh"] == 335.99
              and "IE" in m["grid_source"], f"configured model: {m}")
    compare(ctx, doc, expected(usage, 20, 0.5, 1.2, 335.99), "configured")

    # The instance type from the cloud's metadata service (a local IMDSv2): m5.xlarge is the
    # m5 family, 4.19 W per vCPU in the documented table, and its region us-east-1 (US-VA,
    # 308 gCO2e/kWh) names the grid when no file does.
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeImds)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        FakeImds.mode, FakeImds.tokens_issued, FakeImds.tokens = "ok", 0, set()
        doc = energy_json(ctx, "energy", "--energy-conf", empty, "--cost-conf", empty, "--imds-endpoint",
                          f"http://127.0.0.1:{server.server_address[1]}", "--gcp-endpoint", "http://127.0.0.1:9")
    finally:
        server.shutdown()
    m = doc["model"]
    ctx.check(m["cpu_watts_per_core"] == 4.19 and m["cpu_estimate"] == "instance-type table" and
              "m5.xlarge (IMDSv2)" in m["cpu_source"] and m["grid_gco2e_per_kwh"] == 308.0 and
              m["region"] == "us-east-1", f"from the metadata service: {m}")
    compare(ctx, doc, expected(usage, 4.19, 0.3725, 1.67, 308.0), "instance type")
    ctx.check(all(p["cpu"] == "estimated (instance-type table)" for p in doc["parts"]),
              f"each part says how: {[p['cpu'] for p in doc['parts']]}")

    # A bad line is refused, naming it.
    with open(conf, "a") as f:
        f.write("pue = 0.5\n")
    p = subprocess.run([ctx.bin("tracer"), "energy", "--db", ctx.db, "--energy-conf", conf, "energy"],
                       capture_output=True, text=True, timeout=60)
    ctx.check(p.returncode == 1 and "pue" in p.stderr, f"a PUE under 1 is refused: {p.returncode} {p.stderr}")

    # show --json carries the same figures (the default files: /etc/tracer's, if any).
    show = json.loads(subprocess.run([ctx.bin("tracer"), "show", "--db", ctx.db, "--json", "energy"],
                                     capture_output=True, text=True, timeout=60).stdout)
    e = show.get("energy", {})
    ctx.check("total" in e and e["total"]["cpu_ns"] == round(sum(c for _, c, _ in usage) * 1e9),
              f"show --json has the run's energy: {e.get('total')}")

    # And the trace export: each process image's Wh as the model gives it with the site's
    # coefficients (the ones `tracer energy` names without options).
    site = energy_json(ctx, "energy")["model"]
    rows = json.loads(subprocess.run([ctx.bin("tracer"), "show", "--db", ctx.db, "--format", "json", "energy"],
                                     capture_output=True, text=True, timeout=60).stdout)
    want = expected(usage_by_process(ctx, run_id, ids=True), site["cpu_watts_per_core"],
                    site["memory_watts_per_gb"], site["pue"], site["grid_gco2e_per_kwh"])
    ctx.check(len(rows) == len(want), f"{len(rows)} trace rows, {len(want)} processes")
    for r in rows:
        _, wh, g = want.get(r["process_id"], (0, None, None))
        ctx.close(r["energy_wh"], wh, 1e-9 * (wh or 0) + 1e-15, f"process {r['process_id']}: Wh in the trace")


class FakePowercap:
    """A powercap tree (intel-rapl:N/{energy_uj,max_energy_range_uj,name}) whose counters a
    thread advances as packages drawing constant power would: package-0 at 30 W wrapping
    every 40 J, package-1 at 8 W, and psys (the platform, which RAPL's packages are part of)
    at 100 W, which must be left out. energy_uj is root's only (0400), as on current kernels,
    so the collector, which reads as nobody, must have opened it before its drop. Values are
    written in place (the collector holds the descriptor), zero-padded so a read never sees a
    half-written number."""
    ZONES = [("package-0", 30.0, 40_000_000), ("package-1", 8.0, 1 << 40), ("psys", 100.0, 1 << 40)]

    def __init__(self, root):
        self.root, self.t0, self.stop_flag = root, time.monotonic(), False
        self.written = [set() for _ in self.ZONES]
        self.fds = []
        for i, (name, _, rng) in enumerate(self.ZONES):
            d = os.path.join(root, f"intel-rapl:{i}")
            os.makedirs(d)
            for f, text in (("name", name + "\n"), ("max_energy_range_uj", f"{rng}\n")):
                with open(os.path.join(d, f), "w") as fh:
                    fh.write(text)
            path = os.path.join(d, "energy_uj")
            self.fds.append(os.open(path, os.O_RDWR | os.O_CREAT, 0o400))
            os.chmod(path, 0o400)
        self.tick()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def value(self, i, t):
        _, watts, rng = self.ZONES[i]
        return int(watts * 1e6 * t) % (rng + 1)

    def tick(self):
        t = time.monotonic() - self.t0
        for i, fd in enumerate(self.fds):
            v = self.value(i, t)
            self.written[i].add(v)
            os.pwrite(fd, f"{v:020d}\n".encode(), 0)

    def run(self):
        while not self.stop_flag:
            self.tick()
            time.sleep(0.01)

    def close(self):
        self.stop_flag = True
        self.thread.join()
        for fd in self.fds:
            os.close(fd)


@test
def rapl_measured_from_a_fake_powercap_tree(ctx):
    """The RAPL path end to end, with a fake powercap tree (--test-powercap-root, a test-only
    flag): the collector opens the root-only counters before its drop and records them every
    sample period; the aggregator keeps them as read; `tracer energy` measures the packages
    (wrap-around counted, psys left out) over the run's span and shares it by CPU time. Truth:
    the power the fake packages were given (38 W), timed by package-1's own counter."""
    tree = ctx.path("powercap")
    fake = FakePowercap(tree)
    ctx.cleanups.append(fake.close)
    sock, db = ctx.path("rapl.sock"), ctx.path("rapl.db")
    start_daemons(ctx, sock, db, extra_agg=["--host-sample-ms", "200"],
                  extra_col=["--test-powercap-root", tree, "--sample-ms", "200"])
    done, run_id = ctx.daemon_run(sock, db, [ctx.helper("cpuburn"), "1500"], "--run", "rapl")
    if done.returncode != 0 or not run_id:
        raise Failure(f"tracer run failed: {done.returncode} {done.stderr}")
    time.sleep(0.6)  # the readings after the run's end, which bracket it
    rows = ctx.query("SELECT zone, name, ts_ns, energy_uj, max_energy_range_uj FROM energy_samples "
                     "ORDER BY zone, ts_ns", db=db)
    by_zone = {}
    for zone, name, ts, uj, rng in rows:
        by_zone.setdefault(zone, []).append((ts, uj))
        ctx.check(name == FakePowercap.ZONES[zone][0] and rng == FakePowercap.ZONES[zone][2],
                  f"zone {zone}: name {name}, range {rng}")
        ctx.check(uj in fake.written[zone], f"zone {zone}: {uj} uJ was never written")
    ctx.check(sorted(by_zone) == [0, 1, 2] and all(len(v) >= 5 for v in by_zone.values()),
              f"readings of each zone every 200 ms: {[(z, len(v)) for z, v in by_zone.items()]}")

    empty = ctx.path("empty.conf")
    open(empty, "w").close()
    p = subprocess.run([ctx.bin("tracer"), "energy", "--db", db, "--json", "--energy-conf", empty,
                        "--cost-conf", empty, "--no-detect", str(run_id)],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise Failure(f"tracer energy: {p.returncode} {p.stderr}")
    doc = json.loads(p.stdout)
    m = doc["model"]["cpu_measured"].get(str(run_id))
    if not m:
        raise Failure(f"run {run_id} not measured: {doc['model']}")
    # The writer's time at each bracketing reading, from package-1's counter (8 W, no wrap).
    p1 = dict(by_zone[1])
    t_a, t_b = p1[m["from_ns"]] / 8e6, p1[m["to_ns"]] / 8e6
    truth = 38.0 * (t_b - t_a)
    # package-0's reading may be up to one 10 ms write older or newer than package-1's.
    ctx.close(m["joules"], truth, 0.03 * truth + 0.6, "the packages' joules over the run (38 W)")
    ctx.check(m["zones"] == 2, f"two packages, psys left out: {m}")
    ctx.check(t_b - t_a > 1.4, f"the bracket covers the 1.5 s run: {t_b - t_a:.2f} s")
    # Shared by CPU time: each part's CPU Wh is its CPU seconds x J / CPU-s of the host.
    run_cpu = sum(c for _, c, _ in usage_by_process_db(ctx, db, run_id))
    w = m["joules"] / max(m["host_cpu_s"], run_cpu)
    ctx.close(m["watts_per_cpu_second"], w, 1e-9 * w, "J per CPU-second")
    for part in doc["parts"]:
        ctx.check(part["cpu"] == "measured (RAPL)", f"{part['key']}: {part['cpu']}")
        ctx.close(part["cpu_wh"], part["cpu_ns"] / 1e9 * w / 3600, 1e-6 * part["cpu_wh"] + 1e-12,
                  f"{part['key']}: CPU Wh by its CPU share")
    ctx.check(run_cpu <= m["host_cpu_s"] * 1.05 + 0.3,
              f"the host's busy CPU ({m['host_cpu_s']:.2f} s) holds the run's ({run_cpu:.2f} s)")
    # --no-rapl: the estimate, saying so.
    p = subprocess.run([ctx.bin("tracer"), "energy", "--db", db, "--energy-conf", empty, "--cost-conf", empty,
                        "--no-detect", "--no-rapl", str(run_id)], capture_output=True, text=True, timeout=60)
    ctx.check("estimated (" in p.stdout and "measured (RAPL)" not in p.stdout, f"--no-rapl: {p.stdout}")
    p = subprocess.run([ctx.bin("tracer"), "energy", "--db", db, "--energy-conf", empty, "--cost-conf", empty,
                        "--no-detect", str(run_id)], capture_output=True, text=True, timeout=60)
    ctx.check("measured (RAPL)" in p.stdout, f"the text says measured: {p.stdout}")


def usage_by_process_db(ctx, db, run_id):
    saved, ctx.db = ctx.db, db
    try:
        return usage_by_process(ctx, run_id)
    finally:
        ctx.db = saved


@test
def rapl_attribution_sums_to_the_package_energy(ctx):
    """Where the kernel offers RAPL, a run's processes' measured CPU energy sums to the
    package energy over its span within 10% on a host the run keeps busy. Skipped where
    there is no /sys/class/powercap/intel-rapl:0 (VMs: this machine has none)."""
    if not os.path.exists("/sys/class/powercap/intel-rapl:0/energy_uj"):
        raise Skip("no RAPL here (/sys/class/powercap/intel-rapl:0 missing): the attribution "
                   "cannot be checked against a real package; rapl_measured_from_a_fake_powercap_tree "
                   "tests the path with a fake tree")
    sock, db = ctx.path("real.sock"), ctx.path("real.db")
    start_daemons(ctx, sock, db, extra_col=["--sample-ms", "200"], extra_agg=["--host-sample-ms", "200"])
    n = os.cpu_count() or 1
    burn = ctx.helper("cpuburn")
    done, run_id = ctx.daemon_run(sock, db, ["sh", "-c", " & ".join([f"{burn} 3000"] * n) + "; wait"],
                                  "--run", "real-rapl")
    time.sleep(0.6)
    p = subprocess.run([ctx.bin("tracer"), "energy", "--db", db, "--json", "--no-detect", str(run_id)],
                       capture_output=True, text=True, timeout=60)
    doc = json.loads(p.stdout)
    m = doc["model"]["cpu_measured"].get(str(run_id))
    if not m:
        raise Failure(f"RAPL exists but run {run_id} was not measured: {doc['model']}")
    attributed = sum(part["cpu_wh"] for part in doc["parts"]) * 3600
    ctx.close(attributed, m["joules"], 0.10 * m["joules"], "attributed J vs the packages' J")


def energy_doc(ctx, *args):
    p = subprocess.run([ctx.bin("tracer"), *args], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise Failure(f"tracer {' '.join(args)}: exit {p.returncode}: {p.stderr[-400:]}")
    return json.loads(p.stdout)


def same_parts(ctx, what, local, fleet):
    """Every part: the same key, CPU method label, processes and CPU; Wh and g CO2e to 1e-9."""
    want, got = {p["key"]: p for p in local["parts"]}, {p["key"]: p for p in fleet["parts"]}
    ctx.check(set(want) == set(got) and want, f"{what}: parts {sorted(got)} vs the host's {sorted(want)}")
    for key, w in want.items():
        g = got.get(key, {})
        ctx.check(g.get("cpu") == w["cpu"] and g.get("processes") == w["processes"] and
                  g.get("cpu_ns") == w["cpu_ns"], f"{what} {key}: fleet {g} vs the host's {w}")
        for k in ("cpu_wh", "energy_wh", "co2e_g"):
            ctx.close(g.get(k), w[k], 1e-9, f"{what} {key}: {k}")


@test
def rapl_measured_energy_is_shipped_and_read_over_the_fleet(ctx):
    """The fake powercap tree's readings shipped (energy_samples at the sink, one per
    reading) and read back: `tracer --fleet energy HOST:ID` and `--fleet energy --since`
    give the host's own `tracer energy` (the same parts, CPU method measured (RAPL), Wh to
    1e-9). Then package-0's counter stops reading (its file emptied under the descriptor the
    collector holds): every failed reading is counted (event_loss hop rapl, `tracer
    status`, the metrics file), exactly one per sample period the other package was read in
    after it."""
    from test_fleet import clickhouse, private_file  # ClickHouse started by the test
    ch = clickhouse(ctx)
    secret = f"user = {ch.user}\npassword = {ch.password}\n"
    cred = private_file(ctx, "ch.cred", secret, owner="nobody")
    mine = private_file(ctx, "reader.cred", secret)
    sink = f"clickhouse://127.0.0.1:{ch.http_port}/tracer"
    tree = ctx.path("powercap")
    fake = FakePowercap(tree)
    ctx.cleanups.append(fake.close)
    sock, db, state = ctx.path("rf.sock"), ctx.path("rf.db"), ctx.path("rf-ship.db")
    metrics_dir = ctx.path("metrics")
    os.mkdir(metrics_dir)
    os.chown(metrics_dir, pwd.getpwnam("nobody").pw_uid, -1)  # the aggregator's, after its drop
    prom = os.path.join(metrics_dir, "tracer.prom")
    agg, col = start_daemons(ctx, sock, db, extra_agg=["--host-sample-ms", "200", "--outbox-mib", "64",
                                                       "--shipper-state", state, "--scope", "runs",
                                                       "--metrics-file", prom],
                             extra_col=["--test-powercap-root", tree, "--sample-ms", "200"])
    done, run_id = ctx.daemon_run(sock, db, [ctx.helper("cpuburn"), "1500"], "--run", "rapl-fleet")
    if done.returncode != 0 or not run_id:
        raise Failure(f"tracer run failed: {done.returncode} {done.stderr}")
    time.sleep(0.6)  # the readings after the run's end, which bracket it
    fake.stop_flag = True
    fake.thread.join()
    os.ftruncate(fake.fds[0], 0)  # package-0 now reads as nothing
    time.sleep(1.5)
    ctx.stop(col)  # its last frame carries the final count
    time.sleep(1)
    last0 = ctx.one("SELECT max(ts_ns) FROM energy_samples WHERE zone = 0", db=db)
    periods = ctx.one("SELECT count(*) FROM energy_samples WHERE zone = 1 AND ts_ns > ?", last0, db=db)
    failed = ctx.one("SELECT coalesce(sum(count), 0) FROM event_loss WHERE hop = 'rapl' AND "
                     "event_type = 'read_failed'", db=db)
    ctx.check(periods >= 5 and failed == periods,
              f"failed readings counted: {failed}, one per period package-1 was read after: {periods}")
    from test_metrics import wait_for_metrics
    lost = ("tracer_events_lost_total", frozenset({("hop", "rapl"), ("type", "read_failed")}))
    series = wait_for_metrics(prom, lambda m: m.get(lost) == failed, timeout=25)
    ctx.check(series.get(lost) == failed, f"the metrics file has them: {series.get(lost)} of {failed}")
    ctx.stop(agg)
    p = subprocess.run([ctx.bin("tracer"), "status", "--db", db, "--json"], capture_output=True, text=True,
                       timeout=60)
    losses = json.loads(p.stdout).get("losses", [])
    ctx.check({"hop": "rapl", "event_type": "read_failed", "count": failed} in losses,
              f"tracer status shows the failed readings: {losses}")
    p = subprocess.run([ctx.bin("tracer"), "status", "--db", db], capture_output=True, text=True, timeout=60)
    ctx.check(any(ln.split() == ["rapl", "read_failed", str(failed)] for ln in p.stdout.splitlines()),
              f"the status text lists them: {p.stdout[-600:]}")

    ship = subprocess.run([ctx.bin("tracer-shipper"), "--db", db, "--state", state, "--sink", sink,
                           "--host-id", "rapl-host", "--credentials", cred, "--user", "nobody", "--once"],
                          capture_output=True, text=True, timeout=300)
    ctx.check(ship.returncode == 0, f"shipped: {ship.returncode} {ship.stderr[-300:]}")
    local_n = ctx.one("SELECT count(*) FROM energy_samples", db=db)
    at_sink = int(ch.query("SELECT count() FROM tracer.energy_samples FINAL WHERE _host = 'rapl-host'"))
    ctx.check(at_sink == local_n > 0, f"every reading at the sink once: {at_sink} of {local_n}")

    conf = private_file(ctx, "fleet.conf", f"[fleet]\nurl = {sink}\ncredentials = {mine}\n")
    empty = ctx.path("empty.conf")
    open(empty, "w").close()
    base = ("--energy-conf", empty, "--cost-conf", empty, "--no-detect")
    local = energy_doc(ctx, "energy", "--db", db, "--json", *base, str(run_id))
    fleet = energy_doc(ctx, "--fleet", conf, "energy", "--json", *base, f"rapl-host:{run_id}")
    m = local["model"]["cpu_measured"].get(str(run_id))
    fm = list(fleet["model"]["cpu_measured"].values())
    if not (m and len(fm) == 1):
        raise Failure(f"measured on the host and over the fleet: {m} {fm}")
    for k in ("joules", "host_cpu_s", "watts_per_cpu_second", "from_ns", "to_ns", "zones"):
        ctx.close(fm[0][k], m[k], 1e-9 * abs(m[k]), f"the fleet's measurement: {k}")
    ctx.check(all(p["cpu"] == "measured (RAPL)" for p in local["parts"]), f"measured: {local['parts']}")
    same_parts(ctx, f"energy rapl-host:{run_id}", local, fleet)
    ctx.close(fleet["total"]["energy_wh"], local["total"]["energy_wh"], 1e-9, "the run's total Wh")
    for by in ("pipeline", "run", "tool"):
        args = ("energy", "--since", "1d", "--by", by, "--json", *base)
        local = energy_doc(ctx, *args, "--db", db)
        fleet = energy_doc(ctx, "--fleet", conf, *args)
        ctx.check(any(p["cpu"].startswith("measured (RAPL)") for p in local["parts"]),
                  f"--since --by {by}: the host measured: {local['parts']}")
        same_parts(ctx, f"energy --since 1d --by {by}", local, fleet)
