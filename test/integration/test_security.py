"""Privilege separation and deployment: the units as systemd reads them, the
collector's state after start-up, its syscall allow-list, and planted secrets
that must appear nowhere: database, outbox, frames on the socket, logs."""
import json
import os
import pwd
import re
import shutil
import shlex
import signal
import socket
import sqlite3
import subprocess
import time

from harness import Failure, plain_build_only, scan_sanitizers, start_daemons, start_logged_aggregator, test

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# Exposure scores `systemd-analyze security --offline=yes` must not exceed (docs/security.md).
MAX_EXPOSURE = {"tracer-aggregator.service": 2.0, "tracer-shipper.service": 2.0, "tracer-collector.service": 2.5}


def status_fields(pid):
    fields = {}
    for line in open(f"/proc/{pid}/status"):
        k, _, v = line.partition(":")
        fields[k] = v.strip()
    return fields


def expect_aggregator(ctx, user):
    """The collector's --aggregator-user, where the build has it (not before issue 56)."""
    return ["--aggregator-user", user] if ctx.knows(ctx.bin("tracer-collector"), "--aggregator-user") else []


@test
def units_verify_and_score(ctx):
    """`make install` into a prefix; every unit passes systemd-analyze verify, and the
    security exposure scores stay within the documented ceilings."""
    prefix = ctx.path("prefix")
    p = subprocess.run(["make", "-C", REPO, "install", f"BUILD={ctx.build}", f"SANITIZE={ctx.sanitized}", f"PREFIX={prefix}/usr",
                        f"SYSCONFDIR={prefix}/etc/tracer"], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise Failure(f"make install: {p.stderr[-800:]}")
    units = os.path.join(prefix, "usr/lib/systemd/system")
    for unit in sorted(os.listdir(units)):
        v = subprocess.run(["systemd-analyze", "verify", os.path.join(units, unit)], capture_output=True,
                           text=True, timeout=60)
        ctx.check(v.returncode == 0 and not v.stderr.strip(), f"verify {unit}: {v.returncode} {v.stderr}")
        if unit in MAX_EXPOSURE:
            s = subprocess.run(["systemd-analyze", "security", "--offline=yes", os.path.join(units, unit)],
                               capture_output=True, text=True, timeout=60)
            m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", s.stdout)
            ctx.check(m and float(m.group(1)) <= MAX_EXPOSURE[unit],
                      f"{unit} exposure {m and m.group(1)} (at most {MAX_EXPOSURE[unit]})")
    for f in ("usr/lib/sysusers.d/tracer.conf", "usr/lib/tmpfiles.d/tracer.conf", "etc/tracer/tools.allow",
              "usr/libexec/tracer/tracer-collector", "usr/bin/tracer"):
        ctx.check(os.path.exists(os.path.join(prefix, f)), f"installed {f}")
    p = subprocess.run(["make", "-C", REPO, "uninstall", f"PREFIX={prefix}/usr", f"SYSCONFDIR={prefix}/etc/tracer"],
                       capture_output=True, text=True, timeout=120)
    left = [os.path.join(d, f) for d, _, fs in os.walk(prefix) for f in fs]
    ctx.check(p.returncode == 0 and not left, f"uninstall removes everything: {left[:5]}")


@test
def collector_runs_unprivileged_and_confined(ctx):
    """After start-up the collector has its unprivileged uid, no capabilities (all five sets
    empty, the bounding set too), no_new_privs and a seccomp filter, in every thread; a
    forbidden syscall in its steady state kills it."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db)
    st = status_fields(col.pid)
    nobody = str(__import__("pwd").getpwnam("nobody").pw_uid)
    ctx.check(st["Uid"].split() == [nobody] * 4, f"uids {st['Uid']}")
    for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        ctx.check(int(st[cap], 16) == 0, f"{cap} {st[cap]}")
    ctx.check(st.get("NoNewPrivs") == "1", f"no_new_privs {st.get('NoNewPrivs')}")
    # Sanitizer builds run without the allow-list (their runtimes need syscalls it refuses).
    sanitized = bool(ctx.sanitized)
    ctx.check(st.get("Seccomp") == ("0" if sanitized else "2"), f"seccomp filter mode {st.get('Seccomp')}")
    # Every thread: nng's read what the aggregator sends (before, 13 of 14 ran unfiltered).
    threads = {t: status_fields(f"{col.pid}/task/{t}") for t in os.listdir(f"/proc/{col.pid}/task")}
    unfiltered = [(t, f["Name"]) for t, f in threads.items() if f.get("Seccomp") != ("0" if sanitized else "2")]
    ctx.check(len(threads) > 1 and not unfiltered, f"{len(threads)} threads, outside the filter: {unfiltered}")
    capable = [(t, f["Name"], cap) for t, f in threads.items() for cap in ("CapEff", "CapPrm", "CapBnd")
               if int(f[cap], 16) != 0]
    ctx.check(not capable, f"threads with a capability set not empty: {capable}")
    ctx.stop(col)
    ctx.stop(agg)
    agg = ctx.spawn([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db, "--user", "nobody"])
    time.sleep(0.5)
    if not sanitized:
        p = subprocess.run([ctx.bin("tracer-collector"), "--socket", sock, "--user", "nobody",
                            *expect_aggregator(ctx, "nobody"), "--test-forbidden-syscall"], capture_output=True, text=True, timeout=60)
        ctx.check(p.returncode == -signal.SIGSYS, f"killed by SIGSYS: {p.returncode} {p.stderr[-300:]}")
        ctx.check("allow-list is not enforced" not in p.stderr, "the forbidden call never returned")
    ctx.stop(agg)


@test
@plain_build_only("sanitizer builds run the collector without its allow-list")
def collector_logs_its_first_line_inside_the_allow_list(ctx):
    """At --log-level warn nothing is logged before the allow-list is on, so the first
    line is written inside it. glibc's gmtime_r reads /etc/localtime on its first call,
    which the allow-list refuses: the collector used to die by SIGSYS on its first
    warning. With no aggregator listening, the warning comes at exit, about frames
    nobody acknowledged; the collector must write it and exit 1."""
    sock = ctx.path("nobody-listens.sock")
    r, w = os.pipe()
    col = subprocess.Popen([ctx.bin("tracer-collector"), "--socket", sock, "--user", "nobody",
                            *expect_aggregator(ctx, "nobody"), "--log-level", "warn", "--ready-fd", str(w)],
                           pass_fds=(w,), stderr=subprocess.PIPE, text=True)
    ctx.procs.append(col)
    os.close(w)
    ready = os.read(r, 16)
    os.close(r)
    ctx.check(ready, "the collector signalled readiness")
    time.sleep(0.5)  # at least one frame queued with nobody to take it
    col.send_signal(signal.SIGTERM)
    _, err = col.communicate(timeout=30)  # exit waits up to 5 s for acknowledgements
    ctx.check(col.returncode == 1, f"exit status 1 (frames unacknowledged), not {col.returncode}: {err[-300:]}")
    ctx.check("frames not acknowledged at exit" in err, f"the warning was written: {err[-300:]}")


@test
def planted_secrets_appear_nowhere(ctx):
    """A secret in an environment variable, in --password=, in a shell string inside
    a shell string (`sh -c "sh -c 'mysql -pX'"`, where the outer shells' argv hold it
    too), behind a wrapper on a line of its own (`env A=1 mysql -pX`, in env's argv
    and the script's), in a key option and an Azure connection string, and as the
    value of `secrets set NAME VALUE` (Nextflow's) or of a command that stores a secret
    (`kubectl create secret ... --from-literal=NAME=VALUE`): none of the values nor the variable appear in the database, the
    outbox, the frames on the socket (traced with strace on the collector), or the
    daemons' logs."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg = ctx.spawn([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db, "--user", "nobody",
                     "--outbox-mib", "64", "--log-level", "debug"])
    end = time.time() + 10
    while not os.path.exists(sock) and time.time() < end:
        time.sleep(0.05)
    trace, col_log_path = ctx.path("collector.strace"), ctx.path("collector.log")
    # stderr to a file: the traced collector must not hold a pipe to us.
    with open(col_log_path, "w") as log:
        tracer_proc = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=sendmsg,sendto,write,writev", "-s",
                                        "1000000", "-xx", "-o", trace, ctx.bin("tracer-collector"), "--socket",
                                        sock, "--user", "nobody", *expect_aggregator(ctx, "nobody"),
                                        "--log-level", "debug"], stderr=log)
    ctx.procs.append(tracer_proc)
    end = time.time() + 60
    while time.time() < end and not ctx.query("SELECT count(*) FROM collector_stats WHERE snapshot_processes > 0",
                                              db=db)[0][0]:
        time.sleep(0.2)
    env = dict(os.environ, PLANTED_ENV_SECRET="envsecret-7f3a9c")
    p = subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", "secrets", "--",
                        "bash", "-c", "sleep 0.2; sh -c \"sh -c 'mysql -pnestsecret-4d5e db' 2>/dev/null; "
                        "exit 0\"\nenv A=1 mysql -pwrapsecret-6a7b 2>/dev/null\n"
                        "/bin/true --account-key keysecret-8c9d 'AccountName=a;AccountKey=connsecret-2e3f'\n"
                        "/bin/true secrets set DB_URL nfsecret-5a6b\n"
                        "/bin/true create secret generic db --from-literal=api_url=kubesecret-3c4d\n"
                        "exec /bin/true --password=argvsecret-1b2c"],
                       env=env, capture_output=True, text=True, timeout=120)
    ctx.check(p.returncode == 0, f"tracer run: {p.stderr[-300:]}")
    # Stop the collector itself (strace's child), so it flushes; strace then exits.
    children = open(f"/proc/{tracer_proc.pid}/task/{tracer_proc.pid}/children").read().split()
    for c in children:
        os.kill(int(c), signal.SIGTERM)
    tracer_proc.wait(timeout=60)
    col_log = open(col_log_path).read()
    _, agg_log = ctx.stop(agg)
    argvs = sorted(r[0] for r in ctx.query("SELECT argv FROM processes p JOIN runs r ON r.id = p.run_id "
                                            "WHERE r.name = 'secrets' AND p.exe = '/usr/bin/true'", db=db))
    ctx.check(argvs == ['["/bin/true","--account-key","***","AccountName=a;AccountKey=***"]',
                        '["/bin/true","--password=***"]',
                        '["/bin/true","create","secret","generic","db","--from-literal=api_url=***"]',
                        '["/bin/true","secrets","set","DB_URL","***"]'],
              f"each secret is redacted in argv, the rest kept: {argvs}")
    blobs = {"database": b"", "outbox": b"", "frames": b"", "logs": (col_log + agg_log + p.stderr).encode()}
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            blobs["database"] += open(db + suffix, "rb").read()
    blobs["outbox"] = "\n".join(r[0] for r in ctx.query("SELECT payload FROM outbox", db=db)).encode()
    raw = open(trace).read()
    # strace -xx prints every byte as \xNN: decode what the collector sent.
    for m in re.finditer(r'"((?:\\x[0-9a-f]{2})+)"', raw):
        blobs["frames"] += bytes.fromhex(m.group(1).replace("\\x", ""))
    ctx.check(len(blobs["frames"]) > 10000, f"frames were captured ({len(blobs['frames'])} bytes)")
    ctx.check(b"argvsecret" not in blobs["frames"] and b"/usr/bin/true" in blobs["frames"],
              "the frames carry the process but not the argv secret")
    for where, blob in blobs.items():
        for secret in (b"argvsecret-1b2c", b"envsecret-7f3a9c", b"PLANTED_ENV_SECRET", b"nestsecret-4d5e",
                       b"wrapsecret-6a7b", b"keysecret-8c9d", b"connsecret-2e3f", b"nfsecret-5a6b",
                       b"kubesecret-3c4d"):
            ctx.check(secret not in blob, f"{secret!r} found in the {where}")


