"""Faults on purpose: the kernel ring buffer overflowing, the collector's queue
overflowing while the aggregator is dead, the database's disk filling up, and
SIGHUP storms under load. The ground truth is the number of processes the
storm helper started; every one of them must be either recorded or counted as
lost, per event type, so nothing is lost silently."""
import json
import os
import signal
import sqlite3
import subprocess
import threading
import time

from harness import (Failure, load_json, plain_build_only, start_daemons, start_logged_aggregator, test,
                     wait_for_socket)

TRUE = "/usr/bin/true"
# Each storm's workers by its root's pid, read from /proc while it ran: other storms on
# a shared host (another user's tests) run the same helper and /bin/true.
STORM_WORKERS = {}


def storm(ctx, n, workers=2):
    """Runs the storm helper directly; returns its pid (the root of the tree we count)."""
    p, _ = storm_in_background(ctx, n, workers)
    ran = wait_storm(p)
    if ran != n:
        raise Failure(f"storm: {ran} of {n} children ran")
    return p.pid


def alive(pid, start_boot_ns):
    """Whether the process (pid and start time, to 20 ms) still exists."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return False
    start_ticks = int(fields[19])  # field 22, counted after the comm
    return abs(start_ticks * 1e9 / os.sysconf("SC_CLK_TCK") - start_boot_ns) < 20e6


def vanished_without_exit(ctx, db, since_ns, skip):
    """Processes that started before the window and are gone now, without a recorded
    exit: on a busy host (a shell's sleep, say) their exits can be among those lost
    with the storm's, and no row of the window shows them. skip: pids accounted
    for elsewhere (the daemons, a process the test killed)."""
    rows = ctx.query("SELECT pid, proc_start_boot_ns FROM processes WHERE start_ns < ? AND "
                     "state = 'running'", since_ns, db=db)
    return sum(1 for pid, start in rows if pid not in skip and not alive(pid, start))


def storm_tally(ctx, db, since_ns, root, workers=2, also_exited=(), daemons=()):
    """For the whole storm tree (the root, its workers, their children): how many execs
    and exits reached the database, against how many happened: an exec for the root
    and each child, an exit for every process. Rows are per image, so per process (pid
    and start time) we take whether any image has it. The workers are the parents of
    the window's /usr/bin/true processes (their own fork events may be among the lost).
    Also returns how many other processes started or ended in the window (background
    noise), and how many from before the window vanished without a recorded exit.
    also_exited: other processes known to have exited while events were being lost
    (counted in "exit" when received; the caller adds them to what happened);
    daemons: the collector's and aggregator's pids (they exit after the window)."""
    parents = [r[0] for r in ctx.query("SELECT DISTINCT ppid FROM processes WHERE exe = ? AND start_ns >= ?",
                                       TRUE, since_ns, db=db)]
    if STORM_WORKERS.get(root):
        parents = [pp for pp in parents if pp in STORM_WORKERS[root]]
    if len(parents) != workers:
        raise Failure(f"expected the {workers} storm workers as the parents of /bin/true, found {parents}")
    marks = ",".join("?" * len(parents))
    # A process is (pid, start time): once pids wrap (pid_max is 32768 here) a pid
    # alone can name two processes of the window.
    children = ctx.query(f"SELECT pid, coalesce(max(exe = ?), 0), coalesce(max(state = 'exited'), 0) "
                         f"FROM processes WHERE ppid IN ({marks}) AND start_ns >= ? "
                         f"GROUP BY pid, proc_start_boot_ns", TRUE, *parents, since_ns, db=db)
    n = len(children)
    root_exec, root_exit = ctx.query("SELECT coalesce(max(exe LIKE '%/helpers/storm'), 0), "
                                     "coalesce(max(state = 'exited'), 0) FROM processes "
                                     "WHERE pid = ? AND start_ns >= ?", root, since_ns, db=db)[0]
    worker_exits = ctx.one(f"SELECT count(DISTINCT pid) FROM processes WHERE pid IN ({marks}) "
                           f"AND state = 'exited' AND start_ns >= ?", *parents, since_ns, db=db)
    extra = sum(ctx.one("SELECT count(*) FROM processes WHERE pid = ? AND state = 'exited'", pid, db=db)
                for pid in also_exited)
    tree = {root, *parents, *(c[0] for c in children), *also_exited}
    others = {r[0] for r in ctx.query("SELECT DISTINCT pid FROM processes WHERE start_ns >= ? OR end_ns >= ?",
                                      since_ns, since_ns, db=db)} - tree
    return {"children": n, "exec": sum(c[1] for c in children) + root_exec,
            "exit": sum(c[2] for c in children) + root_exit + worker_exits + extra,
            "child_exec": sum(c[1] for c in children), "child_exit": sum(c[2] for c in children),
            "background": len(others),
            "vanished": vanished_without_exit(ctx, db, since_ns, {*also_exited, *daemons})}


def storm_in_background(ctx, n, workers=2, seconds=None):
    """Starts the storm helper (up to n children on the workers, for at most seconds)
    without waiting; returns it and the time it started from."""
    since = time.time_ns()
    limit = [str(seconds)] if seconds else []
    p = subprocess.Popen([ctx.helper("storm"), str(n), str(workers), "/bin/true", *limit],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    STORM_WORKERS[p.pid] = storm_workers(p.pid, workers)
    return p, since


def storm_workers(root, workers):
    """The storm's workers: its root's children, which it forks first (empty if it
    ended before they could be read)."""
    end = time.time() + 2
    while time.time() < end:
        try:
            with open(f"/proc/{root}/task/{root}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            return []
        if len(kids) >= workers:
            return kids
        time.sleep(0.001)
    return []


def wait_storm(p):
    """Waits for a background storm; every child it started must have run. Returns how
    many ran."""
    out, err = p.communicate(timeout=300)
    if p.returncode != 0:
        raise Failure(f"storm: exit {p.returncode}: {err.strip()[-500:]}")
    return int(out)


def check_all_recorded(ctx, db, since, root, n):
    """Every child of the storm rooted at root recorded with its exec and exit; no loss counted."""
    tally = storm_tally(ctx, db, since, root)
    ctx.check(tally["child_exec"] == n and tally["child_exit"] == n, f"every process recorded: {tally}")
    lost = ctx.one("SELECT coalesce(sum(count), 0) FROM event_loss", db=db)
    ctx.check(lost == 0, f"no event lost: {lost}")
    gaps = ctx.one("SELECT coalesce(sum(seq_gaps), 0) FROM collector_stats", db=db)
    ctx.check(gaps == 0, f"no frame missing: {gaps}")


def losses(ctx, db):
    rows = ctx.query("SELECT hop, event_type, sum(count) FROM event_loss GROUP BY hop, event_type", db=db)
    return {(hop, kind): n for hop, kind, n in rows}


def forks_since_boot():
    """Tasks created since boot, threads included (/proc/stat "processes")."""
    with open("/proc/stat") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("processes "))


def check_accounted(ctx, n, tally, lost, kind, workers=2, extra_exits=0, unseen=0):
    """received + counted losses == what happened, for one event type, over the storm
    tree: n children plus the root execs; n children, the workers and the root exit.
    Background processes that lost the same event type make the sum larger; the slack
    allowed is an estimate of those (the background processes we saw, scaled by the
    loss rate) and, for exits, the processes from before the window that vanished
    without a recorded exit; stated in the message, and zero on a quiet machine."""
    happened = n + 1 if kind == "exec" else n + workers + 1 + extra_exits
    got = tally[kind]
    total = got + lost
    rate = lost / total if total else 0
    slack = int(tally["background"] * rate / (1 - rate) * 2 + 0.999) if rate < 1 else tally["background"]
    slack += unseen
    vanished = tally["vanished"] if kind == "exit" else 0
    slack += vanished
    ctx.check(happened <= total <= happened + slack,
              f"{kind}: {got} received + {lost} counted lost = {total}, happened {happened} "
              f"(slack {slack}: {tally['background']} background processes seen, {unseen} unseen, "
              f"{vanished} from before the window gone without a recorded exit)")


@test
def kernel_ring_overflow_is_counted_exactly(ctx):
    """A 1 MiB ring buffer and a frozen collector (SIGSTOP) under an exec storm: the
    kernel drops events; every exec and exit of the storm is received or counted in
    event_loss (hop kernel)."""
    sock, db = ctx.path("s.sock"), ctx.path("ring.db")
    agg, col = start_daemons(ctx, sock, db, extra_col=("--ring-mb", "1"))
    since = time.time_ns()
    n = 3000  # the frozen collector's 1 MiB ring holds about 150 processes' events
    os.kill(col.pid, signal.SIGSTOP)
    try:
        forks = forks_since_boot()
        root = storm(ctx, n)
        # Other processes started meanwhile can lose all their events to the full ring
        # and leave no row: the kernel's fork count bounds them (threads included).
        others = forks_since_boot() - forks - (n + 2 + 1)
    finally:
        os.kill(col.pid, signal.SIGCONT)
    time.sleep(1.0)
    ctx.stop(col)
    ctx.stop(agg)
    tally = storm_tally(ctx, db, since, root, daemons=(col.pid, agg.pid))
    lost = losses(ctx, db)
    kernel_exec, kernel_exit = lost.get(("kernel", "exec"), 0), lost.get(("kernel", "exit"), 0)
    ctx.check(kernel_exec + kernel_exit > 0, f"the ring buffer overflowed: kernel losses {lost}")
    ctx.check(tally["child_exec"] < n, f"some execs were really lost: {tally}")
    check_accounted(ctx, n, tally, kernel_exec, "exec", unseen=others)
    check_accounted(ctx, n, tally, kernel_exit, "exit", unseen=others)
    stats = ctx.one("SELECT kernel_drops FROM collector_stats", db=db)
    ctx.check(stats == sum(v for (hop, _), v in lost.items() if hop == "kernel"),
              f"collector_stats.kernel_drops {stats} == the per-type kernel losses {lost}")


@test
def queue_overflow_while_aggregator_is_dead_is_counted_exactly(ctx):
    """kill -9 the aggregator, storm with a 1 MiB collector queue, restart it: frames
    that did not fit were dropped oldest-first and counted (hop collector); the rest
    arrive; received + counted == started, per type."""
    sock, db = ctx.path("s.sock"), ctx.path("queue.db")
    agg, col = start_daemons(ctx, sock, db, extra_col=("--queue-mb", "1"))
    since = time.time_ns()
    forks = forks_since_boot()
    agg.kill()  # its own exit is one of the events the collector must carry or count
    agg.wait()
    n = 4500  # the 1 MiB queue holds about 2700 processes' frames
    root = storm(ctx, n)
    time.sleep(1.0)  # the collector drains the ring into its (overflowing) queue
    # Other processes started while the queue overflowed can lose every event
    # and leave no row: the kernel's fork count bounds them (threads included).
    others = max(0, forks_since_boot() - forks - (n + 2 + 1))
    agg2 = ctx.spawn([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db, "--user", "nobody"])
    wait_for_socket(sock)
    end = time.time() + 30
    while time.time() < end:  # until the collector's backlog is acknowledged
        if ctx.one("SELECT count(*) FROM processes WHERE start_ns >= ?", since, db=db) and \
                ctx.one("SELECT frames_received FROM collector_stats", db=db):
            break
        time.sleep(0.2)
    time.sleep(2.0)
    ctx.stop(col)
    ctx.stop(agg2)
    tally = storm_tally(ctx, db, since, root, also_exited=[agg.pid], daemons=(col.pid, agg2.pid))
    lost = losses(ctx, db)
    q_exec, q_exit = lost.get(("collector", "exec"), 0), lost.get(("collector", "exit"), 0)
    ctx.check(q_exec + q_exit > 0, f"the queue overflowed: {lost}")
    # Dropping oldest-first erases every trace of another process that ended at the start
    # of the window (seen once in CI: one exit too many); allow two such, never fewer
    # than happened.
    check_accounted(ctx, n, tally, q_exec + lost.get(("kernel", "exec"), 0), "exec", unseen=2 + others)
    check_accounted(ctx, n, tally, q_exit + lost.get(("kernel", "exit"), 0), "exit", extra_exits=1,
                    unseen=2 + others)
    gaps = ctx.one("SELECT seq_gaps FROM collector_stats", db=db)
    ctx.check(gaps > 0, f"the aggregator saw the dropped frames as sequence gaps: {gaps}")


@test
def a_burst_of_events_holds_back_no_later_row(ctx):
    """200,000 chdir()s in about half a second (a cwd event each), then a short process,
    three times: each process's row is queryable within 1.5 s of its exit (this test's
    waitpid marks the exit; the design's budget is 1 s, plus a poll of the database),
    and the collector, stopped at once after the last, leaves no frame unacknowledged.
    The collector used to make a frame at each turn of its loop, thousands of tiny ones
    during a burst, which then left a few per 200 ms tick: the rows after a burst came
    seconds late and frames still queued at shutdown never reached the database."""
    sock, db = ctx.path("s.sock"), ctx.path("burst.db")
    agg, col = start_daemons(ctx, sock, db)
    dirs = [ctx.path("a"), ctx.path("b")]
    for d in dirs:
        os.makedirs(d)
    for i in range(3):
        subprocess.run([ctx.helper("chdirloop"), "200000", *dirs], check=True, capture_output=True)
        marker = f"after-burst-{os.getpid()}-{i}"
        p = subprocess.Popen([TRUE, marker])
        p.wait()
        exited = time.monotonic()
        late = None
        while time.monotonic() - exited < 15:
            if ctx.query("SELECT 1 FROM processes WHERE pid = ? AND state = 'exited' AND "
                         "json_extract(argv, '$[1]') = ?", p.pid, marker, db=db):
                late = time.monotonic() - exited
                break
            time.sleep(0.02)
        ctx.check(late is not None and late <= 1.5,
                  f"burst {i}: the row of the process after it came {late} s after its exit")
    code, err = ctx.stop(col)
    ctx.check(code == 0 and "not acknowledged" not in err,
              f"the collector stopped with frames unacknowledged (exit {code}): {err[-500:]}")
    ctx.stop(agg)


@test
def tracer_run_of_a_burst_records_it_whole(ctx):
    """`tracer run -- measure -- chdirloop 200000 a b` (a cwd event per call, ~0.4 s of
    CPU): when tracer run returns, its run is over (status ok, exit 0) and the chdirloop
    row has exited with its CPU within 5 ms + 1% of what wait4 said (the tolerance of
    cpu_time_and_counters_match_wait4). With the collector that sent a burst as
    thousands of tiny frames, a few per tick, tracer run gave up waiting after 35 s and
    left the run and the process 'running', with no CPU."""
    dirs = [ctx.path("a"), ctx.path("b")]
    for d in dirs:
        os.makedirs(d)
    out = ctx.path("m.json")
    ctx.tracer_run([ctx.helper("measure"), out, "--", ctx.helper("chdirloop"), "200000", *dirs], expect=0)
    truth = load_json(out)
    run = ctx.latest_run()
    status, code = ctx.one("SELECT status, exit_code FROM runs WHERE id = ?", run)
    ctx.check((status, code) == ("ok", 0), f"the run is {status}, exit {code}")
    rows = ctx.query("SELECT state, cpu_user_ns + cpu_sys_ns FROM processes WHERE run_id = ? AND pid = ? "
                     "AND exe LIKE '%/chdirloop'", run, truth["pid"])
    ctx.check(len(rows) == 1 and rows[0][0] == "exited", f"the chdirloop row: {rows}")
    cpu_truth = truth["utime_ns"] + truth["stime_ns"]
    ctx.close(rows[0][1] if rows else None, cpu_truth, 5_000_000 + cpu_truth // 100, "chdirloop CPU (ns)")


@test
def database_disk_full_holds_frames_and_recovers(ctx):
    """The DB on a 1 MiB tmpfs: when it fills, the aggregator says so once, keeps the
    frames unacknowledged (the collector holds them) and retries; when space returns
    everything is committed: every process of every storm recorded, no loss counted,
    integrity_check ok."""
    mnt = ctx.path("small")
    os.mkdir(mnt)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0777", "tracer-it-full", mnt], check=True)
    ctx.cleanups.append(lambda: subprocess.run(["umount", "-l", mnt]))
    sock, db = ctx.path("s.sock"), os.path.join(mnt, "full.db")
    log = ctx.path("agg.log")
    agg = start_logged_aggregator(ctx, sock, db, log)
    col = ctx.spawn([ctx.bin("tracer-collector"), "--socket", sock, "--user", "nobody"])
    end = time.time() + 20  # attached and talking once its stream appears
    while time.time() < end and "new collector stream" not in open(log).read():
        time.sleep(0.05)
    since = time.time_ns()
    started, roots = 0, []
    for _ in range(40):
        roots.append(storm(ctx, 1000))
        started += 1000
        time.sleep(0.3)
        if "cannot write to the database" in open(log).read():
            break
    text = open(log).read()
    if "cannot write to the database" not in text:
        raise Failure(f"the 1 MiB database never filled after {started} processes:\n{text[-1500:]}")
    ctx.check(agg.poll() is None, "the aggregator lives on a full disk")
    roots.append(storm(ctx, 1000))  # more work while full: held by the collector
    started += 1000
    time.sleep(1.0)
    subprocess.run(["mount", "-o", "remount,size=256m", mnt], check=True)
    end = time.time() + 30
    while time.time() < end and "database writable again" not in open(log).read():
        time.sleep(0.2)
    ctx.check("database writable again" in open(log).read(), "recovery logged")
    time.sleep(2.0)
    ctx.stop(col)
    agg.send_signal(signal.SIGTERM)
    agg.wait(timeout=30)
    text = open(log).read()
    errors, recoveries = text.count("cannot write to the database"), text.count("database writable again")
    ctx.check(1 <= errors <= recoveries + 1,
              f"said once per episode, not per retry: {errors} errors, {recoveries} recoveries")
    # Every storm's children: exec and exit received, nothing lost anywhere.
    marks = ",".join("?" * len(roots))
    seen = ctx.one(f"SELECT count(DISTINCT pid) FROM processes WHERE pid IN ({marks}) AND start_ns >= ? "
                   f"AND exe LIKE '%/helpers/storm'", *roots, since, db=db)
    ctx.check(seen == len(roots), f"every storm recorded: {seen} of {len(roots)}")
    # Ours by ancestry: the storms' workers (another user's storm runs the same programs).
    workers = [w for r in roots for w in STORM_WORKERS.get(r, [])]
    wmarks = ",".join("?" * len(workers))
    got = ctx.one("SELECT count(DISTINCT pid || ':' || proc_start_boot_ns) FROM processes WHERE exe = ? "
                  f"AND state = 'exited' AND start_ns >= ? AND ppid IN ({wmarks})", TRUE, since, *workers, db=db)
    if got != started:  # say whose they are: the storms' workers', or other parents'
        parents = ctx.query("SELECT p.ppid, count(DISTINCT p.pid || ':' || p.proc_start_boot_ns), "
                            "(SELECT w.ppid FROM processes w WHERE w.pid = p.ppid ORDER BY w.id DESC LIMIT 1) "
                            "FROM processes p WHERE p.exe = ? AND p.state = 'exited' AND p.start_ns >= ? "
                            "GROUP BY p.ppid", TRUE, since, db=db)
        same_pid = ctx.one("SELECT count(*) FROM (SELECT pid FROM processes WHERE exe = ? AND start_ns >= ? "
                           "GROUP BY pid HAVING count(DISTINCT proc_start_boot_ns) > 1)", TRUE, since, db=db)
        ctx.check(False, f"{got} of {started} processes recorded across the full disk; storm roots {roots}; "
                  f"(parent, processes, its parent): {parents}; pids with two start times: {same_pid}")
    lost = ctx.one("SELECT coalesce(sum(count), 0) FROM event_loss", db=db)
    ctx.check(lost == 0, f"no event lost: {lost}")
    ok = ctx.one("PRAGMA integrity_check", db=db)
    ctx.check(ok == "ok", f"integrity_check: {ok}")


@test
def sighup_storm_under_load_loses_nothing(ctx):
    """SIGHUP to the aggregator (rereads the tool lists) and the collector (rereads its
    redaction rules; must not die) twenty times during an exec storm: both live, the
    reloads are logged, every process recorded, nothing lost."""
    sock, db = ctx.path("s.sock"), ctx.path("hup.db")
    agg, col = start_daemons(ctx, sock, db)
    # The storm outlasts the two seconds of signals on any machine (up to 6000 children).
    p, since = storm_in_background(ctx, 6000, seconds=4)
    for _ in range(20):
        agg.send_signal(signal.SIGHUP)
        col.send_signal(signal.SIGHUP)
        time.sleep(0.1)
    n = wait_storm(p)
    time.sleep(1.0)
    ctx.check(agg.poll() is None and col.poll() is None, "both daemons survive SIGHUP")
    _, col_err = ctx.stop(col)
    _, agg_err = ctx.stop(agg)
    ctx.check("tool lists reloaded" in agg_err, "the aggregator logged its reload")
    ctx.check("SIGHUP:" in col_err and "redaction rules reread" in col_err,
              "the collector logged the SIGHUP and reread its redaction rules")
    check_all_recorded(ctx, db, since, p.pid, n)


@test
def a_process_resumed_after_a_restart_keeps_its_times(ctx):
    """A process running across an aggregator restart is resumed from the database. Its
    times stay on the wall clock: the shell's image ends when it execs sleep after the
    restart, and sleep's image ends when wait() returns, each within 300 ms of the test's
    own clock, and sleep's image lasts the 1.5 s it slept (100 ms)."""
    sock, db = ctx.path("s.sock"), ctx.path("resume.db")
    agg, col = start_daemons(ctx, sock, db)
    t_start = time.time_ns()
    p = subprocess.Popen(["/bin/sh", "-c", "sleep 1.5; exec sleep 1.5"])
    time.sleep(0.7)
    agg.send_signal(signal.SIGTERM)
    agg.wait(timeout=30)
    agg = ctx.spawn([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db, "--user", "nobody"])
    wait_for_socket(sock)
    p.wait(timeout=30)
    t_end = time.time_ns()
    time.sleep(1.5)
    ctx.stop(col)
    ctx.stop(agg)
    rows = ctx.query("SELECT exe, start_ns, end_ns FROM processes WHERE pid = ? AND start_ns >= ? - 10e9 "
                     "ORDER BY image", p.pid, t_start, db=db)
    images = {exe.rsplit("/", 1)[-1]: (start, end) for exe, start, end in rows}
    ctx.check({"dash", "sleep"} <= set(images), f"the shell's and sleep's images: {rows}")
    if not {"dash", "sleep"} <= set(images):
        return
    (sh_start, sh_end), (sl_start, sl_end) = images["dash"], images["sleep"]
    ms = 10**6
    ctx.check(abs(sh_start - t_start) < 300 * ms, f"shell started {(sh_start - t_start) / ms:.0f} ms from Popen")
    ctx.check(sh_end == sl_start, f"the exec ends one image and starts the next: {sh_end} {sl_start}")
    ctx.check(abs(sl_end - t_end) < 300 * ms, f"sleep ended {(sl_end - t_end) / ms:.0f} ms from wait()")
    ctx.check(abs(sl_end - sl_start - 1500 * ms) < 100 * ms, f"sleep's image lasted {(sl_end - sl_start) / ms:.0f} ms")


@test
def aggregator_restarts_under_load_lose_nothing(ctx):
    """The aggregator stopped (SIGTERM) and started again ten times during an exec
    storm: every stop ends within 15 s with exit code 0 (nng 1.5's close can deadlock,
    nng#1543; the aggregator then gives up on it after 5 s), the collector holds its
    frames meanwhile, and afterwards every process is recorded and nothing is lost."""
    sock, db = ctx.path("s.sock"), ctx.path("restart.db")
    agg, col = start_daemons(ctx, sock, db)
    # Up to 6000 children, and for as long as the ten restarts take here.
    p, since = storm_in_background(ctx, 6000, seconds=10)
    loop_started = time.time()
    stuck_closes = 0
    agg_logs = []
    for i in range(10):
        time.sleep(0.3)
        agg.send_signal(signal.SIGTERM)
        started = time.time()
        try:
            _, err = agg.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            raise Failure(f"restart {i}: the aggregator did not stop within 15 s")
        agg_logs.append(err)
        ctx.check(agg.returncode == 0, f"restart {i}: exit code {agg.returncode} after "
                  f"{time.time() - started:.1f} s: {err[-300:]}")
        stuck_closes += "did not close within" in err
        agg = ctx.spawn([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db, "--user", "nobody"])
        wait_for_socket(sock)
    loop_seconds = time.time() - loop_started
    n = wait_storm(p)
    time.sleep(1.0)
    col_rc, col_err = ctx.stop(col)
    ctx.check(col_rc == 0, f"the collector lived through it and stopped cleanly: exit {col_rc}")
    _, err = ctx.stop(agg)
    agg_logs.append(err)
    print(f"       storm of {n} over the {loop_seconds:.1f} s of restarts; "
          f"stops that gave up on nng's close: {stuck_closes} of 10; collector redial log lines "
          f"{col_err.count('dialing afresh')}, silent connections dropped {col_err.count('no word from')}",
          flush=True)
    ctx.check("not acknowledged at exit" not in col_err, "the collector left nothing unacknowledged")
    before = len(ctx.failures)
    check_all_recorded(ctx, db, since, p.pid, n)
    if len(ctx.failures) > before:
        gaps = ctx.query("SELECT stream_id, last_seq, seq_gaps, duplicate_frames, collector_drops "
                         "FROM collector_stats", db=db)
        notes = [line for log in agg_logs for line in log.splitlines()
                 if "frame" in line or "stream" in line or "database" in line]
        ctx.check(False, f"streams {gaps}; aggregator said: {notes[-15:]}; collector said: "
                  f"{col_err.strip().splitlines()[-15:]}")


def _read_in_a_loop_as_root(path, stop):
    """What tracer status or a user's sqlite3 does: open read-only, read, close."""
    while not stop.is_set():
        if os.path.exists(path):
            try:
                con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
                try:
                    con.execute("SELECT count(*) FROM sqlite_master").fetchall()
                finally:
                    con.close()
            except sqlite3.Error:
                pass  # not a database yet, or locked: the writer's side is what is tested


def _start_beside_a_root_reader(db, start):
    """Runs start() (which returns (returncode, stderr)) while a root thread reads db."""
    stop = threading.Event()
    reader = threading.Thread(target=_read_in_a_loop_as_root, args=(db, stop))
    reader.start()
    try:
        return start()
    finally:
        stop.set()
        reader.join()


@test
@plain_build_only("hundreds of starts; the ASan pass runs the same open path in every other test")
def first_start_beside_a_root_reader_never_fails(ctx):
    """A root reader that opens a WAL database before its unprivileged writer does
    creates the -wal and -shm files as root and hands them to the owner only after
    (SQLite's fchown). A writer opening them in that instant cannot write ("attempt to
    write a readonly database", "unable to open database file") and used to exit: 2 of
    150 aggregator starts and 1 to 3 of 100..400 shipper starts failed so here. Each
    daemon now retries that failure on a new connection. The aggregator's database
    (150 times) and the shipper's state (300 times) are created afresh while a root
    thread reads them in a loop: every start must succeed."""
    agg_failed, agg_retried = [], 0
    for i in range(150):
        db, sock = ctx.path(f"race{i}.db"), ctx.path(f"race{i}.sock")

        def start_aggregator():
            a = subprocess.Popen([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db, "--user", "nobody",
                                  "--collector-user", "nobody", "--log-level", "warn"],
                                 stderr=subprocess.PIPE, text=True)
            deadline = time.time() + 20
            while not os.path.exists(sock) and a.poll() is None and time.time() < deadline:
                time.sleep(0.01)
            a.terminate()
            _, err = a.communicate(timeout=30)
            return a.returncode, err

        rc, err = _start_beside_a_root_reader(db, start_aggregator)
        if rc != 0:  # the head says what failed (nng's panic line), the tail where
            agg_failed.append(f"start {i}: exit {rc}: {err.strip()[:600]} ... {err.strip()[-300:]}")
        agg_retried += "retrying" in err
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.unlink(db + suffix)

    # The shipper needs an aggregator's database to read: one, made once, read by all.
    source = ctx.path("source.db")
    made = start_logged_aggregator(ctx, ctx.path("source.sock"), source, ctx.path("source.log"))
    made.terminate()
    made.wait(timeout=30)
    ship_failed, ship_retried = [], 0
    for i in range(300):
        state = ctx.path(f"state{i}.db")

        def start_shipper():
            p = subprocess.run([ctx.bin("tracer-shipper"), "--db", source, "--state", state, "--sink",
                                "http://127.0.0.1:9/unused", "--user", "nobody", "--once", "--once-timeout-s", "5",
                                "--log-level", "warn"], capture_output=True, text=True, timeout=60)
            return p.returncode, p.stderr

        rc, err = _start_beside_a_root_reader(state, start_shipper)
        if rc != 0:
            ship_failed.append(f"start {i}: exit {rc}: {err.strip()[-300:]}")
        ship_retried += "retrying" in err
    print(f"  aggregator: {150 - len(agg_failed)} of 150 started, {agg_retried} after a retry; "
          f"shipper: {300 - len(ship_failed)} of 300, {ship_retried} after a retry")
    ctx.check(not agg_failed, f"aggregator starts failed: {agg_failed[:3]}")
    ctx.check(not ship_failed, f"shipper starts failed: {ship_failed[:3]}")


@test
@plain_build_only("runs the CLI as another user; the CLI runs under ASan elsewhere")
def status_names_what_a_db_path_holds(ctx):
    """tracer status is healthy only for a tracer database with live daemons, and says
    why otherwise, exiting non-zero. Ground truth: the files the test made itself, the
    schema version SQLite itself reads, and the bytes of a foreign database, which
    tracer must leave as they were. A database in a directory the reader cannot write
    (so its WAL index cannot be made) is read, not offered an upgrade."""
    import hashlib
    import shutil
    import tempfile
    top = tempfile.mkdtemp(prefix="tracer-dbkind-")
    os.chmod(top, 0o777)  # the aggregator runs as nobody
    try:
        sock, db = os.path.join(top, "s.sock"), os.path.join(top, "t.db")
        prom = os.path.join(top, "tracer.prom")
        agg, col = start_daemons(ctx, sock, db, extra_agg=("--metrics-file", prom))
        script = os.path.join(top, "job.sh")
        with open(script, "w") as f:
            f.write("sleep 0.2\nls / > /dev/null\n")
        subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", "dbkind", "--",
                        "bash", script], check=True, capture_output=True, timeout=120)
        live = subprocess.run([ctx.bin("tracer"), "status", "--db", db, "--socket", sock],
                              capture_output=True, text=True, timeout=30)
        ctx.check(live.returncode == 0 and live.stdout.startswith("tracer status: healthy"),
                  f"live daemons: rc {live.returncode}\n{live.stdout[:300]}")
        ctx.stop(col)
        ctx.stop(agg)
        down = subprocess.run([ctx.bin("tracer"), "status", "--db", db, "--socket", sock],
                              capture_output=True, text=True, timeout=30)
        ctx.check(down.returncode == 3 and "not listening" in down.stdout.splitlines()[0],
                  f"stopped daemons: rc {down.returncode}\n{down.stdout[:300]}")
        # The metrics file (written at the aggregator's exit) says what status --json says.
        st = json.loads(subprocess.run([ctx.bin("tracer"), "status", "--db", db, "--socket", sock, "--json"],
                                       capture_output=True, text=True, timeout=30).stdout or "{}")
        metrics = {}
        for line in open(prom) if os.path.exists(prom) else ():
            if not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                metrics[name] = float(value)
        stream = (st.get("collectors") or [{}])[0]
        ctx.check(metrics.get("tracer_aggregator_frames_total") == st.get("aggregator", {}).get("frames_received")
                  and metrics.get("tracer_aggregator_events_total") == st.get("aggregator", {}).get("events_ingested", 0) > 0
                  and sum(v for k, v in metrics.items() if k.startswith("tracer_collector_events_total{"))
                  == stream.get("events_received"),
                  f"metrics file vs tracer status: {metrics} / {st.get('aggregator')}")
        version = sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0]
        runs = sqlite3.connect(db).execute("SELECT count(*) FROM runs").fetchone()[0]
        os.chown(db, 0, 0)
        os.chmod(db, 0o644)
        os.chmod(top, 0o755)  # no longer writable by the reader below
        for f in os.listdir(top):
            if f not in ("t.db", "tracer.prom"):
                os.unlink(os.path.join(top, f))
        as_daemon = ["setpriv", "--reuid=daemon", "--regid=daemon", "--clear-groups"]
        ro = subprocess.run(as_daemon + [ctx.bin("tracer"), "status", "--db", db, "--socket", sock, "--json"],
                            capture_output=True, text=True, timeout=30)
        doc = json.loads(ro.stdout or "{}")
        ctx.check(doc.get("schema_version") == version and ro.returncode == 3,
                  f"read-only reader sees schema v{version}: rc {ro.returncode} {ro.stdout[:200]} {ro.stderr}")
        listed = subprocess.run(as_daemon + [ctx.bin("tracer"), "runs", "--db", db, "--json"],
                                capture_output=True, text=True, timeout=30)
        ctx.check(runs >= 1 and listed.returncode == 0 and len(json.loads(listed.stdout or "{}").get("runs", [])) == runs,
                  f"tracer runs reads its {runs} runs: rc {listed.returncode} {listed.stdout[:200]} {listed.stderr}")

        text, empty, foreign = (os.path.join(top, n) for n in ("notes.txt", "empty.db", "other.db"))
        with open(text, "w") as f:
            f.write("not a database\n")
        open(empty, "w").close()
        other = sqlite3.connect(foreign)
        other.execute("CREATE TABLE samples(x)")
        other.commit()
        other.close()
        before = hashlib.sha256(open(foreign, "rb").read()).hexdigest()
        for path, words in ((text, "not a SQLite database"), (empty, "empty file"),
                            (foreign, "another program"), (top, "is a directory"),
                            (os.path.join(top, "absent.db"), "no database")):
            for verb in ("status", "runs", "show"):
                r = subprocess.run([ctx.bin("tracer"), verb, "--db", path], capture_output=True, text=True,
                                   timeout=30)
                ctx.check(r.returncode != 0 and words in r.stderr,
                          f"tracer {verb} --db {path}: rc {r.returncode}, {r.stderr.strip()!r}")
        # Bad numbers, a pipeline with no runs, the global --db form (the CLI's own words).
        for args, words in ((["runs", "--limit", "abc"], "--limit abc: expected a number"),
                            (["runs", "--limit", "-1"], "--limit -1: expected a number"),
                            (["timeline", "--width", "abc"], "--width abc: expected a number"),
                            (["explain", "--top", "2x"], "--top 2x: expected a number"),
                            (["runs", "no-such-pipeline"], "no runs of pipeline 'no-such-pipeline'")):
            r = subprocess.run([ctx.bin("tracer"), *args, "--db", db], capture_output=True, text=True, timeout=30)
            ctx.check(r.returncode != 0 and words in r.stderr, f"tracer {args}: rc {r.returncode} {r.stderr!r}")
        typo = subprocess.run([ctx.bin("tracer"), "run", "--db", os.path.join(top, "typo.db"), "--",
                               "no-such-command-xyz"], capture_output=True, text=True, timeout=60)
        ctx.check(typo.returncode == 127 and "command not found" in typo.stderr
                  and not os.path.exists(os.path.join(top, "typo.db")),
                  f"a mistyped command records nothing: rc {typo.returncode} {typo.stderr!r}")
        glob = subprocess.run([ctx.bin("tracer"), "--db", db, "runs", "--json"], capture_output=True, text=True,
                              timeout=30)
        ctx.check(glob.returncode == 0 and len(json.loads(glob.stdout or "{}").get("runs", [])) == runs,
                  f"tracer --db PATH runs: rc {glob.returncode} {glob.stderr!r}")
        ctx.check(hashlib.sha256(open(foreign, "rb").read()).hexdigest() == before
                  and sorted(f for f in os.listdir(top) if not f.startswith("t.db")) == [
                      "empty.db", "notes.txt", "other.db", "tracer.prom"],
                  f"the foreign database is untouched and nothing was created: {os.listdir(top)}")
    finally:
        shutil.rmtree(top, ignore_errors=True)


