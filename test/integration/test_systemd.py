"""The three units under a real systemd: a Debian 12 container made with
debootstrap (cached in /var/cache/tracer-it) and booted with systemd-nspawn.
`make install` puts tracer in it; sysusers and tmpfiles create the users and
directories at boot; the services start as their users; a workload reaches the
database and ClickHouse; restarting the aggregator or the shipper loses nothing.
"""
import email.utils
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import time

from clickhouse import ClickHouse
from harness import Failure, plain_build_only, test
from nspawn import Container, base_rootfs, configure_shipper

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


# The runs check_quick_run makes (each one /bin/true more), left out of the workloads' counts.
QUICK_RUNS = "SELECT id FROM tracer.runs FINAL WHERE name LIKE 'quick-%'"


def check_quick_run(ctx, box, user=None):
    """`tracer run -- true` with the installed daemons returns within 1 s of its command,
    timed inside the container, with no warning that the wait for its events ran out (it
    waited 30 s in nspawn while the boot id nspawn mounts was compared with the daemons')."""
    who = ["runuser", "-u", user, "--"] if user else []
    timed = ("a=$(date +%s%N); " + " ".join(who) + " tracer run --run quick-$(date +%s%N) -- true 2>/tmp/quick.err;"
             " rc=$?; b=$(date +%s%N); echo $rc $(( (b - a) / 1000000 )); cat /tmp/quick.err >&2")
    p = box.run("sh", "-c", timed)
    rc, ms = (p.stdout.split() + ["?", "?"])[:2]
    ctx.check(rc == "0" and ms.isdigit() and int(ms) < 1000 and "not every event" not in p.stderr,
              f"tracer run -- true{' as ' + user if user else ''} returns within 1 s: rc {rc}, {ms} ms\n"
              f"{p.stderr[-600:]}")
    print(f"    tracer run -- true{' as ' + user if user else ''} in the container: {ms} ms", flush=True)
    return int(ms) if ms.isdigit() else None


