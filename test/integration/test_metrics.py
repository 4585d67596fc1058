"""The Prometheus recipe of docs/operations.md, end to end: the aggregator writes its
metrics file under the packaged unit's umask, Debian's prometheus-node-exporter reads it
as user prometheus through a symlink in its textfile directory, and a scrape finds
tracer's series with no scrape error."""
import os
import pwd
import re
import shutil
import socket
import subprocess
import time
import urllib.request

from harness import Failure, plain_build_only, test
from ports import free_port

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def parse_exposition(text):
    """{(name, frozenset of label pairs): value} of a Prometheus text exposition."""
    series = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$', line)
        if not m:
            continue
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        series[(m.group(1), labels)] = float(m.group(4))
    return series


def scrape(port, timeout=20):
    end = time.time() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                return r.read().decode()
        except OSError:
            if time.time() > end:
                raise
            time.sleep(0.2)


def wait_for_metrics(path, want, timeout=30):
    """The metrics file's series once want(series) holds (it is rewritten every 10 s)."""
    end = time.time() + timeout
    series = {}
    while time.time() < end:
        try:
            series = parse_exposition(open(path).read())
            if want(series):
                return series
        except OSError:
            pass
        time.sleep(0.5)
    return series


def value(series, name, **labels):
    return series.get((name, frozenset(labels.items())))


def tracer_version():
    text = open(os.path.join(REPO, "common/version.h")).read()
    return re.search(r'#define TRACER_VERSION "([^"]+)"', text).group(1)