@test
def a_collector_restart_counts_its_blind_window(ctx):
    """The collector is killed (SIGKILL) and a new one starts 2 s later. Eight sleepers started
    in between, which no probe saw start: the new stream records the blind window (about the
    2 s, from the old stream's last watermark to the new one's first frame) and the eight
    processes its snapshot found began in it (up to 6 more: whatever else this host started
    meanwhile); tracer status is degraded and names it. A first collector of a boot, or one
    started on a fresh database, has no window."""
    sock, db = ctx.path("s.sock"), ctx.path("blind.db")
    agg, col = start_daemons(ctx, sock, db)
    first = ctx.query("SELECT blind_ns, blind_processes FROM collector_stats", db=db)
    ctx.check(first == [(None, None)], f"the first collector of this database has no window: {first}")
    time.sleep(0.5)
    col.kill()
    col.wait(timeout=10)
    killed_at = time.monotonic()
    sleepers = [subprocess.Popen(["sleep", "30"]) for _ in range(8)]
    ctx.cleanups.append(lambda: [s.kill() for s in sleepers])
    time.sleep(max(0.0, 2.0 - (time.monotonic() - killed_at)))
    col = ctx.spawn([ctx.bin("tracer-collector"), "--socket", sock, "--user", "nobody"])
    end = time.time() + 40
    row = None
    while time.time() < end:
        rows = ctx.query("SELECT blind_ns, blind_processes FROM collector_stats WHERE blind_ns IS NOT NULL "
                         "AND snapshot_processes > 0", db=db)
        if rows and rows[0][1] is not None and rows[0][1] > 0:
            row = rows[0]
            break
        time.sleep(0.1)
    ctx.check(row is not None, "the new stream recorded a blind window with processes in it")
    if row:
        blind_ns, blind_processes = row
        print(f"  blind window {blind_ns / 1e9:.2f} s, {blind_processes} processes began in it")
        # From the last watermark (at most a flush, 200 ms, before the kill) to the new stream's
        # first frame (after the new collector loaded its programs: seconds under ASan).
        ctx.check(2.0 <= blind_ns / 1e9 < 2.0 + 15, f"window {blind_ns / 1e9:.2f} s for a 2 s gap")
        ctx.check(8 <= blind_processes <= 8 + 6, f"{blind_processes} processes for the 8 sleepers")
    r = subprocess.run([ctx.bin("tracer"), "status", "--db", db, "--socket", sock],
                       capture_output=True, text=True, timeout=60)
    ctx.check(r.returncode == 3 and "blind window" in r.stdout.splitlines()[0],
              f"status degraded for the blind window: {r.returncode} {r.stdout[:300]}")
    ctx.check("began unwatched" in r.stdout, f"status shows the window: {r.stdout[:800]}")
    ctx.check(any("went unwatched" in line and " warn" in line for line in agg._lines),
              f"an aggregator that records the whole host warns of the window: {agg._lines[-10:]}")
    for s in sleepers:
        s.kill()
    ctx.stop(col)
    ctx.stop(agg)