@test
@plain_build_only("CI time: a full systemd boot; the daemons' code runs under ASan in every other test")
def three_units_under_real_systemd(ctx):
    base = base_rootfs()
    root = ctx.path("root")
    subprocess.run(["cp", "-a", base, root], check=True)
    p = subprocess.run(["make", "-C", REPO, "install", f"BUILD={ctx.build}", f"SANITIZE={ctx.sanitized}", f"DESTDIR={root}", "PREFIX=/usr",
                        "SYSCONFDIR=/etc/tracer"], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise Failure(f"make install: {p.stderr[-800:]}")
    shutil.copy(ctx.helper("storm"), os.path.join(root, "usr/local/bin/storm"))
    # The shipper is configured like an operator would: a config file and a 0600 credentials file.
    ch = ClickHouse(ctx.path("ch"))
    ch.start()
    ctx.cleanups.append(ch.stop)
    configure_shipper(root, ch)
    subprocess.run(["systemctl", f"--root={root}", "enable", "tracer.target", "tracer-aggregator.service",
                    "tracer-collector.service", "tracer-shipper.service"], capture_output=True, check=True)
    # A bpffs of the machine's own, as systemd mounts one on a host: the collector pins its
    # programs and buffers there (--keep-pinned), and nspawn gives a container none.
    bpffs = ctx.path("bpffs")
    os.mkdir(bpffs)
    subprocess.run(["mount", "-t", "bpf", "bpf", bpffs], check=True)
    ctx.cleanups.append(lambda: subprocess.run(["umount", "-l", bpffs]))
    box = Container(ctx, root, extra=(f"--bind={bpffs}:/sys/fs/bpf",))
    ctx.cleanups.append(box.poweroff)
    state = box.boot()
    active = box.run("systemctl", "is-active", "tracer-aggregator", "tracer-collector", "tracer-shipper").stdout.split()
    if active != ["active"] * 3:
        logs = box.run("journalctl", "-b", "--no-pager", "-n", "60", "-u", "tracer-*").stdout
        raise Failure(f"units {active} (system {state}):\n{logs[-3000:]}")
    # Log lines carry journald priorities: the start line is info, so `-p info` finds it
    # and `-p warning` (warning and worse) does not.
    def journal(prio):
        return box.run("journalctl", "-b", "--no-pager", "-o", "cat", "-p", prio, "-u",
                       "tracer-aggregator").stdout
    ctx.check("listening on /run/tracer/collector.sock" in journal("info")
              and "listening on" not in journal("warning"),
              f"journald priorities: info {journal('info')[-300:]!r}, warning {journal('warning')[-300:]!r}")
    # Each runs as its own user; the collector has dropped everything.
    users = {}
    for unit, user in (("tracer-aggregator", "tracer-aggregator"), ("tracer-collector", "tracer-collector"),
                       ("tracer-shipper", "tracer-shipper")):
        pid = box.pid_of(unit)  # in the container's PID namespace: read it from inside
        st = dict(line.split(":", 1) for line in box.run("cat", f"/proc/{pid}/status").stdout.splitlines())
        uid = st["Uid"].split()[0]
        name = box.run("getent", "passwd", uid).stdout.split(":")[0]
        users[unit] = name
        ctx.check(name == user, f"{unit} runs as {name}, expected {user}")
        ctx.check(int(st["CapEff"], 16) == 0, f"{unit} CapEff {st['CapEff'].strip()}")
    col = dict(line.split(":", 1) for line in
               box.run("cat", f"/proc/{box.pid_of('tracer-collector')}/status").stdout.splitlines())
    # Mode 2 (filtering): the unit's SystemCallFilter= and our own allow-list on top
    # (collector_runs_unprivileged_and_confined proves ours by a forbidden call).
    seccomp = "2"
    ctx.check(col["Seccomp"].strip() == seccomp and col["NoNewPrivs"].strip() == "1",
              f"collector confined: Seccomp {col['Seccomp'].strip()} (want {seccomp}), "
              f"NoNewPrivs {col['NoNewPrivs'].strip()}")
    ls = box.run("stat", "-c", "%a %U %G", "/var/lib/tracer", "/var/lib/tracer/tracer.db", "/run/tracer").stdout.split("\n")
    ctx.check(ls[0] == "2750 tracer-aggregator tracer" and ls[1].startswith("640 tracer-aggregator"),
              f"data permissions: {ls}")

    # The metrics file the Prometheus recipe links (docs/operations.md): 0644 under UMask=0027.
    # Written every 10 s (the first at start, unless /run/tracer-metrics was not there
    # yet): within one period and a little.
    deadline = time.time() + 12
    while True:
        prom = box.run("sh", "-c", "stat -c %a /run/tracer-metrics/tracer.prom && "
                       "grep -c '^tracer_build_info{version=' /run/tracer-metrics/tracer.prom").stdout.split()
        if prom == ["644", "1"] or time.time() > deadline:
            break
        time.sleep(0.5)
    ctx.check(prom == ["644", "1"], f"the metrics file, world-readable, with build info: {prom}")
    db = os.path.join(root, "var/lib/tracer/tracer.db")

    def runs(name):
        return subprocess.run(["sqlite3", f"file:{db}?mode=ro", f"SELECT count(*) FROM processes p JOIN runs r "
                               f"ON r.id = p.run_id WHERE r.name = '{name}' AND p.exe = '/usr/bin/true' "
                               f"AND p.exit_code = 0"], capture_output=True, text=True).stdout.strip()
    check_quick_run(ctx, box)
    first = box.run("tracer", "run", "--run", "first", "--", "storm", "300", "2", "/bin/true", check=True)
    if runs("first") != "300":
        logs = "\n".join(line for line in box.run("journalctl", "-b", "--no-pager", "-n", "80", "-u",
                                                     "tracer-*").stdout.splitlines()
                         if "probes " not in line and "migrated" not in line)
        inside = box.run("tracer", "runs").stdout + first.stdout[-1000:] + first.stderr[-2000:]
        inside += box.run("tracer", "status").stdout[-2000:]
        for unit in ("tracer-aggregator", "tracer-collector"):
            pid = box.pid_of(unit)
            inside += unit + ": " + box.run("sh", "-c", f"for t in /proc/{pid}/task/*; do echo $(cat $t/comm) "
                                            f"$(cat $t/wchan) $(cat $t/stat | cut -d' ' -f3); done").stdout
        raise Failure(f"the workload reached the database: {runs('first')} of 300\n{inside}\n{logs[-3000:]}")
    # Restart the aggregator, then the shipper, in the middle of a storm: nothing lost.
    wl = subprocess.Popen(["nsenter", "-t", str(box.leader), "-m", "-u", "-i", "-p", "--", "tracer", "run",
                           "--run", "restarts", "--", "sh", "-c", "storm 1500 1 /bin/true; sleep 1; storm 1500 1 /bin/true"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ctx.procs.append(wl)
    time.sleep(0.5)
    box.run("systemctl", "restart", "tracer-aggregator", check=True)
    time.sleep(1.0)
    box.run("systemctl", "restart", "tracer-shipper", check=True)
    _, err = wl.communicate(timeout=180)
    ctx.check(wl.returncode == 0, f"workload across restarts: {wl.returncode} {err[-300:]}")
    ctx.check(runs("restarts") == "3000", f"restarts lost nothing: {runs('restarts')} of 3000")
    # The shipper inside delivered to ClickHouse outside; wait for the outbox to drain.
    end = time.time() + 60
    got = []
    count_sql = ("SELECT count() FROM tracer.processes FINAL WHERE exe = '/usr/bin/true' AND exit_code = 0 "
                 f"AND run_id NOT IN ({QUICK_RUNS})")
    while time.time() < end:  # runs ship live, before their processes: wait for both
        got = ch.rows("SELECT name FROM tracer.runs FINAL WHERE name IN ('first', 'restarts') ORDER BY name")
        if got == [["first"], ["restarts"]] and ch.query(count_sql).strip() == "3300":
            break
        time.sleep(1)
    ctx.check(got == [["first"], ["restarts"]], f"both runs in ClickHouse: {got}")
    n = ch.query("SELECT count() FROM tracer.processes FINAL WHERE exe = '/usr/bin/true' AND exit_code = 0 "
                   f"AND run_id NOT IN ({QUICK_RUNS})").strip()
    ctx.check(n == "3300", f"every /bin/true shipped once: {n}")
    status = json.loads(box.run("tracer", "status", "--json").stdout or "{}")
    ctx.check(status.get("listening") is True, f"tracer status inside: {status.get('listening')}")
    check_collector_restart(ctx, box, runs)


def check_collector_restart(ctx, box, runs):
    """`systemctl restart tracer-collector` in the middle of a storm keeps the pinned
    programs and buffers (its stop is a restart job's), so the next collector resumes the
    stream and nothing is lost; `systemctl stop` removes the pins."""
    wl = subprocess.Popen(["nsenter", "-t", str(box.leader), "-m", "-u", "-i", "-p", "--", "tracer", "run",
                           "--run", "collector-restart", "--", "sh", "-c",
                           "storm 1500 1 /bin/true; sleep 1; storm 1500 1 /bin/true"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ctx.procs.append(wl)
    time.sleep(0.7)
    box.run("systemctl", "restart", "tracer-collector", check=True)
    _, err = wl.communicate(timeout=180)
    ctx.check(wl.returncode == 0, f"workload across a collector restart: {wl.returncode} {err[-300:]}")
    log = box.run("journalctl", "-b", "--no-pager", "-o", "cat", "-u", "tracer-collector").stdout
    ctx.check("resuming the stream" in log, f"the restarted collector resumed the pinned set: {log[-1500:]}")
    ctx.check(runs("collector-restart") == "3000",
              f"a collector restart lost nothing: {runs('collector-restart')} of 3000")
    box.run("systemctl", "stop", "tracer-collector", check=True)
    left = box.run("sh", "-c", "ls /sys/fs/bpf/tracer 2>/dev/null").stdout.split()
    ctx.check(left == [], f"a stop removes the pins: {left}")
    started = box.run("systemctl", "start", "tracer-collector")
    if started.returncode != 0:
        raise Failure("tracer-collector did not start again: " + box.run(
            "journalctl", "-b", "--no-pager", "-o", "cat", "-n", "40", "-u", "tracer-collector").stdout[-3000:])


@test
@plain_build_only("installs into a staging root; the ASan daemons are covered elsewhere")
def installed_tracer_run_works_and_keeps_edited_config(ctx):
    """`make install` into a staging root, then the installed `tracer run` (daemons in
    ../libexec/tracer, none beside it) records a workload whose CPU matches wait4's
    rusage of it (the measure helper's own report; 5 ms + 2%). A second install keeps
    a configuration file the operator edited and puts ours beside it as .dist; uninstall
    removes only what is as shipped."""
    root = ctx.path("staged")
    def make(*targets):
        return subprocess.run(["make", "-C", REPO, *targets, f"BUILD={ctx.build}", f"SANITIZE={ctx.sanitized}",
                               f"DESTDIR={root}", "PREFIX=/usr"], capture_output=True, text=True, timeout=600)
    p = make("install")
    if p.returncode != 0:
        raise Failure(f"make install: {p.stderr[-800:]}")
    tracer = os.path.join(root, "usr/bin/tracer")
    ctx.check(not os.path.exists(os.path.join(root, "usr/bin/tracer-aggregator"))
              and os.access(os.path.join(root, "usr/libexec/tracer/tracer-aggregator"), os.X_OK),
              "the daemons are in libexec only")
    out, db = ctx.path("m.json"), ctx.path("installed.db")
    work = ("import hashlib, os\n"
            "for i in range(3):\n"
            "    if os.fork() == 0:\n"
            "        h = b'x'\n"
            "        for _ in range(150000 * (i + 1)): h = hashlib.sha256(h).digest()\n"
            "        os._exit(0)\n"
            "    os.wait()\n")
    r = subprocess.run([tracer, "run", "--db", db, "--run", "installed", "--", ctx.helper("measure"), out,
                        "--", "python3", "-c", work], capture_output=True, text=True, timeout=300)
    ctx.check(r.returncode == 0, f"installed tracer run exited {r.returncode}: {r.stderr[-1500:]}")
    if r.returncode != 0:
        return
    with open(out) as f:
        truth = json.load(f)
    # The run's CPU is everything under measure's child: python and its forks (wait4
    # counts waited-for children too), i.e. the run total minus the measure process.
    cpu = ctx.one("SELECT sum(cpu_user_ns + cpu_sys_ns) FROM processes p JOIN runs r ON r.id = p.run_id "
                  "WHERE r.name = 'installed' AND p.exe NOT LIKE '%/measure'", db=db)
    want = truth["utime_ns"] + truth["stime_ns"]
    ctx.close(cpu, want, 5_000_000 + want // 50, "the installed run's CPU vs wait4 (ns)")

    conf = os.path.join(root, "etc/tracer/tools.allow")
    with open(conf, "a") as f:
        f.write("# mine\n")
    p = make("install")
    ctx.check(p.returncode == 0 and open(conf).read().endswith("# mine\n")
              and os.path.exists(conf + ".dist"), f"an edited tools.allow survives reinstall: {p.stdout[-300:]}")
    p = make("uninstall")
    left = sorted(os.listdir(os.path.join(root, "etc/tracer")))
    ctx.check(p.returncode == 0 and left == ["tools.allow"] and not os.path.exists(tracer),
              f"uninstall keeps only the edited file: {left}")


def newest_deb(directory):
    debs = sorted((os.path.join(directory, f) for f in os.listdir(directory)
                   if f.startswith("tracer_") and f.endswith(".deb")), key=os.path.getmtime)
    return debs[-1] if debs else None


def previous_release_deb(ctx):
    """The package as it was just before the newest schema migration (or at
    $TRACER_UPGRADE_FROM), built from git with a version below this one's, so an
    upgrade crosses a real schema change. Returns (deb, its schema version)."""
    ref = os.environ.get("TRACER_UPGRADE_FROM")
    if not ref:
        newest = sorted(f for f in os.listdir(os.path.join(REPO, "aggregator/schema")) if f.endswith(".sql"))[-1]
        # -m --first-parent: a migration renumbered in a merge was added by that merge
        added = subprocess.run(["git", "-C", REPO, "log", "-m", "--first-parent", "--format=%H",
                                "--diff-filter=A", "--",
                                f"aggregator/schema/{newest}"], capture_output=True, text=True).stdout.split()
        if not added:
            raise Failure(f"git history of aggregator/schema/{newest} not found (a shallow clone?)")
        ref = added[-1] + "^"
    sha = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", ref], capture_output=True, text=True,
                         check=True).stdout.strip()
    out = ctx.path("previous")
    src = os.path.join(out, "src")
    os.makedirs(src)
    archive = subprocess.run(["git", "-C", REPO, "archive", sha], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
    changelog = os.path.join(src, "debian/changelog")
    old = open(changelog).read()
    upstream = re.match(r"tracer \(([^)]+)\)", old).group(1)
    version = f"{upstream}~git{sha}"  # '~' sorts before: below this checkout's version
    with open(changelog, "w") as f:
        f.write(f"tracer ({version}) unstable; urgency=medium\n\n  * Rebuilt from {sha} to test upgrades.\n\n"
                f" -- tracer developers <tracer@example.org>  {email.utils.formatdate()}\n\n" + old)
    p = subprocess.run(["dpkg-buildpackage", "-b", "-us", "-uc"], cwd=src, capture_output=True, text=True,
                       timeout=900)
    if p.returncode != 0:
        raise Failure(f"building the previous release ({sha}): {p.stdout[-1500:]} {p.stderr[-800:]}")
    schema = len([f for f in os.listdir(os.path.join(src, "aggregator/schema")) if f.endswith(".sql")])
    return newest_deb(out), version, schema


def package_test_wanted(fn):
    """Runs only under `make package-test` (it builds the .deb: minutes CI has not got)."""
    fn.package_only = True
    return fn


@test
@plain_build_only("installs the Debian package; run by make package-test")
@package_test_wanted
def debian_package_installs_upgrades_and_removes(ctx):
    """The .deb from `make deb`: lintian finds no error. Into a fresh Debian 12 booted
    with systemd: the previous release (the package as it was before the newest schema
    migration, rebuilt from git) installs, its units start as their users and ship to a
    local ClickHouse; root and an unprivileged analyst each record a workload of 50
    /bin/true (the loop's own count is the ground truth) and she reads them with
    `tracer show` and `tracer status`; upgrading to this package keeps an edited
    conffile, migrates the database, restarts the units onto the new binaries and
    loses nothing; after a restart of tracer.target more runs are recorded; every
    process reaches ClickHouse exactly once; removal stops the units and keeps data
    and configuration."""
    deb = newest_deb(os.path.dirname(REPO))
    if not deb:
        raise Failure("no ../tracer_*.deb: make package-test builds it first")
    lint = subprocess.run(["lintian", "--no-tag-display-limit", deb], capture_output=True, text=True, timeout=600)
    # warnings too: each one right for tracer is overridden, with its reason, in
    # debian/tracer.lintian-overrides
    errors = [line for line in lint.stdout.splitlines() if line.startswith(("E:", "W:"))]
    ctx.check(not errors, "lintian errors or warnings:\n" + "\n".join(errors))
    contents = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True).stdout
    for path in ("./usr/bin/tracer", "./usr/libexec/tracer/tracer-collector", "./usr/lib/sysusers.d/tracer.conf",
                 "./usr/lib/tmpfiles.d/tracer.conf", "./usr/share/man/man1/tracer.1.gz", "./etc/tracer/tools.allow",
                 "./usr/share/man/man8/tracer-collector.8.gz", "./usr/share/man/man8/tracer-aggregator.8.gz",
                 "./usr/share/man/man8/tracer-shipper.8.gz"):
        ctx.check(path in contents, f"the package holds {path}")
    conffiles = subprocess.run(["dpkg-deb", "--ctrl-tarfile", deb], capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(conffiles)) as t:
        listed = t.extractfile("./conffiles").read().decode().split()
    ctx.check({"/etc/tracer/tools.allow", "/etc/tracer/collector.conf"} <= set(listed),
              f"/etc/tracer files are conffiles: {listed}")
    new_version = subprocess.run(["dpkg-deb", "-f", deb, "Version"], capture_output=True, text=True).stdout.strip()
    new_schema = len([f for f in os.listdir(os.path.join(REPO, "aggregator/schema")) if f.endswith(".sql")])
    old_deb, old_version, old_schema = previous_release_deb(ctx)

    ch = ClickHouse(ctx.path("ch"))
    ch.start()
    ctx.cleanups.append(ch.stop)
    root = ctx.path("root")
    subprocess.run(["cp", "-a", base_rootfs(), root], check=True)
    shutil.copy(old_deb, os.path.join(root, "var", "tmp", "previous.deb"))  # /tmp is a tmpfs inside
    shutil.copy(deb, os.path.join(root, "var", "tmp", "tracer.deb"))
    box = Container(ctx, root)
    ctx.cleanups.append(box.poweroff)
    box.boot()
    db = os.path.join(root, "var/lib/tracer/tracer.db")

    def sql(query):
        return subprocess.run(["sqlite3", f"file:{db}?mode=ro", query], capture_output=True,
                              text=True).stdout.strip()

    def units():
        return box.run("systemctl", "is-active", "tracer-aggregator", "tracer-collector",
                       "tracer-shipper").stdout.split()

    def logs():
        return box.run("journalctl", "-b", "--no-pager", "-n", "60", "-u", "tracer-*").stdout[-3000:]

    inst = box.run("dpkg", "-i", "/var/tmp/previous.deb", timeout=300)
    ctx.check(inst.returncode == 0, f"dpkg -i {old_version}: {inst.stdout[-800:]} {inst.stderr[-800:]}")
    active = units()[:2]
    if active != ["active", "active"]:
        raise Failure(f"units after installing {old_version}: {active}\n{logs()}")
    enabled = box.run("systemctl", "is-enabled", "tracer.target").stdout.strip()
    ctx.check(enabled == "enabled", f"tracer.target enabled on install: {enabled}")
    ctx.check(sql("PRAGMA user_version") == str(old_schema), f"{old_version}'s schema: {sql('PRAGMA user_version')}")
    # The shipper starts once it is configured, as an operator would do it.
    configure_shipper(root, ch)
    box.run("systemctl", "start", "tracer-shipper", check=True)
    ctx.check(units() == ["active"] * 3, f"three units: {units()}")

    box.run("useradd", "-m", "-G", "tracer", "alice", check=True)
    loop = "i=0; while [ $i -lt 50 ]; do /bin/true; i=$((i+1)); done"
    count = ("SELECT count(*) FROM processes p JOIN runs r ON r.id = p.run_id WHERE r.name = '{}' "
             "AND p.exe = '/usr/bin/true' AND p.exit_code = 0")
    box.run("tracer", "run", "--run", "pkg", "--", "/bin/sh", "-c", loop, check=True)
    ctx.check(sql(count.format("pkg")) == "50", f"the 50 /bin/true of the loop: {sql(count.format('pkg'))}")
    # alice, unprivileged, records her own run with the installed daemons.
    mine = box.run("runuser", "-u", "alice", "--", "tracer", "run", "--run", "alice-run", "--", "/bin/sh", "-c", loop)
    ctx.check(mine.returncode == 0, f"alice's tracer run: rc {mine.returncode} {mine.stderr[-600:]}")
    ctx.check(sql(count.format("alice-run")) == "50", f"alice's 50 /bin/true: {sql(count.format('alice-run'))}")

    box.run("sh", "-c", "echo '# site addition' >> /etc/tracer/tools.allow", check=True)
    pids = {u: box.pid_of(u) for u in ("tracer-aggregator", "tracer-collector", "tracer-shipper")}
    up = box.run("dpkg", "-i", "--force-confold", "/var/tmp/tracer.deb", timeout=300)
    ctx.check(up.returncode == 0, f"upgrade {old_version} -> {new_version}: {up.stdout[-800:]} {up.stderr[-500:]}")
    have = box.run("dpkg-query", "-W", "-f", "${Version}", "tracer").stdout.strip()
    ctx.check(have == new_version, f"installed version after upgrade: {have}")
    kept = box.run("tail", "-1", "/etc/tracer/tools.allow").stdout.strip()
    ctx.check(kept == "# site addition", f"the edited conffile survives the upgrade: {kept!r}")
    ctx.check(units() == ["active"] * 3, f"units after upgrade: {units()}\n{logs()}")
    for unit, before in pids.items():
        now = box.pid_of(unit)
        exe = box.run("readlink", f"/proc/{now}/exe").stdout.strip()
        ctx.check(now != before and not exe.endswith("(deleted)"), f"{unit} runs the new binary: {before}->{now} {exe}")
    ctx.check(sql("PRAGMA user_version") == str(new_schema),
              f"database migrated {old_schema} -> {new_schema}: {sql('PRAGMA user_version')}")
    ctx.check(sql(count.format("pkg")) == "50" and sql(count.format("alice-run")) == "50",
              f"the runs survive the upgrade: {sql(count.format('pkg'))}, {sql(count.format('alice-run'))}")
    box.run("tracer", "run", "--run", "upgraded", "--", "/bin/sh", "-c", loop, check=True)
    # This package's tracer run with the packaged daemons, as root and as a tracer-group user.
    check_quick_run(ctx, box)
    check_quick_run(ctx, box, user="alice")
    box.run("systemctl", "restart", "tracer.target", check=True)
    ctx.check(units() == ["active"] * 3, f"units after restarting tracer.target: {units()}")
    box.run("tracer", "run", "--run", "restarted", "--", "/bin/sh", "-c", loop, check=True)
    names = ("pkg", "alice-run", "upgraded", "restarted")
    for name in names[2:]:
        ctx.check(sql(count.format(name)) == "50", f"{name}: {sql(count.format(name))} of 50")
    show = box.run("runuser", "-u", "alice", "--", "tracer", "show", "pkg")
    ctx.check(show.returncode == 0 and "pkg" in show.stdout, f"alice reads the run: {show.stderr[-300:]}")
    status = box.run("runuser", "-u", "alice", "--", "tracer", "status")
    ctx.check(status.returncode in (0, 3) and f"schema v{new_schema}" in status.stdout,
              f"alice's tracer status: rc {status.returncode} {status.stdout[:300]} {status.stderr[-300:]}")

    # Every recorded process of the four runs reaches ClickHouse, once: rows are
    # replaced by (_host, _key), so FINAL counts each process once however often sent.
    listed = ", ".join(f"'{n}'" for n in names)
    want = sql(f"SELECT count(*) FROM processes p JOIN runs r ON r.id = p.run_id WHERE r.name IN ({listed})")
    shipped = ("SELECT count() FROM tracer.processes FINAL WHERE run_id IN "
               f"(SELECT id FROM tracer.runs FINAL WHERE name IN ({listed}))")
    end = time.time() + 90
    got = None
    while time.time() < end:
        got = ch.query(shipped).strip()
        if got == want:
            break
        time.sleep(1)
    ctx.check(got == want and int(want) >= 200, f"processes in ClickHouse {got}, in the database {want}")
    true_runs = ch.query("SELECT count() FROM tracer.processes FINAL WHERE exe = '/usr/bin/true' AND exit_code = 0 "
                   f"AND run_id NOT IN ({QUICK_RUNS})").strip()
    ctx.check(true_runs == "200", f"the 4 x 50 /bin/true in ClickHouse: {true_runs}")

    rm = box.run("dpkg", "-r", "tracer", timeout=300)
    ctx.check(rm.returncode == 0, f"dpkg -r: {rm.stderr[-500:]}")
    gone = box.run("systemctl", "is-active", "tracer-aggregator", "tracer-collector", "tracer-shipper").stdout.split()
    ctx.check("active" not in gone and not os.path.exists(os.path.join(root, "usr/bin/tracer")),
              f"removed: units {gone}")
    ctx.check(os.path.exists(os.path.join(root, "etc/tracer/tools.allow")) and os.path.exists(db),
              "configuration and data stay until purge")