@test
@plain_build_only("starts node_exporter; the daemons run under ASan elsewhere")
def node_exporter_reads_the_metrics_as_packaged(ctx):
    """As docs/operations.md says: the aggregator (umask 0027 as in its unit, an unprivileged
    user) writes its metrics file in a directory of its own; Debian's node_exporter, as user
    prometheus, reads it through a symlink in its root-owned textfile directory. The scrape
    has node_textfile_scrape_error 0 and tracer's series: tracer_build_info with the
    version of common/version.h; tracer_runs_running counts our `tracer run -- sleep` while
    it runs (others' runs on this host count too: at the end it equals the database's runs
    not ended); the database size equals the file's size stat() reads once the aggregator
    stopped; processes recorded at least the rows; lost events by hop.
    `promtool check metrics` passes. Restarting the collector and the aggregator leaves the
    set of series (names and labels) as it was and the host's event counter does not fall:
    no label is a random stream id or a value that changes. On the code before: the file
    was 0640 (scrape error 1), and every collector start made new series."""
    exporter = shutil.which("prometheus-node-exporter")
    if not exporter or not shutil.which("promtool"):
        raise Failure("prometheus-node-exporter and prometheus (promtool) are needed (deploy/install-deps.sh tests)")
    try:
        pwd.getpwnam("prometheus")
    except KeyError:
        raise Failure("no user prometheus (the prometheus-node-exporter package makes it)")
    nobody = pwd.getpwnam("nobody")
    metrics_dir, textfile, data = ctx.path("tracer-metrics"), ctx.path("textfile"), ctx.path("data")
    os.chmod(ctx.tmp, 0o755)
    for d, owner in ((metrics_dir, nobody), (textfile, None), (data, nobody)):
        os.mkdir(d, 0o755 if d != data else 0o750)
        if owner:
            os.chown(d, owner.pw_uid, owner.pw_gid)
    prom = os.path.join(metrics_dir, "tracer.prom")
    os.symlink(prom, os.path.join(textfile, "tracer.prom"))  # the recipe's one command
    sock, db = os.path.join(data, "s.sock"), os.path.join(data, "t.db")

    def start():
        agg = ctx.spawn([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db, "--user", "nobody",
                         "--scope", "runs", "--metrics-file", prom], preexec_fn=lambda: os.umask(0o027))
        end = time.time() + 20
        while not os.path.exists(sock) and time.time() < end:
            time.sleep(0.05)
        col = ctx.spawn([ctx.bin("tracer-collector"), "--socket", sock, "--user", "nobody"])
        end = time.time() + 40
        while time.time() < end:
            if subprocess.run(["sqlite3", f"file:{db}?mode=ro", "SELECT count(*) FROM collector_stats WHERE final = 0 "
                               "AND snapshot_processes > 0"], capture_output=True, text=True).stdout.strip() not in ("", "0"):
                return agg, col
            time.sleep(0.1)
        raise Failure("the collector's snapshot never reached the database")

    agg, col = start()
    sleeper = subprocess.Popen([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--", "sleep", "14"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ctx.procs.append(sleeper)
    during = wait_for_metrics(prom, lambda s: (value(s, "tracer_runs_running") or 0) >= 1, timeout=12)
    def sql(query):
        return subprocess.run(["sqlite3", f"file:{db}?mode=ro", query], capture_output=True, text=True).stdout.strip()
    mine = f"SELECT count(*) FROM runs WHERE launcher_pid = {sleeper.pid} AND end_ns IS NULL"
    # Others' `tracer run`s on this host are runs here too (the daemons record the host):
    # ours is counted while it runs; the count is every run not ended (checked at the end).
    ctx.check((value(during, "tracer_runs_running") or 0) >= 1 and sql(mine) == "1",
              f"our run is counted while tracer run -- sleep runs: {value(during, 'tracer_runs_running')}, "
              f"not ended in the database: {sql(mine)}")
    sleeper.wait(timeout=60)
    ctx.check(sleeper.returncode == 0 and sql(mine) == "0", f"tracer run -- sleep: {sleeper.returncode}, ended")

    port = free_port()
    exp = ctx.spawn(["setpriv", "--reuid=prometheus", "--regid=prometheus", "--clear-groups", exporter,
                     f"--collector.textfile.directory={textfile}", f"--web.listen-address=127.0.0.1:{port}",
                     "--collector.disable-defaults", "--collector.textfile"])
    ctx.cleanups.append(lambda: ctx.stop(exp))
    scraped = parse_exposition(scrape(port))
    ctx.check(value(scraped, "node_textfile_scrape_error") == 0,
              f"node_textfile_scrape_error 0: {value(scraped, 'node_textfile_scrape_error')} "
              f"(file mode {oct(os.stat(prom).st_mode & 0o777) if os.path.exists(prom) else 'none'})")
    ctx.check(value(scraped, "tracer_build_info", version=tracer_version()) == 1,
              f"tracer_build_info{{version={tracer_version()!r}}} 1: "
              f"{[k for k in scraped if k[0] == 'tracer_build_info']}")
    host = socket.gethostname()
    ctx.check((value(scraped, "tracer_collector_events_total", host=host) or 0) > 0,
              f"the host's events: {[k for k in scraped if k[0] == 'tracer_collector_events_total']}")
    ctx.check(value(scraped, "tracer_collector_running", host=host) == 1, "the collector runs")
    ctx.check(value(scraped, "tracer_collector_lost_events_total", host=host, hop="kernel") is not None,
              "lost events by hop are there, zero or not")
    ctx.check((value(scraped, "tracer_processes_recorded_total") or 0) >= 1,
              f"processes recorded: {value(scraped, 'tracer_processes_recorded_total')}")
    check = subprocess.run(["promtool", "check", "metrics"], stdin=open(prom), capture_output=True, text=True)
    ctx.check(check.returncode == 0, f"promtool check metrics: {check.stdout} {check.stderr}")

    def names_and_labels(series):
        return {k for k in series if k[0].startswith("tracer_") and k[0] != "tracer_build_info"}
    ctx.stop(col)
    ctx.stop(agg)
    final = parse_exposition(open(prom).read())  # written at the aggregator's exit
    before = names_and_labels(final)
    events_before = value(final, "tracer_collector_events_total", host=host)
    ctx.check(value(final, "tracer_runs_running") == float(sql("SELECT count(*) FROM runs WHERE end_ns IS NULL")),
              f"runs running {value(final, 'tracer_runs_running')}: the database's runs not ended "
              f"{sql('SELECT count(*) FROM runs WHERE end_ns IS NULL')}")
    ctx.check((value(final, "tracer_processes_recorded_total") or 0) >= float(sql("SELECT count(*) FROM processes")),
              f"processes recorded {value(final, 'tracer_processes_recorded_total')} >= the rows "
              f"{sql('SELECT count(*) FROM processes')}")
    ctx.check(value(final, "tracer_database_size_bytes") == os.stat(db).st_size,
              f"database size {value(final, 'tracer_database_size_bytes')} vs stat {os.stat(db).st_size}")
    ctx.check(value(final, "tracer_collector_running", host=host) == 0, "the stopped collector said so")
    agg, col = start()
    restarted = wait_for_metrics(prom, lambda s: value(s, "tracer_collector_running", host=host) == 1)
    ctx.check(names_and_labels(restarted) == before,
              f"the same series after restarts: new {sorted(names_and_labels(restarted) - before)}, "
              f"gone {sorted(before - names_and_labels(restarted))}")
    ctx.check((value(restarted, "tracer_collector_events_total", host=host) or 0) >= events_before,
              f"the host's event counter does not fall: {events_before} -> "
              f"{value(restarted, 'tracer_collector_events_total', host=host)}")
    ctx.stop(col)
    ctx.stop(agg)


@test
def the_documented_alert_fires_on_loss(ctx):
    """The rule file of docs/operations.md, as printed there: `promtool check rules` accepts
    it and `promtool test rules` shows TracerLosingEvents firing for the instance whose
    tracer_events_lost_total rose (0 -> 5 at minute 3), for neither before, and never for the
    instance that lost nothing; TracerMetricsStale fires once the file's timestamp stops."""
    if not shutil.which("promtool"):
        raise Failure("promtool is needed (package prometheus; deploy/install-deps.sh tests)")
    doc = open(os.path.join(REPO, "docs/operations.md")).read()
    m = re.search(r"```yaml\n(groups:.*?)```", doc, re.S)
    if not m:
        raise Failure("docs/operations.md shows no rule file")
    rules = ctx.path("tracer.yml")
    with open(rules, "w") as f:
        f.write(m.group(1))
    check = subprocess.run(["promtool", "check", "rules", rules], capture_output=True, text=True)
    ctx.check(check.returncode == 0, f"promtool check rules: {check.stdout} {check.stderr}")
    with open(ctx.path("test.yml"), "w") as f:
        f.write("""rule_files: [tracer.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'tracer_events_lost_total{instance="n1",hop="kernel",type="exec"}'
        values: '0 0 0 5 5 5 5 5 5 5'
      - series: 'tracer_events_lost_total{instance="n2",hop="kernel",type="exec"}'
        values: '0 0 0 0 0 0 0 0 0 0'
      - series: 'tracer_metrics_timestamp_seconds{instance="n1"}'
        values: '0 60 120 180 180 180 180 180 180 180'
    alert_rule_test:
      - eval_time: 2m
        alertname: TracerLosingEvents
        exp_alerts: []
      - eval_time: 5m
        alertname: TracerLosingEvents
        exp_alerts:
          - exp_labels: {severity: warning, instance: n1}
            exp_annotations:
              summary: "tracer lost events on n1: see tracer status"
      - eval_time: 4m
        alertname: TracerMetricsStale
        exp_alerts: []
      - eval_time: 6m
        alertname: TracerMetricsStale
        exp_alerts:
          - exp_labels: {severity: warning, instance: n1}
""")
    p = subprocess.run(["promtool", "test", "rules", "test.yml"], cwd=ctx.tmp, capture_output=True, text=True)
    ctx.check(p.returncode == 0, f"promtool test rules: {p.stdout[-1500:]} {p.stderr[-1500:]}")