@test
def consecutive_tracer_runs_record_the_gap_without_warning(ctx):
    """tracer run's own daemons start and stop with each command: the second run's collector
    follows the first's after a gap nobody watched. That gap is recorded (collector_stats), but
    it hid nothing the run records (its aggregator keeps runs alone and had none open), so the
    user is not warned of it in the middle of their command's output, nor does `tracer status`
    on the database call it degraded, even with processes that began in the gap still running
    when the second collector starts (none of them is anything the database records)."""
    p = ctx.tracer_run(["/bin/sh", "-c", "sleep 0.3"], "--run", "first", expect=0)
    # Processes of no run that begin while nobody watches, and outlive the gap.
    bystander = subprocess.Popen(["sh", "-c", "sleep 6 & sleep 6 & wait"])
    ctx.procs.append(bystander)
    time.sleep(0.5)
    p = ctx.tracer_run(["/bin/sh", "-c", "sleep 0.3"], "--run", "second", expect=0)
    ctx.check("unwatched" not in p.stderr, f"no warning about the gap between runs:\n{p.stderr[-1500:]}")
    rows = ctx.query("SELECT blind_ns, blind_processes FROM collector_stats ORDER BY first_seen_ns")
    ctx.check(len(rows) == 2 and rows[0][0] is None and rows[1][0] and rows[1][0] >= 500_000_000,
              f"the second stream records the gap of at least 0.5 s: {rows}")
    ctx.check(rows[1][1] == 0, f"no process the database records began in the gap: {rows}")
    st = subprocess.run([ctx.bin("tracer"), "status", "--db", ctx.db], capture_output=True, text=True,
                        timeout=60)
    ctx.check(st.returncode == 0 and st.stdout.startswith("tracer status: healthy"),
              f"tracer status calls the database healthy (exit {st.returncode}):\n{st.stdout[:600]}")
    ctx.check("not checked" in st.stdout, f"the system daemons' socket is not this database's:\n{st.stdout[:600]}")


