"""Issue 56, nobody but the collector: no local user other than root can receive, forge,
block or read the collector's stream or a database they were not given, whatever directories
they own and whatever uid they run as. Each test is an attack that worked before
(docs/security.md, "Who may talk to whom")."""
import json
import os
import pwd
import re
import subprocess
import time

from harness import plain_build_only, test, wait_for_socket
from test_security import expect_aggregator, status_fields


# Runs as the attacker: takes the socket's name whenever it can (unlink, bind, listen), answers
# the SP handshake as an aggregator would, and counts every byte a peer sends after its 8-byte
# SP header: a collector's frames. Writes what it did to OUT as JSON when STOP appears.
SOCKET_THIEF = r"""
import glob, json, os, socket, sys, threading, time
targets, out, stop = sys.argv[1].split(","), sys.argv[2], sys.argv[3]
got = {"taken": [], "payload": 0, "errors": set()}
def serve(srv):
    while True:
        try:
            c, _ = srv.accept()
        except OSError:
            return
        def read(c=c):
            c.settimeout(30)
            hdr = b""
            try:
                while len(hdr) < 8:
                    b = c.recv(8 - len(hdr))
                    if not b:
                        return
                    hdr += b
                c.sendall(bytes([0, 83, 80, 0, 0, 0x11, 0, 0]))  # pair1's SP header
                while True:
                    b = c.recv(65536)
                    if not b:
                        return
                    got["payload"] += len(b)
            except OSError:
                return
        threading.Thread(target=read, daemon=True).start()
while not os.path.exists(stop):
    for pattern in targets:
        for path in glob.glob(pattern):
            if path in got["taken"]:
                continue
            try:
                os.unlink(path)
                srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                srv.bind(path)
                os.chmod(path, 0o777)  # any process may connect: the unprivileged collector too
                srv.listen(16)
                got["taken"].append(path)
                threading.Thread(target=serve, args=(srv,), daemon=True).start()
            except OSError as e:
                got["errors"].add(f"{path}: {e.strerror}")
    time.sleep(0.005)
time.sleep(0.5)
json.dump({"taken": got["taken"], "payload": got["payload"], "errors": sorted(got["errors"])}, open(out, "w"))
"""


def throwaway_user(ctx, name):
    """A local user made for the test and removed after it."""
    subprocess.run(["userdel", name], capture_output=True)
    subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True,
                   capture_output=True)
    ctx.cleanups.append(lambda: subprocess.run(["userdel", name], capture_output=True))
    return pwd.getpwnam(name)


# Debian's interpreter: other users cannot reach root's (a pyenv under /root, mode 0700).
OTHER_USERS_PYTHON = "/usr/bin/python3"


def as_user(user, args):
    return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups", *args]


def start_thief(ctx, user, patterns, name):
    out, stop = ctx.path(f"{name}.json"), ctx.path(f"{name}.stop")
    thief = subprocess.Popen(as_user(user, [OTHER_USERS_PYTHON, "-c", SOCKET_THIEF, ",".join(patterns), out, stop]))
    ctx.procs.append(thief)

    def result():
        open(stop, "w").close()
        thief.wait(timeout=30)
        return json.load(open(out)) if os.path.exists(out) else {"taken": [], "payload": -1, "errors": ["no report"]}
    return result