# Secrets that no list of shapes caught before redaction read a command line's
# structure (issue 56): a tool's short flag, an option named for credentials, a
# position, a code string, what is piped into `sudo -S`, token formats. Each is
# (command line, its secret, what its argv must be once stored).
STRUCTURAL_SECRETS = [
    ("cqlsh -u cassandra -p cqlsecret-1a2b h1", "cqlsecret-1a2b",
     '["cqlsh","-u","cassandra","-p","***","h1"]'),
    ("ipmitool -H 10.0.0.5 -U admin -P ipmisecret-3c4d chassis status", "ipmisecret-3c4d",
     '["ipmitool","-H","10.0.0.5","-U","admin","-P","***","chassis","status"]'),
    ("xfreerdp /v:host /u:admin /p:rdpsecret-5e6f", "rdpsecret-5e6f",
     '["xfreerdp","/v:host","/u:admin","/p:***"]'),
    ("skopeo copy --src-creds user:skopeosecret-7a8b docker://a docker://b", "skopeosecret-7a8b",
     '["skopeo","copy","--src-creds","user:***","docker://a","docker://b"]'),
    ("isql MyDSN dbuser isqlsecret-9c0d", "isqlsecret-9c0d", '["isql","MyDSN","dbuser","***"]'),
    ("python3 -c \"Entrez.api_key = 'entrezsecret-1e2f'\"", "entrezsecret-1e2f",
     '["python3","-c","Entrez.api_key = \'***\'"]'),
    ("chat sk-proj-Ab3dEf45GhI789jKl012MnO345pQr6", "sk-proj-Ab3dEf45GhI789jKl012MnO345pQr6",
     '["chat","***"]'),
    ("mailer 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", "SG.aB3dE5gH7jK9mN1pQ3sT5v",
     '["mailer","***"]'),
]
# Harmless look-alikes that must be stored as they ran.
STRUCTURAL_HARMLESS = [
    ("docker run -p 8080:80 nginx", '["docker","run","-p","8080:80","nginx"]'),
    ("make PASS=2", '["make","PASS=2"]'),
    ("fairseq-train data --tokens-per-sample 512", '["fairseq-train","data","--tokens-per-sample","512"]'),
]