@test
def status_is_degraded_for_a_database_the_aggregator_refuses(ctx):
    """Two databases the aggregator will not write: one whose outbox table someone dropped
    (its schema version still says it is there), and one whose file is read-only. The
    ground truth is the aggregator itself: started on each, it exits non-zero and says
    why. `tracer status` on each is degraded (exit 3) and names the same fault; on the
    intact database it names neither."""
    made = ctx.path("made.db")
    ctx.tracer_run(["true"], "--run", "refused", expect=0)
    subprocess.run(["cp", ctx.db, made], check=True)

    def status(db):
        p = subprocess.run([ctx.bin("tracer"), "status", "--db", db, "--json"],
                           capture_output=True, text=True, timeout=60)
        return p.returncode, json.loads(p.stdout or "{}")

    def aggregator_on(db):
        os.chown(db, 65534, 65534)
        p = subprocess.run([ctx.bin("tracer-aggregator"), "--db", db, "--socket", ctx.path("r.sock"),
                            "--user", "nobody", "--collector-user", "nobody"],
                           capture_output=True, text=True, timeout=60)
        return p.returncode, p.stderr

    rc, doc = status(made)
    ctx.check(doc.get("db_check") == "ok" and not doc.get("db_read_only"),
              f"the intact database: check {doc.get('db_check')!r}, read-only {doc.get('db_read_only')!r}")

    dropped = ctx.path("dropped.db")
    subprocess.run(["cp", made, dropped], check=True)
    con = sqlite3.connect(dropped)
    con.execute("DROP TABLE outbox")
    con.commit()
    con.close()
    arc, err = aggregator_on(dropped)
    ctx.check(arc != 0 and "outbox" in err, f"the aggregator refuses the dropped outbox: rc {arc}, {err[-300:]!r}")
    rc, doc = status(dropped)
    ctx.check(rc == 3 and not doc.get("healthy") and "table outbox" in (doc.get("problem") or ""),
              f"status on the dropped outbox: rc {rc}, problem {doc.get('problem')!r}")

    readonly = ctx.path("readonly.db")
    subprocess.run(["cp", made, readonly], check=True)
    arc, err = None, ""
    os.chmod(readonly, 0o444)
    arc, err = aggregator_on(readonly)
    ctx.check(arc != 0 and "cannot be written" in err,
              f"the aggregator refuses the read-only database: rc {arc}, {err[-300:]!r}")
    rc, doc = status(readonly)
    ctx.check(rc == 3 and not doc.get("healthy") and "read-only" in (doc.get("problem") or ""),
              f"status on the read-only database: rc {rc}, problem {doc.get('problem')!r}")


