#!/usr/bin/python3
"""Integration tests: the real BPF programs, daemons and CLI, run as root.

Every test records a real workload and compares what tracer stored in SQLite
with an independent account of the same processes: the workload's own
/proc/self/status or /proc/self/io, or wait4()'s rusage taken by a parent
(test/helpers/measure.c). Tolerances are stated next to each comparison.

Usage: run.py --build build [--asan-build build/asan] [-k NAME]
"""
import argparse
import json
import os
import pwd
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback

TESTS = []
SANITIZER_MARKERS = ("AddressSanitizer", "LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer")


def test(fn):
    TESTS.append(fn)
    return fn


class Failure(Exception):
    pass


HELPERS = None  # ground-truth programs, always from the plain (unsanitised) build


class Ctx:
    def __init__(self, build, tmp):
        self.build = os.path.abspath(build)
        self.tmp = tmp
        self.db = os.path.join(tmp, "t.db")
        self.failures = []
        self.procs = []

    def bin(self, name):
        return os.path.join(self.build, name)

    def helper(self, name):
        return os.path.join(HELPERS, name)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def check(self, cond, what):
        if not cond:
            self.failures.append(what)

    def close(self, a, b, tol, what):
        """|a - b| <= tol"""
        self.check(a is not None and b is not None and abs(a - b) <= tol,
                   f"{what}: tracer {a} vs truth {b} (tolerance {tol})")

    def tracer_run(self, cmd, *opts, expect=None, env=None):
        args = [self.bin("tracer"), "run", "--db", self.db, *opts, "--", *cmd]
        p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
        scan_sanitizers(self, p.stderr, "tracer run")
        if expect is not None and p.returncode != expect:
            raise Failure(f"tracer run exited {p.returncode}, expected {expect}\n{p.stderr}")
        return p

    def query(self, sql, *params, db=None):
        con = sqlite3.connect(f"file:{db or self.db}?mode=ro", uri=True)
        try:
            return con.execute(sql, params).fetchall()
        finally:
            con.close()

    def one(self, sql, *params, db=None):
        rows = self.query(sql, *params, db=db)
        if len(rows) != 1:
            raise Failure(f"expected one row, got {len(rows)}: {sql} {params}")
        return rows[0] if len(rows[0]) > 1 else rows[0][0]

    def latest_run(self, db=None):
        return self.one("SELECT max(id) FROM runs", db=db)

    def spawn(self, args, **kw):
        p = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, **kw)
        self.procs.append(p)
        return p

    def stop(self, p, timeout=15):
        p.send_signal(signal.SIGTERM)
        try:
            _, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
            self.failures.append(f"{p.args[0]} did not stop on SIGTERM")
        scan_sanitizers(self, err, os.path.basename(p.args[0]))
        return p.returncode, err


def scan_sanitizers(ctx, text, who):
    for marker in SANITIZER_MARKERS:
        if text and marker in text:
            ctx.failures.append(f"{who}: sanitizer report:\n{text[-3000:]}")
            return


def load_json(path):
    with open(path) as f:
        return json.load(f)