def tools_as_true(ctx, names):
    """A directory of programs with the tools' names that are /bin/true: the argv is
    the tool's, nothing runs."""
    bindir = ctx.path("tools")
    os.makedirs(bindir, exist_ok=True)
    for name in names:
        if not os.path.exists(os.path.join(bindir, name)):
            os.symlink("/bin/true", os.path.join(bindir, name))
    return bindir


@test
def structural_secrets_reach_no_verb(ctx):
    """Secrets found by a command line's structure (a tool's -p or -P, /p:, --src-creds,
    a positional password, a code string, `echo X | sudo -S` in a shell string, OpenAI
    and SendGrid tokens) are stored as *** in SQLite and appear nowhere in the database
    files, `tracer show` (text and --json), `tracer run`'s own report, or the HTML
    report; harmless look-alikes (docker run -p 8080:80, make PASS=2,
    --tokens-per-sample 512) are stored as they ran. Ground truth: the command lines
    the test ran, and the secrets it planted."""
    lines = [c for c, _, _ in STRUCTURAL_SECRETS] + [c for c, _ in STRUCTURAL_HARMLESS]
    names = sorted({shlex.split(c)[0] for c in lines})
    bindir = tools_as_true(ctx, names)
    sudo_secret = "sudosecret-3a4b"
    script = "\n".join(lines + [
        # a shell function stands in for sudo: what matters is the shell string's argv
        f"sh -c 'sudo() {{ cat >/dev/null; }}; echo {sudo_secret} | sudo -S true'"])
    env = dict(os.environ, PATH=bindir + ":" + os.environ["PATH"])
    p = ctx.tracer_run(["bash", "-c", script], "--run", "structural", expect=0, env=env)
    run = str(ctx.latest_run())
    argvs = {r[0] for r in ctx.query("SELECT argv FROM processes WHERE run_id = ?", run)}
    for line, _, stored in STRUCTURAL_SECRETS:
        ctx.check(stored in argvs, f"{line!r} is stored as {stored}: {sorted(argvs)}")
    for line, stored in STRUCTURAL_HARMLESS:
        ctx.check(stored in argvs, f"{line!r} is stored as it ran, {stored}: {sorted(argvs)}")
    ctx.check(any("echo *** | sudo -S true" in a for a in argvs),
              f"the secret piped into sudo -S is hidden in sh's argv: {sorted(argvs)}")
    outputs = {"tracer run's report": p.stderr + p.stdout}
    for verb in (["show", run], ["show", "--json", run], ["report", "--html", "-", run]):
        shown = subprocess.run([ctx.bin("tracer"), verb[0], "--db", ctx.db, *verb[1:]],
                               capture_output=True, text=True, timeout=60)
        scan_sanitizers(ctx, shown.stderr, f"tracer {verb[0]}")
        ctx.check(shown.returncode == 0, f"tracer {' '.join(verb)}: {shown.stderr[-300:]}")
        outputs[f"tracer {' '.join(verb[:-1])}"] = shown.stdout
    ctx.check("8080:80" in outputs["tracer show --json"], "show --json keeps the harmless port mapping")
    db = b""
    for suffix in ("", "-wal"):
        if os.path.exists(ctx.db + suffix):
            db += open(ctx.db + suffix, "rb").read()
    for _, secret, _ in STRUCTURAL_SECRETS + [(None, sudo_secret, None)]:
        ctx.check(secret.encode() not in db, f"{secret} found in the database files")
        for where, text in outputs.items():
            ctx.check(secret not in text, f"{secret} found in {where}")