@test
@plain_build_only("runs the CLI as another user; the CLI runs under ASan elsewhere")
def status_gives_every_reader_the_same_answer(ctx):
    """The daemons' socket is in a directory only they may open (as installed): root can
    probe it, another user cannot. Both readers of the database get the same answer:
    listening while a collector writes (the other user's from the database), not
    listening once the daemons stopped."""
    sockdir = ctx.path("private")
    os.mkdir(sockdir)
    os.chown(sockdir, 65534, 65534)
    os.chmod(sockdir, 0o700)
    sock, db = os.path.join(sockdir, "s.sock"), ctx.path("shared.db")
    agg, col = start_daemons(ctx, sock, db)
    for f in os.listdir(ctx.tmp):
        if f.startswith("shared.db"):
            os.chmod(ctx.path(f), 0o644)

    def status(as_other):
        cmd = [ctx.bin("tracer"), "status", "--db", db, "--socket", sock, "--json"]
        if as_other:
            cmd = ["setpriv", "--reuid=daemon", "--regid=daemon", "--clear-groups"] + cmd
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        return json.loads(p.stdout or "{}")

    root, other = status(False), status(True)
    ctx.check(root.get("listening") is True and other.get("listening") is True
              and other.get("listening_known_by") == "database" and root.get("listening_known_by") == "socket",
              f"running: root {root.get('listening')}/{root.get('listening_known_by')}, "
              f"other {other.get('listening')}/{other.get('listening_known_by')} ({other.get('problem')})")
    ctx.check(root.get("healthy") == other.get("healthy"),
              f"the same verdict: root {root.get('problem')!r}, other {other.get('problem')!r}")
    ctx.stop(col)
    ctx.stop(agg)
    root, other = status(False), status(True)
    ctx.check(root.get("listening") is False and other.get("listening") is False
              and not root.get("healthy") and not other.get("healthy"),
              f"stopped: root {root.get('listening')} {root.get('problem')!r}, "
              f"other {other.get('listening')} {other.get('problem')!r}")