@test
@plain_build_only("CI time: the key's proof and the peers run under ASan in test_ipc_auth and test_receiver")
def a_database_directory_owner_cannot_take_over_tracer_run(ctx):
    """`sudo tracer run --db /srv/p/r.db` where /srv/p is another user's (issue 56.1). That user
    tries, all through the run, to unlink the socket of every tracer run they can find and
    listen in its place. Before, the socket directory was theirs (their uid ran the aggregator)
    and they received the collector's frames, the whole host's activity, while root was told
    'the run was not recorded'. Now the directory is root's: they take nothing, receive
    nothing, and the run is recorded. Then with --socket in their own directory, where they can
    take the name: the collector hangs up on a listener that is not its aggregator (its pid),
    so they still receive nothing."""
    owner = throwaway_user(ctx, "tracer-it-owner")
    theirs = ctx.path("srv-p")
    os.mkdir(theirs, 0o755)
    os.chown(theirs, owner.pw_uid, owner.pw_gid)
    os.chmod(theirs, 0o755)
    stolen = start_thief(ctx, owner, ["/run/tracer-run.*/collector.sock", "/tmp/tracer-run.*/collector.sock"],
                         "thief")
    db = os.path.join(theirs, "r.db")
    p = subprocess.run([ctx.bin("tracer"), "run", "--db", db, "--run", "owned-dir", "--", "sleep", "3"],
                       capture_output=True, text=True, timeout=120)
    got = stolen()
    ctx.check(got["payload"] == 0 and not got["taken"],
              f"the directory's owner took no socket and received nothing: {got}")
    ctx.check(p.returncode == 0 and "was not recorded" not in p.stderr, f"tracer run: {p.returncode} {p.stderr[-400:]}")
    rows = ctx.query("SELECT status, exit_code FROM runs WHERE name = 'owned-dir'", db=db) if os.path.exists(db) else []
    ctx.check(rows == [("ok", 0)], f"root's run is recorded, ended ok: {rows}")
    # Their own directory as the rendezvous: the name is theirs to take, the stream is not.
    sock = os.path.join(theirs, "s.sock")
    stolen = start_thief(ctx, owner, [sock], "thief2")
    p = subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", os.path.join(theirs, "r2.db"),
                        "--", "sleep", "2"], capture_output=True, text=True, timeout=120)
    got = stolen()
    ctx.check(got["taken"] == [sock], f"the owner did take the name in their own directory: {got}")
    ctx.check(got["payload"] == 0, f"and received no frame: {got['payload']} bytes")
    ctx.check("not the aggregator we expect" in p.stderr, f"the collector said whom it hung up on: {p.stderr[-400:]}")


@test
@plain_build_only("CI time: the key's proof and the peers run under ASan in test_ipc_auth and test_receiver")
def a_process_without_the_key_cannot_forge_frames(ctx):
    """A process that can reach the aggregator's socket (mode 0666 here) sends a well-formed
    frame with an exec (framesend valid), as nobody, as the aggregator's own uid, and as root
    with a wrong key: nothing is stored, each is refused and counted (aggregator_stats,
    `tracer status`). Before, nobody was a trusted collector on every host without a
    tracer-collector user, and its forged exec was stored. The real collector still delivers."""
    sock, db = ctx.path("s.sock"), ctx.path("agg.db")
    agg = ctx.spawn([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db, "--user", "tracer-aggregator",
                     "--socket-mode", "0666"])
    wait_for_socket(sock)
    nobody, aggregator = pwd.getpwnam("nobody"), pwd.getpwnam("tracer-aggregator")
    send = ctx.helper("framesend")
    attempts = [("nobody", as_user(nobody, [send, sock, "valid"])),
                ("the aggregator's uid", as_user(aggregator, [send, sock, "valid"])),
                ("root with a wrong key", [send, "--key", "random", sock, "valid"])]
    for who, args in attempts:
        r = subprocess.run(args, capture_output=True, text=True, timeout=30)
        ctx.check(r.returncode != 0 and "acked" not in r.stdout, f"{who}: its frame must not be acked: "
                  f"{r.returncode} {r.stdout} {r.stderr[-200:]}")
    col = ctx.spawn([ctx.bin("tracer-collector"), "--socket", sock, "--user", "nobody",
                     *expect_aggregator(ctx, "tracer-aggregator")])
    end = time.time() + 40
    while time.time() < end and not ctx.query("SELECT count(*) FROM collector_stats WHERE snapshot_processes > 0",
                                              db=db)[0][0]:
        time.sleep(0.2)
    forged = ctx.one("SELECT count(*) FROM processes WHERE exe = '/usr/bin/framesend-test'", db=db)
    ctx.check(forged == 0, f"no forged exec stored: {forged}")
    streams = ctx.one("SELECT count(*) FROM collector_stats", db=db)
    ctx.check(streams == 1, f"only the real collector's stream exists: {streams}")
    refused = ctx.one("SELECT refused_peers FROM aggregator_stats ORDER BY id DESC LIMIT 1", db=db)
    ctx.check(refused >= 3, f"each forger refused and counted: refused_peers {refused}")
    st = subprocess.run([ctx.bin("tracer"), "status", "--db", db, "--socket", sock], capture_output=True,
                        text=True, timeout=30)
    m = re.search(r"(\d+) connections refused", st.stdout)
    ctx.check(m and int(m.group(1)) >= 3, f"tracer status shows the refusals: {st.stdout[-300:]}")
    ctx.stop(col)
    ctx.stop(agg)