@test
def redaction_rules_reread_on_sighup_after_the_drop(ctx):
    """A site adds a tool to its redaction rules and sends SIGHUP: the collector, already
    running as nobody under its syscall allow-list, rereads the file it opened before
    the drop, and the tool's next secret is stored as ***. The same command line before
    the reload is stored as it ran (no rule, nothing to go by): the reload is what hides
    it. Ground truth: the planted secrets and the collector's /proc status."""
    sock, db, rules = ctx.path("s.sock"), ctx.path("rules.db"), ctx.path("redact.rules")
    with open(rules, "w") as f:
        f.write("mysql - glued -p\n")
    os.chmod(rules, 0o600)  # root's file: read before the drop, from the open descriptor after
    bindir = tools_as_true(ctx, ["frobctl"])
    agg = ctx.spawn([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db, "--user", "nobody"])
    end = time.time() + 10
    while not os.path.exists(sock) and time.time() < end:
        time.sleep(0.05)
    col = ctx.spawn([ctx.bin("tracer-collector"), "--socket", sock, "--user", "nobody",
                     "--redact-rules", rules])
    end = time.time() + 60
    while time.time() < end and not ctx.query("SELECT count(*) FROM collector_stats WHERE snapshot_processes > 0",
                                              db=db)[0][0]:
        time.sleep(0.2)
    frob = os.path.join(bindir, "frobctl")
    _, before = ctx.daemon_run(sock, db, [frob, "-z", "frobsecret-before", "go"])
    with open(rules, "r+") as f:  # in place, as an editor that keeps the file does
        f.seek(0, os.SEEK_END)
        f.write("frobctl - next -z\n")
    uid = status_fields(col.pid)["Uid"].split()[0]
    col.send_signal(signal.SIGHUP)
    end = time.time() + 10
    while time.time() < end and not any("redaction rules reread" in l for l in col._lines):
        time.sleep(0.1)
    _, after = ctx.daemon_run(sock, db, [frob, "-z", "frobsecret-after", "go"])
    stored = {r[0]: r[1] for r in ctx.query("SELECT run_id, argv FROM processes WHERE exe LIKE '%frobctl' "
                                             "OR argv LIKE '%frobctl%'", db=db) if r[0] in (before, after)}
    _, col_log = ctx.stop(col)
    ctx.stop(agg)
    ctx.check(uid != "0", f"the collector had dropped root before the SIGHUP (uid {uid})")
    ctx.check("2 redaction rules reread from" in col_log, f"the collector says it reread the rules: {col_log[-600:]}")
    ctx.check(stored.get(before, "").endswith('"-z","frobsecret-before","go"]'),
              f"before the reload the rule did not exist: stored as ran ({stored.get(before)})")
    ctx.check(stored.get(after, "").endswith('"-z","***","go"]'),
              f"after the reload the added rule hides the value ({stored.get(after)})")