def kill_collector_mid_storm(ctx, name, extra_col, freeze=False):
    """An exec storm of n processes; the collector SIGKILLed a third of the way in and a
    new one started a second later with the same options. freeze: the aggregator is
    stopped (SIGSTOP) for the half second before the kill and continued after it, so the
    collector dies holding frames it could not get acknowledged. Returns (n, tally,
    losses, the new collector, how many other processes the host started meanwhile)."""
    sock, db = ctx.path(f"{name}.sock"), ctx.path(f"{name}.db")
    ctx.cleanups.append(lambda: subprocess.run([ctx.bin("tracer-collector"), "--socket", sock, "--unpin"],
                                               capture_output=True, timeout=30))
    agg, col = start_daemons(ctx, sock, db, extra_col=extra_col)
    n = 3000
    forks = forks_since_boot()
    p, since = storm_in_background(ctx, n)
    end = time.time() + 30
    while time.time() < end and ctx.one("SELECT count(*) FROM processes WHERE exe = ? AND start_ns >= ?",
                                        TRUE, since, db=db) < n // 3:
        time.sleep(0.02)
    if freeze:
        os.kill(agg.pid, signal.SIGSTOP)
        time.sleep(0.5)
    col.kill()
    col.wait(timeout=10)
    if freeze:
        os.kill(agg.pid, signal.SIGCONT)
    time.sleep(1.0)
    col = ctx.spawn([ctx.bin("tracer-collector"), "--socket", sock, "--user", "nobody", *extra_col])
    ran = wait_storm(p)
    ctx.check(ran == n, f"the storm ran {ran} of {n}")
    # Other processes of the host (another suite's storm) lose events with ours: the
    # counters are the host's. The kernel's fork count bounds them (threads included).
    others = max(0, forks_since_boot() - forks - (n + 2 + 1))
    time.sleep(1.5)
    ctx.stop(col)
    ctx.stop(agg)
    return n, storm_tally(ctx, db, since, p.pid, daemons=(col.pid, agg.pid)), losses(ctx, db), col, others