HOLDER = r"""
import os, socket, sys, time
path, stop = sys.argv[1], sys.argv[2]
held, n = [], 0
while not os.path.exists(stop):
    held = [s for s in held if s.fileno() >= 0]
    while len(held) < 4:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.sendall(bytes([0, 83, 80, 0, 0, 0x11, 0, 0]))
            held.append(s)
            n += 1
        except OSError:
            time.sleep(0.01)
            break
    for s in list(held):  # a closed connection is replaced at once
        s.setblocking(False)
        try:
            if s.recv(65536) == b"":
                s.close()
                held.remove(s)
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            held.remove(s)
    time.sleep(0.005)
print(n)
"""


@test
def a_connection_that_proves_nothing_does_not_block_the_collector(ctx):
    """A nobody process connects to the aggregator before the collector does, completes the SP
    handshake and holds four connections, reconnecting at once whenever one is closed. Before,
    the socket took one peer: it held the only slot and 0 of 500 processes were delivered. Now
    unproven connections are closed within a second and never keep the collector out: all 500
    of a `tracer run` through the daemons arrive (ground truth: the loop's own count)."""
    sock, db = ctx.path("s.sock"), ctx.path("agg.db")
    agg = ctx.spawn([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db, "--user", "tracer-aggregator",
                     "--socket-mode", "0666"])
    wait_for_socket(sock)
    stop = ctx.path("holder.stop")
    holder = subprocess.Popen(as_user(pwd.getpwnam("nobody"), [OTHER_USERS_PYTHON, "-c", HOLDER, sock, stop]),
                              stdout=subprocess.PIPE, text=True)
    ctx.procs.append(holder)
    time.sleep(1.0)
    col = ctx.spawn([ctx.bin("tracer-collector"), "--socket", sock, "--user", "nobody",
                     *expect_aggregator(ctx, "tracer-aggregator")])
    end = time.time() + 40
    while time.time() < end and not ctx.query("SELECT count(*) FROM collector_stats WHERE snapshot_processes > 0",
                                              db=db)[0][0]:
        time.sleep(0.2)
    p, run = ctx.daemon_run(sock, db, ["bash", "-c", "for i in $(seq 500); do /bin/true; done"],
                            "--run", "held", timeout=120)
    open(stop, "w").close()
    out, _ = holder.communicate(timeout=30)
    ctx.check(p.returncode == 0, f"tracer run through the daemons: {p.returncode} {p.stderr[-300:]}")
    n = ctx.one("SELECT count(*) FROM processes WHERE run_id = ? AND exe = '/usr/bin/true'", run,
                db=db) if run else 0
    ctx.check(n == 500, f"all 500 processes delivered while nobody held connections: {n}; {p.stderr[-600:]}")
    opened = int(out.strip() or 0)
    ctx.check(opened > 4, f"the holder's connections were closed and reopened: {opened} opened")
    refused = ctx.one("SELECT refused_peers FROM aggregator_stats ORDER BY id DESC LIMIT 1", db=db)
    ctx.check(refused >= 4, f"the unproven connections are counted: refused_peers {refused}")
    ctx.stop(col)
    ctx.stop(agg)