def hang_up_mid_handshake(path):
    """What a hostile or careless local process can do: connect, send nothing, hang up."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.close()


@test
def peer_hanging_up_mid_handshake_cannot_silence_the_aggregator(ctx):
    """nng 1.5's listener stops admitting connections after a peer hangs up during
    the SP handshake (nanomsg/nng#1518). Before the collector connects, such peers
    hang up on the aggregator; the aggregator must notice (its own probe is not
    admitted), rebuild the listener, and then take the collector's data."""
    sock, db = ctx.path("s.sock"), ctx.path("agg.db")
    log = ctx.path("agg.log")
    agg = start_logged_aggregator(ctx, sock, db, log)
    for _ in range(3):
        hang_up_mid_handshake(sock)
        time.sleep(0.05)
    col = ctx.spawn([ctx.bin("tracer-collector"), "--socket", sock, "--user", "nobody"])
    end = time.time() + 30
    delivered = 0
    while time.time() < end and not delivered:
        time.sleep(0.25)
        try:
            delivered = ctx.one("SELECT count(*) FROM collector_stats WHERE frames_received > 0", db=db)
        except sqlite3.Error:
            pass
    ctx.check(delivered == 1, "the collector's frames arrive despite the hang-ups")
    # Our own tools' probes complete the handshake: a hundred `tracer status` change nothing.
    before = open(log).read().count("rebuilding it")
    for _ in range(100):
        subprocess.run([ctx.bin("tracer"), "status", "--socket", sock, "--db", db], capture_output=True, timeout=30)
    time.sleep(7.0)  # longer than the admission grace (IPC_ADMISSION_GRACE_NS)
    after = open(log).read().count("rebuilding it")
    ctx.check(after == before, f"probes by tracer status never break the listener ({before} -> {after} rebuilds)")
    r = subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", "after-hangups", "--",
                        "/bin/true"], capture_output=True, text=True, timeout=60)
    ctx.check(r.returncode == 0, f"tracer run through the daemons: {r.returncode} {r.stderr[-300:]}")
    ctx.stop(col)
    agg.send_signal(signal.SIGTERM)
    agg.wait(timeout=30)
    scan_sanitizers(ctx, open(log).read(), "tracer-aggregator")
    ctx.check(agg.returncode == 0, f"aggregator exit status {agg.returncode}")
    print(f"       listener rebuilds after the hang-ups: {before}", flush=True)