@test
@plain_build_only("a 3,000-process storm; the ASan pass runs the same reuse and handover in the next two")
def a_collector_killed_mid_storm_leaves_its_programs_pinned(ctx):
    """--keep-pinned: the collector SIGKILLed mid-storm leaves its programs attached and its
    ring buffer pinned; the next one reuses them (it says so, and attaches nothing), drains
    what waited, and every exec and exit of the storm is received or counted lost (the
    kernel's reserve failures while nobody read, the events the dead collector held). With
    a 16 MiB ring and a 1 s gap nearly all are received: at most 1% lost. Its own count is
    the truth (the storm helper counts its forks). Without pins (main's code has no
    --keep-pinned and fails here) the same kill recorded 1,293 of 3,000 and counted none lost
    (docs/operations.md)."""
    n, tally, lost, col, others = kill_collector_mid_storm(ctx, "pin", ("--keep-pinned", "yes", "--ring-mb", "64"))
    print(f"  {tally['child_exec']} of {n} execs and {tally['child_exit']} exits received "
          f"({tally['background']} background processes seen, {others} started); lost "
          f"{ {k: v for k, v in lost.items() if v} }")
    for line in col._lines:
        if "resuming" in line or "has the stream" in line or "reusing" in line:
            print("  " + line.split(": ", 1)[1].strip())
    ctx.check(any("reusing the pin set" in line for line in col._lines),
              f"the new collector reused the pin set: {col._lines[-15:]}")
    exec_lost = sum(v for (hop, kind), v in lost.items() if kind == "exec" and hop in ("kernel", "collector"))
    exit_lost = sum(v for (hop, kind), v in lost.items() if kind == "exit" and hop in ("kernel", "collector"))
    check_accounted(ctx, n, tally, exec_lost, "exec", unseen=others)
    check_accounted(ctx, n, tally, exit_lost, "exit", unseen=others)
    ctx.check(tally["child_exec"] >= n * 0.99, f"nearly all received: {tally['child_exec']} of {n}")