@test
def nobody_cannot_read_a_tracer_run_database(ctx):
    """root's `tracer run` into an existing directory and into a new one it makes: a process
    running as nobody can read neither database, nor its WAL. Before, tracer run's aggregator
    ran as nobody wherever no tracer user could write (a new directory always), so nobody's
    processes read every command line of the run."""
    for db in (ctx.db, ctx.path("new-dir/r.db")):
        p = subprocess.run([ctx.bin("tracer"), "run", "--db", db, "--run", "private", "--", "sh", "-c",
                            "echo private-argv-7d1e >/dev/null"], capture_output=True, text=True, timeout=120)
        ctx.check(p.returncode == 0, f"{db}: tracer run {p.returncode} {p.stderr[-300:]}")
        ctx.check(ctx.query("SELECT count(*) FROM runs WHERE name = 'private'", db=db) == [(1,)],
                  f"{db}: the run is recorded")
        owner = pwd.getpwuid(os.stat(db).st_uid).pw_name
        ctx.check(owner != "nobody", f"{db}: the database is not nobody's: {owner}")
        for path in (db, db + "-wal"):
            if not os.path.exists(path):
                continue
            r = subprocess.run(as_user(pwd.getpwnam("nobody"), [OTHER_USERS_PYTHON, "-c",
                               f"import sys; sys.stdout.write(str(len(open({path!r}, 'rb').read())))"]),
                               capture_output=True, text=True, timeout=30)
            ctx.check(r.returncode != 0 and "Permission denied" in r.stderr,
                      f"nobody must not read {path}: exit {r.returncode}, read {r.stdout or 0} bytes")


@test
def tracer_runs_daemons_hold_ids_no_other_process_has(ctx):
    """While root's `tracer run` runs: its collector runs as an id no account has and no other
    process holds, so a nobody process cannot signal it (before, it ran as nobody: any nobody
    process could stop the host's tracing); its aggregator is not nobody; the socket directory
    is root's, set-group-id to that id, mode 2730 (no one else may write or list it)."""
    p = subprocess.Popen([ctx.bin("tracer"), "run", "--db", ctx.db, "--", "sleep", "4"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ctx.procs.append(p)
    procs, end = {}, time.time() + 60
    while time.time() < end and len(procs) < 2:
        for c in open(f"/proc/{p.pid}/task/{p.pid}/children").read().split():
            try:
                exe = os.path.basename(os.readlink(f"/proc/{c}/exe"))
                if exe in ("tracer-collector", "tracer-aggregator"):
                    uid = int(status_fields(c)["Uid"].split()[0])
                    if uid != 0:  # after the drop
                        procs[exe] = (int(c), uid, open(f"/proc/{c}/cmdline").read().split("\0"))
            except OSError:
                pass
        time.sleep(0.1)
    ctx.check(len(procs) == 2, f"found both daemons after their drop: {procs}")
    if len(procs) == 2:
        col_pid, col_uid, _ = procs["tracer-collector"]
        _, agg_uid, agg_argv = procs["tracer-aggregator"]
        nobody = pwd.getpwnam("nobody")
        ctx.check(agg_uid != nobody.pw_uid, f"the aggregator is not nobody: uid {agg_uid}")
        try:
            pwd.getpwuid(col_uid)
            ctx.check(False, f"the collector's uid {col_uid} belongs to an account")
        except KeyError:
            pass
        others = [d for d in os.listdir("/proc") if d.isdigit() and d != str(col_pid)
                  and os.path.exists(f"/proc/{d}/status") and status_fields(d).get("Uid", "").split()[:1] == [str(col_uid)]]
        ctx.check(not others, f"no other process holds the collector's uid {col_uid}: {others}")
        r = subprocess.run(as_user(nobody, ["kill", "-0", str(col_pid)]), capture_output=True, text=True)
        ctx.check(r.returncode != 0, f"nobody cannot signal the collector: kill -0 exit {r.returncode}")
        sock = agg_argv[agg_argv.index("--socket") + 1]
        st = os.stat(os.path.dirname(sock))
        ctx.check(st.st_uid == 0 and st.st_gid == col_uid and (st.st_mode & 0o7777) == 0o2730,
                  f"the socket directory is root's, group {col_uid}, 2730: uid {st.st_uid} gid {st.st_gid} "
                  f"mode {oct(st.st_mode & 0o7777)}")
    p.wait(timeout=120)
    ctx.check(p.returncode == 0, f"tracer run exit {p.returncode}: {p.stderr.read()[-300:]}")