@test
def settings_files_refuse_what_they_do_not_understand(ctx):
    """Each program, given a settings file with a line it does not understand (a key outside any
    section, a misspelt section, an unknown tool category, a ClickHouse URL with a stray tail),
    stops with the file, line and reason instead of running with part of it ignored; a file
    that shares sections between programs still loads."""
    def refused(args, *expect):
        r = subprocess.run(args, capture_output=True, text=True, timeout=30)
        said = r.stdout + r.stderr
        ctx.check(r.returncode != 0 and all(e in said for e in expect),
                  f"{' '.join(args)}: exit {r.returncode}, expected refusal naming {expect}: {said[-400:]}")

    def conf(name, text):
        path = ctx.path(name)
        with open(path, "w") as f:
            f.write(text)
        return path

    # The collector reads its file before it loads anything into the kernel.
    stray = conf("stray.conf", "flush-ms = 50\n[collector]\nsample-ms = 500\n")
    refused([ctx.bin("tracer-collector"), "--config", stray, "--socket", ctx.path("c.sock")],
            f"{stray}:1:", "outside any section")
    typo = conf("typo.conf", "[collector]\nsample-ms = 500\n[probe]\nfiles = off\n")
    refused([ctx.bin("tracer-collector"), "--config", typo, "--socket", ctx.path("c.sock")],
            f"{typo}:4:", "unknown section")
    shared = conf("shared.conf", "[shipper]\nsink = clickhouse://127.0.0.1:9/x\n[probes]\nfiles = so\n")
    refused([ctx.bin("tracer-collector"), "--config", shared, "--socket", ctx.path("c.sock")],
            f"{shared}:4:", "expected on or off")   # [shipper] skipped, its own section read
    # [collector] is the collector's: skipped; the misspelt [probe] is nobody's.
    refused([ctx.bin("tracer-shipper"), "--config", typo, "--db", ctx.path("none.db")],
            f"{typo}:4:", "unknown section")
    refused([ctx.bin("tracer-shipper"), "--config", stray, "--db", ctx.path("none.db")],
            f"{stray}:1:", "outside any section")
    refused([ctx.bin("tracer-shipper"), "--db", ctx.path("none.db"), "--state", ctx.path("st.db"),
             "--user", "nobody", "--sink", "clickhouse://127.0.0.1:9/tracer;DROP TABLE x"],
            "tracer;DROP", "expected clickhouse://")
    ctx.tracer_run(["true"], expect=0)  # a database for tracer cost to read
    refused([ctx.bin("tracer"), "cost", "--db", ctx.db, "--cost-conf", conf("cost.conf", "rate = 2\n")],
            ":1:", "outside [cost]")
    allow = conf("tools.allow", "bwa aligner\nsamtools alignment utilty\n")
    refused([ctx.bin("tracer-aggregator"), "--socket", ctx.path("a.sock"), "--db", ctx.path("a.db"),
             "--user", "nobody", "--tools-allow", allow], f"{allow}:2:", "unknown category 'alignment utilty'")