def pin_sets(sock):
    """The pin sets of the collector of this socket (setup/pins.c names them by its hash)."""
    h = 0xcbf29ce484222325
    for b in sock.encode():
        h = ((h ^ b) * 0x100000001b3) & (2**64 - 1)
    root = "/sys/fs/bpf/tracer"
    return sorted(d for d in (os.listdir(root) if os.path.isdir(root) else ()) if d.startswith(f"{h:016x}-"))


@test
def a_pin_set_of_other_settings_is_replaced(ctx):
    """A collector with --keep-pinned is SIGKILLed; the next one of the same socket has another
    ring size (so other .rodata, another set): it removes the old set (its programs detach with
    its links) and says so, makes its own, and records what runs; its stream is a new one. A
    clean stop leaves the set (--keep-pinned), --unpin removes it."""
    sock, db = ctx.path("mis.sock"), ctx.path("mis.db")
    ctx.cleanups.append(lambda: subprocess.run([ctx.bin("tracer-collector"), "--socket", sock, "--unpin"],
                                               capture_output=True, timeout=30))
    agg, col = start_daemons(ctx, sock, db, extra_col=("--keep-pinned", "yes"))
    first = pin_sets(sock)
    ctx.check(len(first) == 1, f"one pin set made: {first}")
    col.kill()
    col.wait(timeout=10)
    ctx.check(pin_sets(sock) == first, f"the set outlives a SIGKILL: {pin_sets(sock)}")
    col = ctx.spawn([ctx.bin("tracer-collector"), "--socket", sock, "--user", "nobody", "--keep-pinned", "yes",
                     "--ring-mb", "32"])
    end = time.time() + 40
    while time.time() < end and ctx.one("SELECT count(DISTINCT stream_id) FROM collector_stats WHERE "
                                        "snapshot_processes > 0", db=db) < 2:
        time.sleep(0.05)
    second = pin_sets(sock)
    ctx.check(len(second) == 1 and second != first, f"the old set replaced: {first} -> {second}")
    ctx.check(any(f"removed the pin set /sys/fs/bpf/tracer/" in line for line in col._lines)
              if first else False, f"the removal is logged: {col._lines[-12:]}")
    ctx.check(any("made the pin set" in line for line in col._lines), f"a new set made: {col._lines[-12:]}")
    marker = subprocess.run([TRUE, "pin-mismatch-marker"])
    time.sleep(1.0)
    ctx.stop(col)
    ctx.check(ctx.one("SELECT count(*) FROM processes WHERE exe = ? AND argv LIKE '%pin-mismatch-marker%'",
                      TRUE, db=db) == 1,
              f"the new collector records a process once (exit {marker.returncode})")
    ctx.check(pin_sets(sock) == second, f"a clean stop with --keep-pinned leaves the set: {pin_sets(sock)}")
    r = subprocess.run([ctx.bin("tracer-collector"), "--socket", sock, "--unpin"], capture_output=True, text=True,
                       timeout=30)
    ctx.check(r.returncode == 0 and pin_sets(sock) == [] and "removed the pin set" in r.stderr,
              f"--unpin removes it: rc {r.returncode} {r.stderr[-300:]} {pin_sets(sock)}")
    ctx.stop(agg)



@test
def a_collector_killed_holding_unacknowledged_frames_counts_them(ctx):
    """As above, with the aggregator stopped for the half second before the kill: the dead
    collector held frames nobody acknowledged (some already in the socket, which the
    aggregator still commits, some not). The next collector resumes the stream, learns from
    the aggregator the last frame it committed, and counts as lost (hop collector) exactly the
    events the dead one held beyond it: received + counted lost == what the storm ran, for
    execs and exits."""
    n, tally, lost, col, others = kill_collector_mid_storm(ctx, "held", ("--keep-pinned", "yes", "--ring-mb",
                                                                         "64"), freeze=True)
    print(f"  {tally['child_exec']} of {n} execs and {tally['child_exit']} exits received "
          f"({tally['background']} background processes seen, {others} started); lost "
          f"{ {k: v for k, v in lost.items() if v} }")
    for line in col._lines:
        if "has the stream" in line:
            print("  " + line.split(": ", 1)[1].strip())
    ctx.check(any("has the stream up to frame" in line for line in col._lines),
              f"the resumed stream heard what the aggregator committed: {col._lines[-12:]}")
    exec_lost = sum(v for (hop, kind), v in lost.items() if kind == "exec" and hop in ("kernel", "collector"))
    exit_lost = sum(v for (hop, kind), v in lost.items() if kind == "exit" and hop in ("kernel", "collector"))
    check_accounted(ctx, n, tally, exec_lost, "exec", unseen=others)
    check_accounted(ctx, n, tally, exit_lost, "exit", unseen=others)
    st = subprocess.run([ctx.bin("tracer"), "status", "--db", ctx.path("held.db"), "--json"],
                        capture_output=True, text=True, timeout=60)
    doc = json.loads(st.stdout or "{}")
    shown = {(x["hop"], x["event_type"]): x["count"] for x in doc.get("losses", [])}
    ctx.check(st.returncode == 3 and shown.get(("collector", "exec")) == lost.get(("collector", "exec")),
              f"tracer status is degraded with the number lost: exit {st.returncode}, {shown}")