def wait_for_socket(path, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        if os.path.exists(path):
            return
        time.sleep(0.02)
    raise Failure(f"socket {path} never appeared")


def start_daemons(ctx, sock, db, extra_agg=(), extra_col=()):
    agg = ctx.spawn([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db,
                     "--user", "nobody", *extra_agg])
    wait_for_socket(sock)
    col = ctx.spawn([ctx.bin("tracer-collector"), "--socket", sock, "--user", "nobody", *extra_col])
    # Ready once its snapshot reached the database.
    end = time.time() + 20
    while time.time() < end:
        try:
            if ctx.query("SELECT count(*) FROM collector_stats WHERE snapshot_processes > 0", db=db)[0][0]:
                return agg, col
        except sqlite3.Error:
            pass
        time.sleep(0.05)
    raise Failure("collector never delivered its snapshot")


# --- exact per-process accounting ------------------------------------------------------

@test
def memory_peak_and_exit_code(ctx):
    """Peak RSS vs the process's own VmHWM; exit code passes through tracer run."""
    out = ctx.path("hog.json")
    ctx.tracer_run([ctx.helper("memhog"), "256", "7", out], "--run", "hog", expect=7)
    truth = load_json(out)["vmhwm_kb"]
    rss, code, sig = ctx.one("SELECT max_rss_kb, exit_code, signal FROM processes "
                             "WHERE run_id = ? AND exe LIKE '%/memhog'", ctx.latest_run())
    # VmHWM is read a moment before exit; ours at exit from the same mm. The RSS
    # counters are per-CPU batched (32 pages a CPU), so allow 1% or 1 MiB.
    ctx.close(rss, truth, max(1024, truth // 100), "peak RSS (KiB)")
    ctx.check(code == 7 and sig is None, f"exit_code {code} signal {sig}, expected 7/None")
    ctx.check(ctx.one("SELECT exit_code FROM runs WHERE name = 'hog'") == 7, "run exit code")


@test
def cpu_time_and_counters_match_wait4(ctx):
    """CPU time, faults and context switches vs wait4() rusage of the same child."""
    out = ctx.path("m.json")
    ctx.tracer_run([ctx.helper("measure"), out, "--", ctx.helper("cpuburn"), "700"], expect=0)
    t = load_json(out)
    row = ctx.one("SELECT cpu_user_ns, cpu_sys_ns, min_faults, maj_faults, vol_ctxsw, invol_ctxsw "
                  "FROM processes WHERE run_id = ? AND pid = ? AND exe LIKE '%/cpuburn'",
                  ctx.latest_run(), t["pid"])
    user, sys_, minflt, majflt, nvcsw, nivcsw = row
    # Both scale the tick-sampled split to the exact runtime; we read it at the
    # exit tracepoint, wait4 after the rest of do_exit: 5 ms + 1%.
    total_truth = t["utime_ns"] + t["stime_ns"]
    ctx.close(user + sys_, total_truth, 5_000_000 + total_truth // 100, "CPU user+sys (ns)")
    ctx.close(user, t["utime_ns"], 20_000_000 + t["utime_ns"] // 20, "CPU user (ns)")
    ctx.close(minflt, t["minflt"], 20 + t["minflt"] // 50, "minor faults")
    ctx.close(majflt, t["majflt"], 2, "major faults")
    # The task's last switch away (as a dead task) comes after our tracepoint.
    ctx.close(nvcsw, t["nvcsw"], 3, "voluntary context switches")
    ctx.close(nivcsw, t["nivcsw"], 5, "involuntary context switches")


@test
def io_counters_match_proc_io(ctx):
    """wchar/write_bytes/syscw vs the writer's own /proc/self/io before exit."""
    out = ctx.path("io.txt")
    size = 32 << 20
    ctx.tracer_run([ctx.helper("fsyncwriter"), ctx.path("data.bin"), str(size), out], expect=0)
    truth = {}
    for line in open(out):
        k, v = line.split(":")
        truth[k.strip()] = int(v)
    wchar, write_bytes, syscw = ctx.one(
        "SELECT wchar, write_bytes, syscw FROM processes WHERE run_id = ? AND exe LIKE '%/fsyncwriter'",
        ctx.latest_run())
    # After reading /proc/self/io the writer still writes its report (< 1 KiB, 1 call).
    ctx.check(0 <= wchar - truth["wchar"] <= 1024, f"wchar {wchar} vs {truth['wchar']} (+0..1024)")
    ctx.check(0 <= syscw - truth["syscw"] <= 2, f"syscw {syscw} vs {truth['syscw']} (+0..2)")
    ctx.check(truth["write_bytes"] >= size, "ground truth saw the fsynced bytes")
    ctx.check(0 <= write_bytes - truth["write_bytes"] <= 64 * 1024,
              f"write_bytes {write_bytes} vs {truth['write_bytes']} (+0..64 KiB)")


@test
def io_excludes_children_includes_dead_threads(ctx):
    """A shell's I/O is its own, not its children's (the kernel folds reaped children
    into /proc/PID/io); a process's I/O includes threads that exited before it."""
    out, tio = ctx.path("io.txt"), ctx.path("tio.txt")
    size = 8 << 20
    ctx.tracer_run(["bash", "-c", f"{ctx.helper('fsyncwriter')} {ctx.path('d.bin')} {size} {out}; "
                    f"{ctx.helper('threadio')} {tio}; cat /proc/$$/io > {ctx.path('bash-io.txt')}"], expect=0)
    run = ctx.latest_run()
    child = ctx.one("SELECT wchar FROM processes WHERE run_id = ? AND exe LIKE '%/fsyncwriter'", run)
    shell = ctx.one("SELECT wchar FROM processes WHERE run_id = ? AND exe LIKE '%/bash'", run)
    kernel_view = int([l for l in open(ctx.path("bash-io.txt")) if l.startswith("wchar")][0].split()[1])
    ctx.check(child >= size, f"writer wchar {child} >= {size}")
    ctx.check(kernel_view >= size, f"/proc/PID/io of the shell includes its child ({kernel_view})")
    ctx.check(shell < 64 * 1024, f"our shell wchar {shell} is its own (< 64 KiB), not its children's")
    truth = {l.split(":")[0]: int(l.split(":")[1]) for l in open(tio)}
    threaded = ctx.one("SELECT wchar, syscw FROM processes WHERE run_id = ? AND exe LIKE '%/threadio'", run)
    ctx.check(truth["wchar"] >= 4 << 20, "threads wrote 4 MiB")
    # After its /proc/self/io read, main only writes its report (< 1 KiB, 1 call).
    ctx.check(0 <= threaded[0] - truth["wchar"] <= 1024, f"threaded wchar {threaded[0]} vs {truth['wchar']}")
    ctx.check(0 <= threaded[1] - truth["syscw"] <= 2, f"threaded syscw {threaded[1]} vs {truth['syscw']}")


@test
def peak_rss_is_the_childs_own_not_the_parents(ctx):
    """A tiny program started by a 400 MiB parent: ru_maxrss is inflated, ours is not."""
    out, hog = ctx.path("m.json"), ctx.path("hog.json")
    ctx.tracer_run([ctx.helper("measure"), out, "--heap", "400", "--",
                    ctx.helper("memhog"), "8", "0", hog], expect=0)
    t, own = load_json(out), load_json(hog)
    rss, ru = ctx.one("SELECT max_rss_kb, ru_maxrss_kb FROM processes WHERE run_id = ? AND pid = ? "
                      "AND exe LIKE '%/memhog'", ctx.latest_run(), t["pid"])
    ctx.check(t["maxrss_kb"] > 400 * 1024, f"wait4 ru_maxrss {t['maxrss_kb']} should carry the parent's 400 MiB")
    ctx.close(ru, t["maxrss_kb"], t["maxrss_kb"] // 100, "ru_maxrss column vs wait4")
    ctx.close(rss, own["vmhwm_kb"], 1024, "peak RSS vs the child's own VmHWM")
    ctx.check(rss < 64 * 1024, f"peak RSS {rss} KiB must not include the parent's heap")


@test
def killed_by_signal(ctx):
    """SIGKILLed child: signal 9, no exit code; the shell saw 137."""
    out = ctx.path("status")
    script = f"sleep 30 & p=$!; sleep 0.3; kill -9 $p; wait $p; echo $? > {out}; kill -TERM $$"
    p = ctx.tracer_run(["bash", "-c", script], expect=143)
    ctx.check(open(out).read().strip() == "137", "shell's view of the kill")
    sig, code, state = ctx.one("SELECT signal, exit_code, state FROM processes WHERE run_id = ? "
                               "AND exe LIKE '%/sleep' AND argv LIKE '%30%'", ctx.latest_run())
    ctx.check((sig, code, state) == (9, None, "exited"), f"sleep row {sig, code, state}")
    rsig, rcode = ctx.one("SELECT signal, exit_code FROM runs WHERE id = ?", ctx.latest_run())
    ctx.check((rsig, rcode) == (15, None), f"run ended by SIGTERM, got {rsig, rcode}")


@test
def exec_in_place_is_a_new_image(ctx):
    """bash -c 'a; b' execs b in its own PID: two rows, linked, each with its own numbers."""
    out = ctx.path("m.json")
    ctx.tracer_run([ctx.helper("measure"), out, "--", "bash", "-c",
                    f"{ctx.helper('cpuburn')} 50; exec {ctx.helper('memhog')} 64 4 {ctx.path('h.json')}"],
                   expect=0)
    t = load_json(out)
    ctx.check(t["code"] == 4, "the exec'd memhog's exit code reached wait4")
    rows = ctx.query("SELECT id, parent_id, image, state, exe, exit_code, max_rss_kb FROM processes "
                     "WHERE run_id = ? AND pid = ? ORDER BY image", ctx.latest_run(), t["pid"])
    ctx.check(len(rows) == 2, f"two images for pid {t['pid']}: {rows}")
    if len(rows) == 2:
        (id0, _, im0, st0, exe0, code0, _), (id1, par1, im1, st1, exe1, code1, rss1) = rows
        ctx.check(exe0.endswith("/bash") and st0 == "exec" and code0 is None, f"image 0 {rows[0]}")
        ctx.check(exe1.endswith("/memhog") and st1 == "exited" and code1 == 4, f"image 1 {rows[1]}")
        ctx.check(par1 == id0 and (im0, im1) == (0, 1), "image 1 follows image 0")
        own = load_json(ctx.path("h.json"))["vmhwm_kb"]
        ctx.close(rss1, own, 1024, "exec'd image's peak RSS vs its VmHWM")


@test
def process_tree_cwd_and_argv(ctx):
    """Parent links mirror the real ppid; cwd and argv are exact; long argv is cut cleanly."""
    work = ctx.path("work dir")
    os.mkdir(work)
    os.chmod(work, 0o777)
    long_args = [f"arg{i:04d}" for i in range(1500)]  # ~12 KB: over the 4 KiB argv limit
    script = f"cd '{work}' && /bin/echo {' '.join(long_args)} > /dev/null && (sleep 0.05; true) && /bin/true one 'two words'"
    ctx.tracer_run(["bash", "-c", script], expect=0)
    run = ctx.latest_run()
    rows = ctx.query("SELECT id, parent_id, pid, ppid, exe, argv, cwd, argv_truncated FROM processes "
                     "WHERE run_id = ?", run)
    by_id = {r[0]: r for r in rows}
    for r in rows:
        parent = by_id.get(r[1])
        if parent:
            ctx.check(parent[2] == r[3] or parent[2] == r[2], f"pid {r[2]}: parent row pid {parent[2]} != ppid {r[3]}")
    echo = [r for r in rows if r[4] == "/usr/bin/echo"]
    ctx.check(len(echo) == 1, f"one echo: {len(echo)}")
    if echo:
        argv = json.loads(echo[0][5])
        ctx.check(echo[0][7] == 1, "argv_truncated set")
        ctx.check(argv[0] == "/bin/echo" and argv[1:] == long_args[:len(argv) - 1],
                  "stored argv is a clean prefix of whole arguments")
        ctx.check(400 < len(argv) < 600, f"about 4 KiB of arguments kept: {len(argv)}")
        ctx.check(echo[0][6] == work, f"cwd {echo[0][6]!r} == {work!r}")
    true = [r for r in rows if r[4] == "/usr/bin/true" and r[5] and "one" in r[5]]
    ctx.check(len(true) == 1 and json.loads(true[0][5]) == ["/bin/true", "one", "two words"],
              f"exact argv with spaces: {true}")


@test
def secrets_never_stored(ctx):
    """Planted secrets in argv are redacted; the environment is never read."""
    env = dict(os.environ, PLANTED_ENV_SECRET="envsecret-7f3a9c")
    ctx.tracer_run(["/bin/true", "--password=argvsecret-1b2c", "--token", "argvsecret-3d4e",
                    "https://user:argvsecret-5f6a@example.org/x"], expect=0, env=env)
    argv = json.loads(ctx.one("SELECT argv FROM processes WHERE run_id = ? AND exe = '/usr/bin/true'",
                              ctx.latest_run()))
    ctx.check(argv == ["/bin/true", "--password=***", "--token", "***", "https://user:***@example.org/x"],
              f"redacted argv {argv}")
    ctx.check(ctx.one("SELECT argv_redactions FROM processes WHERE run_id = ? AND exe = '/usr/bin/true'",
                      ctx.latest_run()) == 3, "three redactions counted")
    blob = b""
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(ctx.db + suffix):
            blob += open(ctx.db + suffix, "rb").read()
    for secret in (b"argvsecret", b"envsecret-7f3a9c", b"PLANTED_ENV_SECRET"):
        ctx.check(secret not in blob, f"{secret!r} found in the database files")


# --- loss, storms, daemons ------------------------------------------------------------

@test
def exec_storm_records_every_process(ctx):
    """2000 fork+exec of /bin/true on 2 workers: all 2000 recorded, nothing dropped."""
    n = 2000
    ctx.tracer_run([ctx.helper("storm"), str(n), "2", "/bin/true"], expect=0)
    run = ctx.latest_run()
    got = ctx.one("SELECT count(*) FROM processes WHERE run_id = ? AND exe = '/usr/bin/true' "
                  "AND exit_code = 0", run)
    ctx.check(got == n, f"recorded {got} of {n} /bin/true processes")
    drops = ctx.one("SELECT sum(kernel_drops + collector_drops + seq_gaps) FROM collector_stats")
    ctx.check(drops == 0, f"drops and gaps: {drops}")


@test
def fallbacks_tracepoints_and_perf_buffers(ctx):
    """The classic-tracepoint and perf-buffer paths (for kernels without tp_btf or ring
    buffers) record the same things: exit code, exec in place, peak RSS, no loss."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db, extra_col=("--force-tracepoints", "--force-perfbuf"))
    hog = ctx.path("hog.json")
    p = subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", "fb", "--",
                        "bash", "-c", f"{ctx.helper('storm')} 300 2 /bin/true; exec {ctx.helper('memhog')} 64 6 {hog}"],
                       capture_output=True, text=True, timeout=120)
    ctx.check(p.returncode == 6, f"exit {p.returncode}: {p.stderr}")
    run = ctx.one("SELECT id FROM runs WHERE name = 'fb'", db=db)
    ctx.check(ctx.one("SELECT count(*) FROM processes WHERE run_id = ? AND exe = '/usr/bin/true'", run, db=db) == 300,
              "all 300 storm processes")
    rss, code = ctx.one("SELECT max_rss_kb, exit_code FROM processes WHERE run_id = ? AND exe LIKE '%/memhog'", run, db=db)
    ctx.close(rss, load_json(hog)["vmhwm_kb"], 1024, "peak RSS via fallbacks")
    ctx.check(code == 6, f"exec'd image exit code {code}")
    loss = ctx.one("SELECT kernel_drops, kernel_drops_other, collector_drops, seq_gaps, decode_errors FROM collector_stats", db=db)
    ctx.check(sum(loss) == 0, f"no loss: {loss}")
    rc_col, err = ctx.stop(col)
    ctx.check("tracepoint: sched_process_fork" in err and "events via perf buffers" in err,
              "collector reported the fallback probes")
    ctx.stop(agg)


@test
def daemons_serve_tracer_run_and_stop_cleanly(ctx):
    """Long-lived daemons: tracer run uses them; they record everything; SIGTERM is clean."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db)
    status = open(f"/proc/{col.pid}/status").read()
    uid_line = [l for l in status.splitlines() if l.startswith("Uid:")][0].split()[1:]
    cap_eff = [l for l in status.splitlines() if l.startswith("CapEff:")][0].split()[1]
    nobody = pwd.getpwnam("nobody").pw_uid
    ctx.check(uid_line == [str(nobody)] * 4, f"collector uids {uid_line}")
    ctx.check(int(cap_eff, 16) == 0, f"collector CapEff {cap_eff}")
    # Not started by tracer run: recorded with no run (scope all).
    subprocess.run(["/bin/sh", "-c", "exec /bin/sleep 0.11"], check=True)
    p = subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", "viad",
                        "--", "bash", "-c", "exit 5"], capture_output=True, text=True, timeout=60)
    ctx.check(p.returncode == 5, f"tracer run exit {p.returncode}: {p.stderr}")
    ctx.check(ctx.one("SELECT exit_code FROM runs WHERE name = 'viad'", db=db) == 5, "run recorded by daemons")
    ctx.check(ctx.one("SELECT count(*) FROM collector_stats", db=db) == 1, "one collector stream (no second collector)")
    time.sleep(0.5)
    ctx.check(ctx.one("SELECT count(*) FROM processes WHERE argv = '[\"/bin/sleep\",\"0.11\"]' "
                      "AND run_id IS NULL", db=db) == 1, "outside process recorded without a run")
    rc_col, _ = ctx.stop(col)
    rc_agg, _ = ctx.stop(agg)
    ctx.check(rc_col == 0 and rc_agg == 0, f"exit codes collector {rc_col} aggregator {rc_agg}")
    ctx.check(ctx.one("SELECT final FROM collector_stats", db=db) == 1, "final frame committed")


@test
def aggregator_killed_mid_run_loses_nothing(ctx):
    """kill -9 the aggregator under load and restart it: the collector resends, exact count."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db)
    n = 600
    work = subprocess.Popen([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", "kill9",
                             "--", "bash", "-c", f"for i in $(seq {n}); do /bin/true; sleep 0.004; done"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.2)
    agg.kill()
    agg.wait()
    time.sleep(0.8)
    agg2 = ctx.spawn([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db, "--user", "nobody"])
    _, err = work.communicate(timeout=120)
    ctx.check(work.returncode == 0, f"tracer run: {work.returncode} {err}")
    got = ctx.one("SELECT count(*) FROM processes p JOIN runs r ON p.run_id = r.id "
                  "WHERE r.name = 'kill9' AND p.exe = '/usr/bin/true'", db=db)
    ctx.check(got == n, f"recorded {got} of {n} after the aggregator was killed")
    gaps = ctx.one("SELECT seq_gaps + collector_drops FROM collector_stats", db=db)
    ctx.check(gaps == 0, f"gaps/drops {gaps}")
    ctx.stop(col)
    ctx.stop(agg2)


@test
def malformed_frames_and_hostile_peers(ctx):
    """Garbage, truncated and invalid frames are rejected and counted; the daemon lives;
    an unprivileged user is refused at connect time."""
    sock, db = ctx.path("s.sock"), ctx.path("agg.db")
    agg = ctx.spawn([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db, "--user", "nobody",
                     "--socket-mode", "0666", "--collector-user", "root"])
    wait_for_socket(sock)
    send = ctx.helper("framesend")
    for mode, extra in (("garbage", ["50"]), ("truncated", []), ("badevent", [])):
        r = subprocess.run([send, sock, mode, *extra], capture_output=True, text=True, timeout=30)
        ctx.check(r.returncode == 0, f"framesend {mode}: {r.returncode} {r.stderr}")
    r = subprocess.run([send, sock, "valid"], capture_output=True, text=True, timeout=30)
    ctx.check(r.returncode == 0 and "acked" in r.stdout, f"valid frame acked after garbage: {r.stdout} {r.stderr}")
    ctx.check(agg.poll() is None, "aggregator still running")
    # A local user who can reach the socket file is still refused by credentials.
    nobody = pwd.getpwnam("nobody")
    r = subprocess.run(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups",
                        send, sock, "valid"], capture_output=True, text=True, timeout=30)
    ctx.check(r.returncode != 0, f"unprivileged sender must not be acked: {r.returncode} {r.stdout}")
    time.sleep(1.3)
    bad, refused = ctx.one("SELECT bad_frames, refused_peers FROM aggregator_stats ORDER BY id DESC LIMIT 1", db=db)
    ctx.check(bad == 52, f"bad frames counted: {bad} (expected 50 garbage + 1 truncated + 1 bad event)")
    ctx.check(refused >= 1, f"refused peers counted: {refused}")
    ctx.check(ctx.one("SELECT count(*) FROM processes WHERE exe = '/usr/bin/framesend-test'", db=db) == 1,
              "the valid frame's process was stored")
    rc, _ = ctx.stop(agg)
    ctx.check(rc == 0, f"aggregator exit {rc}")


@test
def show_renders_text_and_json(ctx):
    """tracer show agrees with the database in both formats."""
    ctx.tracer_run(["bash", "-c", "/bin/true; /bin/false || true"], "--run", "showme", "--pipeline", "demo", expect=0)
    p = subprocess.run([ctx.bin("tracer"), "show", "--db", ctx.db, "--json", "showme"],
                       capture_output=True, text=True, timeout=30)
    scan_sanitizers(ctx, p.stderr, "tracer show")
    doc = json.loads(p.stdout)
    ctx.check(doc["run"]["name"] == "showme" and doc["run"]["pipeline"] == "demo", "run header")
    count = ctx.one("SELECT count(*) FROM processes WHERE run_id = ?", doc["run"]["id"])
    ctx.check(doc["totals"]["processes"] == count, f"totals.processes {doc['totals']['processes']} vs {count}")

    def walk(nodes):
        for n in nodes:
            yield n
            yield from walk(n.get("children", []))
    ctx.check(sum(1 for _ in walk(doc["processes"])) == count, "every process appears once in the tree")
    ctx.check(doc["totals"]["failed_processes"] == 1, "the /bin/false is the one failure")
    t = subprocess.run([ctx.bin("tracer"), "show", "--db", ctx.db], capture_output=True, text=True, timeout=30)
    ctx.check(t.returncode == 0 and "Run " in t.stdout and "/bin/false" in t.stdout, "text report")
    missing = subprocess.run([ctx.bin("tracer"), "show", "--db", ctx.db, "no-such-run"],
                             capture_output=True, text=True, timeout=30)
    ctx.check(missing.returncode == 1 and "no run" in missing.stderr, "unknown run is an error")


# --- kernel telemetry depth (issue 3) ----------------------------------------------

class MemoryCgroup:
    """A memory-limited cgroup for the test: v1 where the host has it, else v2."""

    def __init__(self, name, limit):
        v1 = "/sys/fs/cgroup/memory"
        if os.path.isdir(v1):
            self.path = os.path.join(v1, name)
            self.v1 = True
        else:
            self.path = os.path.join("/sys/fs/cgroup", name)
            self.v1 = False
        os.makedirs(self.path, exist_ok=True)
        limit_file = "memory.limit_in_bytes" if self.v1 else "memory.max"
        with open(os.path.join(self.path, limit_file), "w") as f:
            f.write(limit)

    def oom_kills(self):
        name = "memory.oom_control" if self.v1 else "memory.events"
        for line in open(os.path.join(self.path, name)):
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0

    def enter_cmd(self, cmd):
        return ["bash", "-c", f"echo $$ > {self.path}/cgroup.procs; exec \"$0\" \"$@\"", *cmd]

    def remove(self):
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except OSError:
                time.sleep(0.1)


@test
def oom_kill_names_the_victim(ctx):
    """A 300 MiB allocation in a 64 MiB cgroup: the DB names that exact process."""
    cg = MemoryCgroup(f"tracer-it-oom-{os.getpid()}", "64M")
    try:
        before = cg.oom_kills()
        ctx.tracer_run(cg.enter_cmd(["/usr/bin/python3", "-c", "x = bytearray(300 * 1024 * 1024)"]),
                       expect=137)
        kills = cg.oom_kills() - before
        ctx.check(kills == 1, f"the cgroup saw {kills} kills")
        rows = ctx.query("SELECT o.pid, o.comm, o.rss_kb, o.memcg_limit_kb, p.exe, p.signal, p.oom_killed "
                         "FROM oom_kills o JOIN processes p ON p.id = o.process_id WHERE p.run_id = ?",
                         ctx.latest_run())
        ctx.check(len(rows) == 1, f"one OOM kill linked to a process of the run: {rows}")
        if rows:
            pid, comm, rss, limit, exe, sig, flagged = rows[0]
            ctx.check(exe.startswith("/usr/bin/python3") and comm.startswith("python"), f"victim {exe} {comm}")
            ctx.check((sig, flagged) == (9, 1), f"signal {sig}, oom_killed {flagged}")
            ctx.check(limit == 64 * 1024, f"memcg limit {limit} KiB")
            reclaim = ctx.one("SELECT reclaim_ns FROM processes p JOIN oom_kills o ON o.process_id = p.id "
                              "WHERE p.run_id = ?", ctx.latest_run())
            ctx.check(reclaim and reclaim > 0, f"the victim spent time in reclaim at its limit: {reclaim}")
            ctx.check(32 * 1024 < rss <= 80 * 1024, f"victim RSS at the kill {rss} KiB, near the 64 MiB limit")
    finally:
        cg.remove()


@test
def oom_storm_loses_no_kill(ctx):
    """stress-ng in a 64 MiB cgroup: hundreds of kills, every one recorded and linked."""
    cg = MemoryCgroup(f"tracer-it-storm-{os.getpid()}", "64M")
    try:
        before = cg.oom_kills()
        ctx.tracer_run(cg.enter_cmd(["stress-ng", "--vm", "2", "--vm-bytes", "200M", "--timeout", "4s"]))
        kills = cg.oom_kills() - before
        run = ctx.latest_run()
        got, linked = ctx.one("SELECT count(*), count(p.id) FROM oom_kills o LEFT JOIN processes p "
                              "ON p.id = o.process_id AND p.run_id = ?", run)
        ctx.check(kills >= 20, f"a storm: {kills} kills")
        ctx.check(got == kills, f"recorded {got} of {kills} kills")
        ctx.check(linked == kills, f"{linked} of {kills} linked to a process of the run")
        lost = ctx.one("SELECT coalesce(sum(count), 0) FROM event_loss WHERE event_type = 'oom'")
        ctx.check(lost == 0, f"oom events lost: {lost}")
    finally:
        cg.remove()


@test
def iowait_and_runq_match_kernel_accounting(ctx):
    """I/O wait vs delay accounting, run-queue delay vs /proc/PID/schedstat."""
    delayacct = "/proc/sys/kernel/task_delayacct"
    old = open(delayacct).read().strip()
    try:
        with open(delayacct, "w") as f:
            f.write("1")
        # The first reading after enabling delay accounting is off; warm it up.
        subprocess.run([ctx.helper("syncwriter"), ctx.path("w.bin"), "20", ctx.path("warm.json")], check=True)
        sw = ctx.path("sw.json")
        burners = [ctx.path(f"b{i}.json") for i in range(4)]
        script = (f"{ctx.helper('syncwriter')} {ctx.path('s.bin')} 400 {sw}; "
                  + " ".join(f"{ctx.helper('cpuburn')} 600 {b} &" for b in burners)
                  + f" wait; {ctx.helper('cpuburn')} 200; true")
        ctx.tracer_run(["bash", "-c", script], expect=0)
    finally:
        with open(delayacct, "w") as f:
            f.write(old)
    run = ctx.latest_run()
    truth = load_json(sw)
    ours = ctx.one("SELECT iowait_ns FROM processes WHERE run_id = ? AND exe LIKE '%/syncwriter'", run)
    theirs = truth["blkio_ticks"] * truth["tick_ns"]
    # Delay accounting counts in 10 ms ticks; both time the same io_schedule() sleeps.
    ctx.check(theirs > 0 and ours > 50_000_000, f"the synchronous writer waited on I/O: {ours}")
    ctx.close(ours, theirs, 20_000_000 + theirs // 10, "I/O wait of a synchronous writer (ns)")
    burn_rows = ctx.query("SELECT pid, runq_ns, iowait_ns FROM processes WHERE run_id = ? "
                          "AND exe LIKE '%/cpuburn' ORDER BY start_ns", run)
    ctx.check(len(burn_rows) == 5, f"five burners: {len(burn_rows)}")
    for (pid, runq, iowait), path in zip(burn_rows, burners):
        own = load_json(path)["run_delay_ns"]
        # Read by the burner just before exiting; ours at the exit tracepoint.
        ctx.close(runq, own, 2_000_000 + own // 100, f"run-queue delay of burner {pid} (ns)")
        # Paging the program in at exec can sleep in io_schedule(): allow 5 ms,
        # against the synchronous writer's hundred-odd.
        ctx.check(iowait < 5_000_000, f"a CPU burner has (almost) no I/O wait: {iowait}")
    contended = sorted(r[1] for r in burn_rows[:4])
    ctx.check(contended[0] > 100_000_000, f"4 burners on 2 CPUs wait for a CPU: {contended}")


@test
def loopback_bytes_per_process(ctx):
    """A 32 MiB TCP transfer on 127.0.0.1: sender's tx and receiver's rx."""
    out, size = ctx.path("net.json"), 32 << 20
    ctx.tracer_run([ctx.helper("netpair"), str(size), out], expect=0)
    t = load_json(out)
    ctx.check(t["received"] == size, "the receiver got every byte")
    run = ctx.latest_run()
    tx = ctx.one("SELECT net_tx_bytes FROM processes WHERE run_id = ? AND pid = ?", run, t["sender"])
    rx = ctx.one("SELECT net_rx_bytes FROM processes WHERE run_id = ? AND pid = ?", run, t["receiver"])
    # Payload bytes through sock_sendmsg/recvmsg: exactly what send()/recv() returned.
    ctx.check(tx == size, f"sender net_tx_bytes {tx} == {size}")
    ctx.check(rx == size, f"receiver net_rx_bytes {rx} == {size}")
    ctx.check(ctx.one("SELECT net_rx_bytes FROM processes WHERE run_id = ? AND pid = ?", run, t["sender"]) == 0,
              "the sender received nothing")


@test
def network_fallback_via_socket_syscalls(ctx):
    """Without sock tracepoints (forced), bytes come from send/recv syscalls: same answer."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db, extra_col=("--enable", "syscalls", "--force-net-syscalls"))
    out, size = ctx.path("net.json"), 8 << 20
    p = subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--",
                        ctx.helper("netpair"), str(size), out], capture_output=True, text=True, timeout=60)
    ctx.check(p.returncode == 0, p.stderr)
    t = load_json(out)
    tx = ctx.one("SELECT net_tx_bytes FROM processes WHERE pid = ? AND exe LIKE '%/netpair'", t["sender"], db=db)
    rx = ctx.one("SELECT net_rx_bytes FROM processes WHERE pid = ? AND exe LIKE '%/netpair'", t["receiver"], db=db)
    # netpair uses send()/recv(): sendto/recvfrom underneath, which the fallback counts.
    ctx.check((tx, rx) == (size, size), f"tx {tx} rx {rx}, expected {size} each")
    _, err = ctx.stop(col)
    ctx.check("fallback: bytes of sendto" in err, "the collector said it uses the fallback")
    ctx.stop(agg)


@test
def files_lists_exactly_what_was_opened(ctx):
    """Known opens: exactly those paths, with access, creation, result and count."""
    d = ctx.path("files")
    os.mkdir(d)
    open(os.path.join(d, "b.txt"), "w").write("b")
    ctx.tracer_run([ctx.helper("opener"), d], expect=0)
    rows = ctx.query("SELECT f.path, f.access, f.created, f.result, f.count, f.failed FROM files f "
                     "JOIN processes p ON p.id = f.process_id WHERE p.run_id = ? AND p.exe LIKE '%/opener' "
                     "ORDER BY f.path", ctx.latest_run())
    want = [(f"{d}/a.txt", "w", 1, 0, 1, 0), (f"{d}/b.txt", "r", 0, 0, 3, 0), (f"{d}/missing.txt", "r", 0, 2, 1, 1)]
    ctx.check(rows == want, f"files {rows}\n       expected {want}")


@test
def samples_follow_a_memory_ramp(ctx):
    """A process growing 40 MiB every 0.5 s: its samples' RSS rises with it."""
    out = ctx.path("ramp.txt")
    ctx.tracer_run([ctx.helper("memramp"), "8", "40", "500", out], expect=0)
    own = [int(x) for x in open(out).read().split()]
    rss = [r[0] for r in ctx.query(
        "SELECT s.rss_kb FROM samples s JOIN processes p ON p.id = s.process_id "
        "WHERE p.run_id = ? AND p.exe LIKE '%/memramp' ORDER BY s.ts_ns", ctx.latest_run())]
    ctx.check(len(rss) >= 3, f"at least 3 samples in 4 s: {rss}")
    ctx.check(all(b >= a for a, b in zip(rss, rss[1:])), f"RSS never falls: {rss}")
    ctx.check(rss and rss[-1] - rss[0] >= 80 * 1024, f"RSS rose by at least 80 MiB: {rss}")
    ctx.check(rss and max(rss) <= own[-1] + 1024, f"no sample above the final VmRSS {own[-1]}: {rss}")


@test
def syscall_counts_match_strace(ctx):
    """Per-class syscall counts and failures vs strace -c of the same program."""
    out = ctx.path("strace.txt")
    sock, db = ctx.path("s.sock"), ctx.db
    agg, col = start_daemons(ctx, sock, db, extra_col=("--enable", "syscalls"))
    p = subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--",
                        "strace", "-c", "-o", out, ctx.helper("opener"), ctx.path(".")],
                       capture_output=True, text=True, timeout=60)
    ctx.check(p.returncode == 0, p.stderr)
    ctx.stop(col)
    ctx.stop(agg)
    total = errors = 0
    for line in open(out):
        parts = line.split()
        if len(parts) >= 5 and parts[-1] == "total":
            total = int(parts[3])
            errors = int(parts[4]) if len(parts) == 6 else 0
    row = ctx.one("SELECT sys_file + sys_net + sys_mem + sys_proc + sys_other, sys_failed FROM processes "
                  "WHERE run_id = ? AND exe LIKE '%/opener'", ctx.latest_run())
    # Our row covers the process from its fork; strace counts from its exec, so ours
    # also has the handful of calls strace's child makes before exec'ing (0..12).
    # exit_group never returns: neither side counts it.
    ctx.check(total > 10, f"strace saw {total} syscalls")
    ctx.check(0 <= row[0] - total <= 12, f"syscalls: tracer {row[0]} vs strace {total} (+0..12)")
    ctx.check(0 <= row[1] - errors <= 3, f"failed syscalls: tracer {row[1]} vs strace {errors} (+0..3)")


@test
def disabled_probes_and_status(ctx):
    """Turning probe groups off leaves the rest working, and tracer status says so."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db, extra_col=("--disable", "files", "--disable", "samples"))
    d = ctx.path("files")
    os.mkdir(d)
    open(os.path.join(d, "b.txt"), "w").write("b")
    p = subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", "off", "--",
                        ctx.helper("memramp"), "3", "20", "500", ctx.path("ramp.txt")],
                       capture_output=True, text=True, timeout=60)
    ctx.check(p.returncode == 0, p.stderr)
    subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", "off2", "--",
                    ctx.helper("opener"), d], capture_output=True, timeout=60)
    ctx.check(ctx.one("SELECT count(*) FROM files", db=db) == 0, "no files recorded")
    ctx.check(ctx.one("SELECT count(*) FROM samples", db=db) == 0, "no samples recorded")
    ctx.check(ctx.one("SELECT iowait_ns IS NOT NULL AND cpu_user_ns IS NOT NULL FROM processes p "
                      "JOIN runs r ON r.id = p.run_id WHERE r.name = 'off2' AND p.exe LIKE '%/opener'",
                      db=db) == 1, "the other counters still recorded")
    st = subprocess.run([ctx.bin("tracer"), "status", "--db", db, "--socket", sock, "--json"],
                        capture_output=True, text=True, timeout=30)
    doc = json.loads(st.stdout)
    probes = {p["name"]: p["state"] for p in doc["collectors"][0]["probes"]}
    ctx.check(probes.get("files") == "disabled" and probes.get("samples") == "disabled", f"status {probes}")
    ctx.check(probes.get("process") == "active" and probes.get("oom") == "active", f"status {probes}")
    ctx.check(probes.get("syscalls") == "disabled", f"syscalls are off by default: {probes}")
    ctx.check(ctx.one("SELECT count(*) FROM processes WHERE sys_file IS NOT NULL", db=db) == 0,
              "counters of a group that was off are NULL, not zero")
    ctx.check(doc["listening"] is True and st.returncode == 0, f"healthy and listening: rc {st.returncode}")
    text = subprocess.run([ctx.bin("tracer"), "status", "--db", db, "--socket", sock],
                          capture_output=True, text=True, timeout=30).stdout
    ctx.check("files" in text and "disabled" in text, "text status lists the disabled group")
    ctx.stop(col)
    ctx.stop(agg)


@test
def cgroup_path_survives_removal(ctx):
    """A cgroup created, used and removed during a run still resolves by id."""
    v1 = os.path.isdir("/sys/fs/cgroup/memory")
    name = f"tracer-it-cg-{os.getpid()}"
    path = os.path.join("/sys/fs/cgroup/memory" if v1 else "/sys/fs/cgroup", name)
    try:
        ctx.tracer_run(["bash", "-c", f"mkdir {path}; sleep 0.2; (echo $BASHPID > {path}/cgroup.procs; "
                        f"exec /bin/sleep 0.3); rmdir {path}; sleep 0.3"], expect=0)
    finally:
        if os.path.isdir(path):
            os.rmdir(path)
    hierarchy_filter = "controllers = 'memory'" if v1 else "hierarchy = 0"
    rows = ctx.query(f"SELECT path, created_ns IS NOT NULL, removed_ns IS NOT NULL, removed_ns > created_ns "
                     f"FROM cgroups WHERE {hierarchy_filter} AND path = ?", "/" + name)
    ctx.check(rows == [(f"/{name}", 1, 1, 1)], f"cgroup lifecycle {rows}")
    col = "memory_cgroup_path" if v1 else "cgroup_path"
    paths = ctx.query(f"SELECT c.{col} FROM process_cgroups c JOIN processes p ON p.id = c.process_id "
                      f"WHERE p.run_id = ? AND p.exe = '/usr/bin/sleep' AND p.argv LIKE '%0.3%'",
                      ctx.latest_run())
    ctx.check((f"/{name}",) in paths, f"the process inside resolves to the removed cgroup: {paths}")


@test
def host_samples_describe_the_host(ctx):
    """Whole-host samples each period, consistent with /proc."""
    ctx.tracer_run([ctx.helper("cpuburn"), "2500"], expect=0)
    rows = ctx.query("SELECT cpus, cpu_busy_pct, mem_total_kb, mem_available_kb, interval_ns FROM host_samples")
    ctx.check(len(rows) >= 2, f"host samples over 2.5 s: {len(rows)}")
    mem_total = int([l for l in open("/proc/meminfo") if l.startswith("MemTotal")][0].split()[1])
    for cpus, busy, total, avail, interval in rows:
        ctx.check(cpus == os.cpu_count(), f"cpus {cpus}")
        ctx.check(0 <= busy <= 100, f"cpu busy {busy}")
        ctx.check(total == mem_total and 0 < avail <= total, f"memory {total} {avail}")
        ctx.check(0.5e9 < interval < 2e9, f"interval {interval}")
    ctx.check(max(r[1] for r in rows) >= 40, f"a burner on 2 CPUs shows >= 40% busy: {[r[1] for r in rows]}")


def run_suite(build, selected):
    failed = []
    for fn in TESTS:
        if selected and not any(s in fn.__name__ for s in selected):
            continue
        tmp = tempfile.mkdtemp(prefix="tracer-it-")
        os.chmod(tmp, 0o777)  # the aggregator runs as nobody
        ctx = Ctx(build, tmp)
        start = time.time()
        try:
            fn(ctx)
        except Failure as e:
            ctx.failures.append(str(e))
        except Exception:
            ctx.failures.append(traceback.format_exc())
        finally:
            for p in ctx.procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        status = "ok" if not ctx.failures else "FAIL"
        print(f"  {status:4} {fn.__name__} ({time.time() - start:.1f}s)", flush=True)
        for f in ctx.failures:
            print("       " + f.replace("\n", "\n       "))
        if ctx.failures:
            failed.append(fn.__name__)
        else:
            subprocess.run(["rm", "-rf", tmp])
    return failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--asan-build")
    ap.add_argument("--helpers", help="ground-truth helpers (default: BUILD/helpers)")
    ap.add_argument("-k", action="append", default=[])
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("integration tests need root (BPF)", file=sys.stderr)
        return 2
    os.environ.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    os.environ.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    global HELPERS
    HELPERS = os.path.abspath(args.helpers or os.path.join(args.build, "helpers"))
    failed = []
    for build in [args.build] + ([args.asan_build] if args.asan_build else []):
        print(f"integration tests against {build}:", flush=True)
        failed += [f"{build}: {n}" for n in run_suite(build, args.k)]
    if failed:
        print(f"\n{len(failed)} failed:\n  " + "\n  ".join(failed))
        return 1
    print("\nall integration tests passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
