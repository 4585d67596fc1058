"""One run, one owner: `tracer run`s side by side on a shared host, as users start them.

Ground truth here is what each user ran: the commands we started and where, and what the
processes printed themselves (their environment, their stdout)."""
import json
import os
import re
import pwd
import sqlite3
import subprocess
import time
import uuid

from harness import Failure, load_json, start_daemons, test
from slurm_cluster import SlurmCluster


def runs_in(ctx, db):
    return ctx.query("SELECT r.id, p.exe FROM runs r LEFT JOIN processes p ON p.id = r.command_process_id "
                     "ORDER BY r.id", db=db)


@test
def concurrent_runs_keep_to_their_own_databases(ctx):
    """Three self-hosted `tracer run`s at once, each with its own --db: each database holds its
    own command's run and nothing of the others (no run, no process, no argv)."""
    dbs = [ctx.path(f"{n}.db") for n in "abc"]
    marker = ctx.path("long.marker")
    long_cmd = ["bash", "-c", f"sleep 4; echo done > {marker}"]
    first = subprocess.Popen([ctx.bin("tracer"), "run", "--db", dbs[0], "--", *long_cmd],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(2)  # its daemons are up and it is recording
    others = [subprocess.Popen([ctx.bin("tracer"), "run", "--db", db, "--", *cmd],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
              for db, cmd in ((dbs[1], ["/usr/bin/nice", "-n", "1", "true"]), (dbs[2], ["/usr/bin/uname", "-a"]))]
    for p in others:
        ctx.check(p.wait(timeout=120) == 0, f"tracer run exited {p.returncode}: {p.stderr.read()[-400:]}")
    first.wait(timeout=120)
    ctx.check(os.path.exists(marker), "the long run finished")
    for db, exe in zip(dbs, ("/usr/bin/bash", "/usr/bin/nice", "/usr/bin/uname")):
        runs = runs_in(ctx, db)
        ctx.check(len(runs) == 1, f"{os.path.basename(db)}: one run, its own: {runs}")
        foreign = ctx.query("SELECT count(*) FROM processes WHERE argv LIKE '%tracer%run%' OR "
                            "(exe != ? AND run_id IS NULL)", exe, db=db)[0][0]
        ctx.check(foreign == 0, f"{os.path.basename(db)}: no other tracer run's processes: {foreign}")
    names = [r[1] for db in dbs for r in runs_in(ctx, db)]
    ctx.check(sorted(names) == sorted(["/usr/bin/bash", "/usr/bin/nice", "/usr/bin/uname"]),
              f"each database's run is its own command: {names}")


@test
def second_run_on_one_database_is_refused(ctx):
    """A second self-hosted `tracer run` on a --db another one is writing is refused at once,
    naming the writer; the database holds one run and each process once."""
    db = ctx.path("shared.db")
    first = subprocess.Popen([ctx.bin("tracer"), "run", "--db", db, "--", "sleep", "3"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    start = time.time()
    second = subprocess.run([ctx.bin("tracer"), "run", "--db", db, "--", "true"],
                            capture_output=True, text=True, timeout=60)
    took = time.time() - start
    first.wait(timeout=60)
    ctx.check(second.returncode != 0, f"the second run was refused: exit {second.returncode}")
    ctx.check("being written by another" in second.stderr and "pid" in second.stderr,
              f"it says why and who: {second.stderr[-300:]}")
    ctx.check(took < 5, f"refused at once, not after a wait: {took:.1f} s")
    ctx.check(first.returncode == 0, f"the first run is unharmed: {first.returncode} {first.stderr.read()[-300:]}")
    runs = runs_in(ctx, db)
    ctx.check(len(runs) == 1, f"one run: {runs}")
    dup = ctx.query("SELECT count(*) FROM (SELECT pid, proc_start_boot_ns, image, count(*) AS n FROM processes "
                    "GROUP BY 1, 2, 3 HAVING n > 1)", db=db)[0][0]
    ctx.check(dup == 0, f"no process stored twice: {dup}")


@test
def a_db_that_is_not_the_daemons_is_refused(ctx):
    """With the daemons listening, `tracer run --db OTHER` is refused at once, naming the
    daemons' database; without --db the run goes to theirs."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db)
    start = time.time()
    p = subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", ctx.path("other.db"), "--", "true"],
                       capture_output=True, text=True, timeout=60)
    ctx.check(p.returncode != 0 and time.time() - start < 5, f"refused at once: exit {p.returncode}")
    ctx.check(os.path.realpath(db) in p.stderr, f"it names the daemons' database: {p.stderr[-300:]}")
    ok = subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--", "true"],
                        capture_output=True, text=True, timeout=60)
    ctx.check(ok.returncode == 0 and "run " in ok.stderr, f"without --db it records there: {ok.stderr[-300:]}")
    ctx.stop(col)
    ctx.stop(agg)


@test
def sudo_runs_the_command_with_the_users_environment(ctx):
    """As under sudo (SUDO_UID, SUDO_USER, root's HOME and a secure PATH): the command runs as
    the user, with the user's HOME, USER, LOGNAME and SHELL from the passwd entry."""
    user = pwd.getpwnam("nobody")
    out = ctx.path("env.txt")
    env = dict(os.environ, SUDO_UID=str(user.pw_uid), SUDO_GID=str(user.pw_gid), SUDO_USER="nobody",
               HOME="/root", USER="root", LOGNAME="root", PATH="/usr/sbin:/usr/bin:/sbin:/bin")
    ctx.tracer_run(["sh", "-c", f'echo "$(id -u) $HOME $USER $LOGNAME $SHELL" > {out}'], expect=0, env=env)
    got = open(out).read().split()
    want = [str(user.pw_uid), user.pw_dir, "nobody", "nobody", user.pw_shell]
    ctx.check(got == want, f"the command's uid and environment {got}, expected {want}")


def packaged_aggregator_user(ctx):
    """The tracer-aggregator user `make install` and the package create: made here for the
    test if the host lacks it (a fresh machine), removed again after."""
    try:
        return pwd.getpwnam("tracer-aggregator")
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                        "tracer-aggregator"], check=True, capture_output=True)
        ctx.cleanups.append(lambda: subprocess.run(["userdel", "tracer-aggregator"], capture_output=True))
        return pwd.getpwnam("tracer-aggregator")


@test
def on_an_installed_host_tracer_run_keeps_a_database_where_the_user_asked(ctx):
    """With the packaged tracer-aggregator user present (after `make install`), tracer run's own
    aggregator runs as someone who can write the database the user named: the sudo user for a
    directory of theirs, tracer-aggregator for a directory it owns. Never nobody (any unrelated
    service's uid, issue 56): a root:nogroup 2775 directory, which only nobody's group could
    write, is refused with a --db that works instead. Before, it always chose
    tracer-aggregator, which could not write the first: `sudo tracer run --db ~/x.db` failed."""
    packaged = packaged_aggregator_user(ctx)
    nobody = pwd.getpwnam("nobody")
    env = dict(os.environ, SUDO_UID=str(nobody.pw_uid), SUDO_GID=str(nobody.pw_gid), SUDO_USER="nobody")
    cases = []
    mine = ctx.path("users-own")
    os.mkdir(mine, 0o755)
    os.chown(mine, nobody.pw_uid, nobody.pw_gid)
    cases.append(("a directory of the sudo user's", os.path.join(mine, "t.db"), env, nobody.pw_uid))
    system = ctx.path("system-like")
    os.mkdir(system, 0o750)
    os.chown(system, packaged.pw_uid, packaged.pw_gid)
    cases.append(("a directory tracer-aggregator owns", os.path.join(system, "t.db"), None, packaged.pw_uid))
    for what, db, run_env, owner in cases:
        p = subprocess.run([ctx.bin("tracer"), "run", "--db", db, "--", "sh", "-c", "exit 4"],
                           capture_output=True, text=True, timeout=120, env=run_env)
        ctx.check(p.returncode == 4, f"{what}: tracer run passes the command's exit 4: {p.returncode}\n{p.stderr[-800:]}")
        if os.path.exists(db):
            ctx.check(os.stat(db).st_uid == owner, f"{what}: the database belongs to uid {owner}, not "
                      f"{os.stat(db).st_uid}")
            ctx.check(ctx.one("SELECT exit_code FROM runs", db=db) == 4, f"{what}: the run recorded")
        else:
            ctx.check(False, f"{what}: no database at {db}")
    # root's own directory, no sudo: no unprivileged user can write it; a root:nogroup 2775
    # one only nobody's group could. tracer run refuses both, and the --db it suggests
    # instead (a new directory it makes) works.
    roots = ctx.path("roots-own")
    os.mkdir(roots, 0o755)
    demo = ctx.path("demo-like")
    os.mkdir(demo)
    os.chown(demo, 0, nobody.pw_gid)
    os.chmod(demo, 0o2775)
    for d in (demo, roots):
        p = subprocess.run([ctx.bin("tracer"), "run", "--db", os.path.join(d, "t.db"), "--", "sh", "-c", "exit 4"],
                           capture_output=True, text=True, timeout=120)
        suggested = re.search(r"--db (\S+)\)", p.stderr)
        ctx.check(p.returncode not in (0, 4) and suggested and not os.path.exists(os.path.join(d, "t.db")),
                  f"{d}: refused, with a --db to use instead: {p.returncode}\n{p.stderr[-600:]}")
    if suggested:
        p = subprocess.run([ctx.bin("tracer"), "run", "--db", suggested.group(1), "--", "sh", "-c", "exit 4"],
                           capture_output=True, text=True, timeout=120)
        ctx.check(p.returncode == 4 and ctx.one("SELECT exit_code FROM runs", db=suggested.group(1)) == 4,
                  f"the suggested --db {suggested.group(1)} keeps the run: {p.returncode}\n{p.stderr[-600:]}")


@test
def json_report_leaves_stdout_to_the_command(ctx):
    """`tracer run --json` with a command that prints: stdout is exactly the command's; the
    report is JSON in --json-out's file (and on stderr with --json alone)."""
    report = ctx.path("report.json")
    p = ctx.tracer_run(["sh", "-c", "echo hello; echo world"], "--json-out", report, expect=0)
    ctx.check(p.stdout == "hello\nworld\n", f"stdout is the command's alone: {p.stdout!r}")
    doc = load_json(report)
    ctx.check(doc.get("run", {}).get("id") == ctx.latest_run() or "run" in doc,
              f"the file is the run's JSON report: {list(doc)[:6]}")
    p = ctx.tracer_run(["sh", "-c", "echo hello"], "--json", expect=0)
    ctx.check(p.stdout == "hello\n", f"--json alone: stdout is the command's: {p.stdout!r}")
    start = p.stderr.find("{")
    ctx.check(start >= 0, "the JSON report is on stderr")
    if start >= 0:
        decoded, _ = json.JSONDecoder().raw_decode(p.stderr[start:])
        ctx.check("run" in decoded, f"and parses: {list(decoded)[:6]}")


@test
def a_large_run_prints_a_summary(ctx):
    """A run of 400 processes prints a summary and where to see the rest, not 400 lines;
    the database still holds every process."""
    p = ctx.tracer_run(["bash", "-c", "for i in $(seq 400); do /bin/true; done"], expect=0)
    lines = p.stderr.count("\n")
    ctx.check(lines < 60, f"a summary, not a line per process: {lines} lines")
    ctx.check(f"tracer show --db {ctx.db}" in p.stderr, f"it says where the rest is: {p.stderr[-300:]}")
    n = ctx.one("SELECT count(*) FROM processes WHERE run_id = ? AND exe = '/usr/bin/true'", ctx.latest_run())
    ctx.check(n == 400, f"every process recorded: {n}")


def tracer_run_on_a_terminal(ctx, cmd, columns=100, rows=30):
    """tracer run with stderr (and stdout) on a pseudo-terminal of that size: what it wrote."""
    import fcntl
    import pty
    import struct
    import termios
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    p = subprocess.Popen([ctx.bin("tracer"), "run", "--db", ctx.db, "--", *cmd], stdin=subprocess.DEVNULL,
                         stdout=slave, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        out += chunk
    p.wait(timeout=300)
    os.close(master)
    return p.returncode, out.decode(errors="replace")


@test
def a_run_of_thousands_of_processes_in_a_few_steps_prints_a_screenful(ctx):
    """A script of three steps of 700 processes each (gzip, wc, sort loops; the sort step
    sleeps a second more) and two failing commands: `tracer run`
    prints at most a screenful (the report's 40 lines and tracer run's own closing line),
    piped and on a 100x30 terminal, whatever the run's size. Within it: the longest step
    first (the script times each with $EPOCHREALTIME), both failures by pid and exit status (each process wrote its own pid),
    and where the rest is (`tracer show`). The database holds every process (each loop's
    count is the truth). On the code before, each step listed every one of its processes:
    2,100+ lines."""
    n = 700
    fail_pid, walls = ctx.path("fail.pid"), ctx.path("walls")
    script = ctx.path("three-steps.sh")
    loops = {"gzip": "gzip -c /etc/hostname", "wc": "wc -c /etc/hostname", "sort": "sort /etc/hostname"}
    with open(script, "w") as f:
        f.write("#!/bin/bash\n")
        # Each step's wall clock as the script saw it ($EPOCHREALTIME: no process of its own).
        for tool, cmd in loops.items():
            tail = "; sleep 1" if tool == "sort" else ""
            f.write(f"s=$EPOCHREALTIME; bash -c 'for i in $(seq {n}); do {cmd} > /dev/null; done{tail}'; "
                    f"echo {tool} $s $EPOCHREALTIME >> {walls}\n")
        f.write(f"sh -c 'echo $$ > {fail_pid}.1; exit 3'\n"
                f"sh -c 'echo $$ > {fail_pid}.2; exit 5'\n"
                "true\n")
    os.chmod(script, 0o755)
    for how in ("piped", "terminal"):
        if os.path.exists(walls):
            os.unlink(walls)
        if how == "piped":
            p = ctx.tracer_run([script], expect=0)
            text = p.stderr
        else:
            rc, text = tracer_run_on_a_terminal(ctx, [script])
            ctx.check(rc == 0, f"on a terminal: exit {rc}")
        took = {tool: float(e) - float(s) for tool, s, e in (line.split() for line in open(walls))}
        ranked = sorted(took, key=took.get, reverse=True)
        # The longest as the script timed it; within 10% of the next, either may lead.
        leaders = [t for t in ranked if took[t] >= 0.9 * took[ranked[0]]]
        run = ctx.latest_run()
        lines = text.count("\n")
        ctx.check(lines <= 41, f"{how}: at most a screenful: {lines} lines\n{text[:3000]}")
        ctx.check(f"tracer show --db {ctx.db} {run}" in text, f"{how}: it says where the rest is: {text[-400:]}")
        steps = [line for line in text.splitlines() if line.lstrip().startswith("step ")]
        longest = text.split(steps[0], 1)[1].splitlines()[1] if steps else ""
        ctx.check(steps and any(longest.lstrip().startswith(f"{t}: {n} processes") for t in leaders),
                  f"{how}: the longest step first ({leaders}, by the script's clock {took}): "
                  f"{steps[:1]} / {longest!r}")
        for k, code in ((1, 3), (2, 5)):
            pid = int(open(f"{fail_pid}.{k}").read())
            ctx.check(re.search(rf"pid {pid}\s+exit {code}\b", text),
                      f"{how}: the failure pid {pid} exit {code} is named:\n{text[-1200:]}")
        for tool in ("gzip", "wc", "sort"):
            got = ctx.one("SELECT count(*) FROM processes WHERE run_id = ? AND comm = ?", run, tool)
            ctx.check(got == n, f"{how}: every {tool} recorded: {got} of {n}")


@test
def the_hint_to_read_the_rest_is_never_cut_on_a_narrow_terminal(ctx):
    """A run past a screenful (300 processes) on a 60-column terminal: every line fits the
    terminal, and the summary's last line, which says where the rest is, is wrapped at its
    words rather than cut with "…": joined again it holds the whole `tracer show --db PATH
    RUN` (the database's real path, the run's real id). On the code before, it was cut."""
    rc, text = tracer_run_on_a_terminal(ctx, ["bash", "-c", "for i in $(seq 300); do /bin/true; done"],
                                        columns=60)
    run = ctx.latest_run()
    # Progress lines overwrite themselves (\r, erase-line); tracer run's own lines are printed
    # whole for the terminal to wrap; the report is what is fitted.
    plain = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
    lines = [ln for ln in re.split(r"\r\n|\n|\r", plain) if not ln.startswith("tracer run:")]
    wide = [ln for ln in lines if len(ln) > 60]
    ctx.check(rc == 0 and not wide, f"every line of the report fits 60 columns: {rc} {wide[:3]}")
    joined = re.sub(r"\n {2,}", " ", "\n".join(lines))
    m = re.search(r"(\d+) processes in all: the whole tree and every step with `([^`]*)`", joined)
    ctx.check(m and m.group(2) == f"tracer show --db {ctx.db} {run}" and "…" not in m.group(0),
              f"the hint, whole: {m.group(0) if m else None!r}\n{text[-800:]}")


@test
def a_run_that_hands_work_to_slurm_says_so(ctx):
    """A script that submits its work with `sbatch --wait` to a real Slurm on this host: the
    job ran (its output is there, written by the job, not by the script), the run holds the
    client and the job's own processes (the job is linked to its submission:
    docs/correlation.md, Batch jobs), and `tracer run` says so at the end. The same script
    without the submission gets no such line."""
    if not SlurmCluster.available():
        raise Failure("slurm-wlm and munge are not installed (deploy/install-deps.sh tests)")
    cluster = SlurmCluster(ctx.path("slurm"))
    job_out = ctx.path("job.out")
    job = ctx.path("job.sh")
    with open(job, "w") as f:
        f.write("#!/bin/bash\nmd5sum /etc/services > /dev/null\necho job-ran-on-$(hostname)\n")
    os.chmod(job, 0o755)
    try:
        cluster.start()
        env = dict(cluster.env)
        p = ctx.tracer_run(["bash", "-c", f"sbatch --wait -o {job_out} {job} > /dev/null && echo submitted"],
                           expect=0, env=env)
    finally:
        cluster.stop()
    ctx.check(os.path.exists(job_out) and "job-ran-on-" in open(job_out).read(),
              "the job ran under Slurm and wrote its output")
    run = ctx.latest_run()
    names = {r[0] for r in ctx.query("SELECT comm FROM processes WHERE run_id = ?", run)}
    ctx.check("sbatch" in names and "md5sum" in names,
              f"the run holds the client and the job it ran here: {sorted(names)}")
    ctx.check("1 batch submission ran on this host and is part of this run" in p.stderr,
              f"tracer run says where the work went: {p.stderr[-500:]}")
    plain = ctx.tracer_run(["bash", "-c", f"{job} > /dev/null && echo done"], expect=0)
    ctx.check("batch submission" not in plain.stderr and "batch scheduler" not in plain.stderr,
              f"no such line without a submitter: {plain.stderr[-300:]}")


def children_of(pid):
    """(pid, argv) of the processes whose parent is pid, from /proc."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    out.append((int(d), f.read().split(b"\0")))
        except (OSError, ValueError, IndexError):
            pass
    return out


@test
def a_killed_tracer_run_takes_its_daemons_with_it(ctx):
    """`kill -9` of a self-hosted `tracer run`: its collector (probes attached, tracing the
    host) and aggregator stop by themselves within 1 s (2.5 s under ASan, whose exit checks
    take time; a stopped daemon is one that exited, whether or not init has reaped it yet),
    the run so far stays in the database and ends as `unknown` (its command runs on,
    unwatched), and the next `tracer run` removes the socket directory the killed one left
    (once it is a minute old: here its time is set back)."""
    db = ctx.path("killed.db")
    p = subprocess.Popen([ctx.bin("tracer"), "run", "--db", db, "--", "sleep", "60"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ctx.procs.append(p)
    daemons, deadline = [], time.time() + 40
    while time.time() < deadline and len(daemons) < 2:
        daemons = [(pid, argv) for pid, argv in children_of(p.pid) if b"tracer-" in argv[0]]
        time.sleep(0.1)
    sleeper = [pid for pid, argv in children_of(p.pid) if argv[0] == b"sleep"]
    ctx.check(len(daemons) == 2, f"tracer run started its two daemons: {daemons}")
    socket = [a for _, argv in daemons for i, a in enumerate(argv) if i and argv[i - 1] == b"--socket"]
    # Killed once it records (its collector loads for seconds under ASan): the run so far exists.
    recording_by = time.time() + 40
    while time.time() < recording_by:
        try:
            if ctx.query("SELECT count(*) FROM runs", db=db)[0][0]:
                break
        except sqlite3.Error:
            pass
        time.sleep(0.1)
    time.sleep(0.5)
    def exited(pid):
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
        except OSError:
            return True

    p.kill()
    killed = time.time()
    p.wait()
    limit = 2.5 if "asan" in ctx.build else 1.0
    while time.time() < killed + 10 and not all(exited(pid) for pid, _ in daemons):
        time.sleep(0.02)
    took = time.time() - killed
    left = [pid for pid, _ in daemons if not exited(pid)]
    ctx.check(not left and took <= limit,
              f"both daemons stopped within {limit} s of tracer run's death: {took:.2f} s, {left} still alive")
    for pid in sleeper:  # the command is the user's: it is not ours to kill
        os.kill(pid, 9)
    rows = ctx.query("SELECT name, status, end_ns IS NOT NULL FROM runs", db=db)
    ctx.check(len(rows) == 1, f"the run so far is in the database: {rows}")
    ctx.check(rows and rows[0][1:] == ("unknown", 1),
              f"its run ends as unknown, not running: {rows}")
    listing = subprocess.run([ctx.bin("tracer"), "runs", "--db", db], capture_output=True, text=True, timeout=60)
    ctx.check(" unknown " in listing.stdout and " running " not in listing.stdout,
              f"tracer runs says unknown: {listing.stdout!r}")
    shown = subprocess.run([ctx.bin("tracer"), "show", "--db", db], capture_output=True, text=True, timeout=60)
    header = shown.stdout.splitlines()[2] if len(shown.stdout.splitlines()) > 2 else shown.stdout
    ctx.check(header.lstrip().startswith("unknown") and "running" not in header,
              f"tracer show's header says unknown: {header!r}")
    if socket:
        sock_dir = os.path.dirname(socket[0].decode())
        ctx.check(os.path.isdir(sock_dir) and not os.listdir(sock_dir),
                  f"the killed run's socket directory is left, empty: {sock_dir}")
        old = time.time() - 120
        os.utime(sock_dir, (old, old))
        ctx.tracer_run(["true"], expect=0)
        ctx.check(not os.path.exists(sock_dir), f"the next tracer run removed it: {sock_dir}")


@test
def tracer_run_in_a_pid_namespace_of_its_own(ctx):
    """`tracer run` inside a container with its own PID namespace and boot id (unshare --pid
    --mount-proc and a boot_id bound over the kernel's, as systemd-nspawn sets them up): it
    reports as soon as the command ends, not after 30 s with "not recorded"; the run holds the
    command's processes numbered as the container numbers them (each measure helper's own
    report of its child's pid), with their CPU within 1 ms + 1% of what wait4 said inside,
    under the container's boot id; and nothing of the processes outside the namespace."""
    outside = subprocess.Popen(["bash", "-c", "while :; do /bin/true; sleep 0.05; done"])
    ctx.cleanups.append(outside.kill)
    loop = "; ".join(f"{ctx.helper('measure')} {ctx.path(f'n{i}.json')} -- {ctx.helper('cpuburn')} 60"
                     for i in range(3))
    started = time.monotonic()
    # Its own boot id too, as systemd-nspawn gives one: a file bound over the kernel's.
    fake_boot = ctx.path("boot_id")
    with open(fake_boot, "w") as f:
        f.write(str(uuid.uuid4()) + "\n")
    inside = (f"mount --bind {fake_boot} /proc/sys/kernel/random/boot_id && "
              f"exec {ctx.bin('tracer')} run --db {ctx.db} --run in-a-container -- bash -c '{loop}'")
    r = subprocess.run(["unshare", "--pid", "--fork", "--mount", "--mount-proc", "sh", "-c", inside],
                       capture_output=True, text=True, timeout=120)
    took = time.monotonic() - started
    ctx.check(r.returncode == 0 and "not recorded" not in r.stderr,
              f"tracer run in the namespace: exit {r.returncode}: {r.stderr[-600:]}")
    ctx.check(took < 20, f"it took {took:.1f} s (the report waited for a run it could not find?)")
    run = ctx.one("SELECT id FROM runs WHERE name = 'in-a-container'")
    boots = {b for (b,) in ctx.query("SELECT DISTINCT boot_id FROM collector_stats")}
    ctx.check(boots == {open(fake_boot).read().strip().replace("-", "")},
              f"the container's boot id, not the host's: {boots}")
    for i in range(3):
        t = load_json(ctx.path(f"n{i}.json"))
        rows = ctx.query("SELECT cpu_user_ns + cpu_sys_ns FROM processes WHERE run_id = ? AND pid = ? AND "
                         "exe LIKE '%/cpuburn'", run, t["pid"])
        ctx.check(len(rows) == 1, f"cpuburn {i} under its namespace pid {t['pid']}: {rows}")
        if rows:
            truth = t["utime_ns"] + t["stime_ns"]
            ctx.close(rows[0][0], truth, 1_000_000 + truth // 100, f"cpuburn {i} CPU (ns)")
    # The namespace numbers its first process 1: the pids are its own, not the host's.
    pids = [p for (p,) in ctx.query("SELECT pid FROM processes")]
    ctx.check(pids and max(pids) < 1000, f"pids as the namespace numbers them: {sorted(pids)[:12]}")
    strays = ctx.query("SELECT exe FROM processes WHERE exe LIKE '%/true' OR exe LIKE '%/sleep'")
    ctx.check(not strays, f"nothing from outside the namespace: {strays[:4]}")
    outside.kill()


@test
def a_run_database_is_not_world_readable(ctx):
    """The database holds users' command lines: a self-hosted run's database and its WAL are
    created 0640 or stricter whatever the umask of the user who ran tracer (here 022)."""
    old = os.umask(0o022)
    try:
        ctx.tracer_run(["true"], expect=0)
    finally:
        os.umask(old)
    for suffix in ("", "-wal", "-shm"):
        path = ctx.db + suffix
        if os.path.exists(path):
            mode = os.stat(path).st_mode & 0o777
            ctx.check(not mode & 0o007, f"{path} is {oct(mode)}: others can read it")