@test
def names_alone_neither_hide_nor_open_runs(ctx):
    """Under the daemons: a program root installed under a deny-listed name (cron), run
    inside a run, is kept as its plumbing (helper); the same program under deny-listed names in a directory a user owns (sshd,
    systemd-fake, tracer-aggregator) is recorded like any program; and a user's own binary
    named `tracer` given `run --run forged` opens no run."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db)
    nobody = pwd.getpwnam("nobody")
    roots, users = ctx.path("root-bin"), ctx.path("user-bin")
    os.makedirs(roots, mode=0o755)
    os.makedirs(users, mode=0o755)
    os.chmod(roots, 0o755)
    shutil.copy("/bin/sleep", os.path.join(roots, "cron"))
    for name in ("sshd", "systemd-fake", "tracer-aggregator"):
        shutil.copy("/bin/sleep", os.path.join(users, name))
        os.chown(os.path.join(users, name), nobody.pw_uid, nobody.pw_gid)
    shutil.copy("/bin/true", os.path.join(users, "tracer"))
    os.chown(os.path.join(users, "tracer"), nobody.pw_uid, nobody.pw_gid)
    os.chown(users, nobody.pw_uid, nobody.pw_gid)
    script = (f"{roots}/cron 0.1; {users}/sshd 0.1; {users}/systemd-fake 0.1; "
              f"{users}/tracer-aggregator 0.1; {users}/tracer run --run forged -- true")
    r = subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", "names", "--",
                        "bash", "-c", script], capture_output=True, text=True, timeout=120)
    ctx.check(r.returncode == 0, f"tracer run: {r.returncode} {r.stderr[-300:]}")
    time.sleep(1.0)
    ctx.stop(col)
    ctx.stop(agg)
    run = ctx.one("SELECT id FROM runs WHERE name = 'names'", db=db)
    exes = {e.rsplit("/", 1)[-1] for (e,) in ctx.query("SELECT exe FROM processes WHERE run_id = ?", run, db=db)}
    ctx.check({"sshd", "systemd-fake", "tracer-aggregator", "tracer"} <= exes,
              f"a user's programs are recorded whatever their names: {sorted(exes)}")
    # Inside a run a deny-listed program is kept as the run's plumbing (docs/correlation.md):
    # root's cron is helper = 1, never a tool the run is named by; the lookalikes are tools.
    helper = {e.rsplit("/", 1)[-1]: h for e, h in ctx.query("SELECT exe, helper FROM processes WHERE run_id = ?",
                                                             run, db=db)}
    ctx.check(helper.get("cron") == 1, f"root's deny-listed program is the run's plumbing: {helper}")
    ctx.check(all(helper.get(n) == 0 for n in ("sshd", "systemd-fake", "tracer-aggregator")),
              f"a user's lookalikes are tools, not plumbing: {helper}")
    forged = ctx.query("SELECT id FROM runs WHERE name = 'forged'", db=db)
    ctx.check(not forged, f"a user's `tracer run` lookalike opens no run: {forged}")


@test
def terminal_sequences_in_argv_never_reach_the_reader(ctx):
    """A process can put terminal control sequences in its argv (another user's, on a
    shared host): clear the reader's screen, move the cursor to forge lines, OSC 52 to
    write their clipboard. The text verbs print them as '?', byte for byte, and the
    rest of the line as it was; --json keeps the exact argv (jansson escapes it)."""
    hostile = "before\x1b[2J\x1b[1A\x1b]52;c;aGk=\x07\u009b2J\x7f\x1b[0m\x1b[1;31mafter"
    p = ctx.tracer_run(["/bin/echo", hostile], "--run", "hostile", expect=0)
    # tracer run's own report, on stderr, is text for people too.
    ctx.check("before?[2J?[1A?]52;c;aGk=???2J??[0m?[1;31mafter" in p.stderr,
              f"tracer run's report shows the argv with each control byte as '?': {p.stderr[-800:]!r}")
    for bad in ("\x1b", "\x07", "\u009b", "\x7f"):
        ctx.check(bad not in p.stderr, f"tracer run's report printed {bad!r}")
    run = str(ctx.latest_run())
    # --json on stderr is one document and nothing else.
    p = ctx.tracer_run(["/bin/echo", hostile], "--run", "hostile-json", "--json", expect=0)
    try:
        doc = json.loads(p.stderr)
        ctx.check([hostile] == [a for pr in doc.get("processes", []) for a in (pr.get("argv") or [])[1:2]],
                  f"tracer run --json keeps the exact argv: {doc.get('processes')}")
    except ValueError as e:
        ctx.check(False, f"tracer run --json's stderr is not one JSON document ({e}): {p.stderr[-400:]!r}")
    verbs = (["show"], ["runs"], ["timeline"], ["signals"], ["explain"], ["show", "--format", "tsv"], ["cost"], ["recommend"])
    for verb in verbs:
        p = subprocess.run([ctx.bin("tracer"), verb[0], "--db", ctx.db, *verb[1:],
                            *([run] if verb[0] != "runs" else [])], capture_output=True, timeout=60)
        scan_sanitizers(ctx, p.stderr.decode(errors="replace"), f"tracer {verb[0]}")
        ctx.check(p.returncode == 0, f"tracer {' '.join(verb)} exited {p.returncode}: {p.stderr[-300:]!r}")
        for bad in (b"\x1b", b"\x07", b"\xc2\x9b", b"\x7f"):
            ctx.check(bad not in p.stdout, f"tracer {' '.join(verb)} printed {bad!r}")
        if verb == ["show"]:
            ctx.check(b"before?[2J?[1A?]52;c;aGk=???2J??[0m?[1;31mafter" in p.stdout,
                      f"the argv is shown with each control byte as '?': {p.stdout[-600:]!r}")
    p = subprocess.run([ctx.bin("tracer"), "show", "--db", ctx.db, "--json", run], capture_output=True,
                       timeout=60)
    doc = json.loads(p.stdout)
    argvs = [proc.get("argv") for proc in doc.get("processes", [])]
    ctx.check(["/bin/echo", hostile] in argvs, f"--json keeps the exact argv: {argvs}")

@test
def a_retitled_process_s_environment_never_enters_its_argv(ctx):
    """A process that overwrote the NUL ending its argv (setproctitle's way) has the kernel's
    /proc/PID/cmdline run on into its environment. Running before the collector starts, it
    reaches tracer through the start-up snapshot: its stored argv stops where argv's own
    area ends (arg_end in /proc/PID/stat), and the environment never appears. Ground truth:
    this test reads the same cmdline and sees the variable there."""
    secret = "TRACER_PLANTED_ENV=env-value-" + os.urandom(6).hex()
    # The first variable is the one the kernel's cmdline runs on into.
    name, value = secret.split("=", 1)
    p = subprocess.Popen([ctx.helper("titlerunon"), "60", "worker"],
                         env={name: value, "PATH": "/usr/bin:/bin"})
    ctx.procs.append(p)
    time.sleep(0.3)
    raw = open(f"/proc/{p.pid}/cmdline", "rb").read()
    ctx.check(b"env-value-" in raw, f"the shape leaks through /proc/PID/cmdline here: {raw!r}")
    sock, db = ctx.path("s.sock"), ctx.path("snap.db")
    agg, col = start_daemons(ctx, sock, db)
    rows = ctx.query("SELECT argv, from_snapshot FROM processes WHERE pid = ?", p.pid, db=db)
    ctx.check(rows and rows[0][1] == 1, f"the process came through the snapshot: {rows}")
    stored = " ".join(r[0] or "" for r in rows)
    ctx.check("env-value-" not in stored and "TRACER_PLANTED_ENV" not in stored,
              f"no environment in the stored argv: {stored!r}")
    argv = json.loads(rows[0][0]) if rows and rows[0][0] else []
    area = len(ctx.helper("titlerunon")) + len("60") + len("worker") + 3  # the three args and NULs
    ctx.check(len(argv) == 1 and argv[0].startswith("retitled worker") and len(argv[0]) == area,
              f"the argv is the title over argv's {area} bytes, no more: {argv}")
    p.kill()
    ctx.stop(col)
    ctx.stop(agg)


@test
def a_reader_outside_the_database_group_is_told_which_group_to_join(ctx):
    """A database readable by its group only (0640 in a 0750 directory, as the package
    keeps /var/lib/tracer): a user outside the group is refused in one line that names the
    group that may read it (read here with os.stat and grp) and how to join it; exit 1.
    Once a member (setpriv --groups), the same user reads it."""
    import grp
    ctx.tracer_run(["/bin/true"], "--run", "grouped", expect=0)
    home = ctx.path("grouped")
    os.mkdir(home)
    db = os.path.join(home, "t.db")
    shutil.copy(ctx.db, db)
    group = grp.getgrnam("daemon")
    for path, mode in ((home, 0o750), (db, 0o640)):
        os.chown(path, 0, group.gr_gid)
        os.chmod(path, mode)
    outsider = pwd.getpwnam("nobody")
    as_user = ["setpriv", f"--reuid={outsider.pw_uid}", f"--regid={outsider.pw_gid}"]
    p = subprocess.run(as_user + ["--clear-groups", ctx.bin("tracer"), "runs", "--db", db],
                       capture_output=True, text=True, timeout=60)
    named = grp.getgrgid(os.stat(home).st_gid).gr_name
    ctx.check(p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1 and f"group '{named}'" in p.stderr
              and f"usermod -aG {named}" in p.stderr, f"refused, naming group {named}: {p.returncode} {p.stderr!r}")
    p = subprocess.run(as_user + [f"--groups={group.gr_gid}", ctx.bin("tracer"), "runs", "--db", db],
                       capture_output=True, text=True, timeout=60)
    ctx.check(p.returncode == 0 and "grouped" in p.stdout, f"a member reads it: {p.returncode} {p.stderr[-300:]}")
