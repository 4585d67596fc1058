"""Shared test harness: the context each integration test gets, daemons, and
ground-truth file helpers."""
import json
import os
import pwd
import signal
import sqlite3
import subprocess
import threading
import time

TESTS = []
SANITIZER_MARKERS = ("AddressSanitizer", "LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer")


def test(fn):
    TESTS.append(fn)
    return fn


def plain_build_only(reason):
    """Run a test against the plain build only; the ASan pass lists it as skipped, with why."""
    def mark(fn):
        fn.plain_only = reason
        return fn
    return mark


class Failure(Exception):
    pass


class Skip(Exception):
    """What the test needs is truly absent (a binary not installed): said, not failed."""


class Daemon(subprocess.Popen):
    """A long-running process whose stderr is read as it is written, as a journal
    would: a pipe nobody reads fills after ~64 KiB and then blocks the daemon in its
    next log line (a shipper logging each retry through a flapping sink stalled that
    way after ~15 minutes of a soak). communicate() returns everything it wrote."""

    def __init__(self, args, **kw):
        # errors="replace": a stray byte in a log line must not end the reading.
        super().__init__(args, stderr=subprocess.PIPE, text=True, errors="replace", **kw)
        self._lines = []
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self):
        for line in self.stderr:
            self._lines.append(line)

    def communicate(self, input=None, timeout=None):
        self.wait(timeout=timeout)  # TimeoutExpired, like Popen.communicate
        self._reader.join(timeout=5)  # a child that inherited the pipe may hold it open
        return None, "".join(self._lines)


HELPERS = None  # ground-truth programs, always from the plain (unsanitised) build


class Ctx:
    def __init__(self, build, tmp):
        self.build = os.path.abspath(build)
        # The ASan+UBSan build (Makefile SANITIZE=1) lives in a directory named asan.
        self.sanitized = 1 if "asan" in os.path.basename(self.build) else 0
        self.tmp = tmp
        self.db = os.path.join(tmp, "t.db")
        self.failures = []
        self.procs = []
        self.cleanups = []  # callables run after the test, last first

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

    def daemon_run(self, sock, db, cmd, *opts, timeout=60):
        """tracer run under running daemons: (its CompletedProcess, its run id). The run is found
        by its launcher's pid, not as the newest: on a shared host others open runs too."""
        args = [self.bin("tracer"), "run", "--socket", sock, "--db", db, *opts, "--", *cmd]
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = p.communicate(timeout=timeout)
        scan_sanitizers(self, err, "tracer run")
        done = subprocess.CompletedProcess(args, p.returncode, out, err)
        rows = self.query("SELECT id FROM runs WHERE launcher_pid = ? ORDER BY id DESC LIMIT 1", p.pid, db=db)
        return done, rows[0][0] if rows else None

    def spawn(self, args, **kw):
        if os.path.basename(args[0]) == "tracer-aggregator" and "--collector-user" not in args:
            # The tests run their collectors as nobody: only nobody (and root) may try, and the
            # key decides (tracer run's own daemons accept any uid that holds it).
            args = [*args, "--collector-user", "nobody"]
        if (os.path.basename(args[0]) == "tracer-collector" and "--aggregator-user" not in args
                and "--aggregator-pid" not in args and self.knows(args[0], "--aggregator-user")):
            # And their aggregators as nobody: the collector sends only to the listener it expects.
            args = [*args, "--aggregator-user", "nobody"]
        p = Daemon(args, **kw)
        self.procs.append(p)
        return p

    def knows(self, program, option, _seen={}):
        """Whether program's --help names option (a build from before it was added does not:
        the suite runs against such builds to show that a new test fails there)."""
        if (program, option) not in _seen:
            p = subprocess.run([program, "--help"], capture_output=True, text=True, timeout=30)
            _seen[(program, option)] = option in p.stdout + p.stderr
        return _seen[(program, option)]

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


def stacks_of(pid):
    """Every thread's stack of a live process (gdb), for a failure message."""
    p = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt 12"],
                       capture_output=True, text=True, timeout=120)
    return "\n".join(line for line in p.stdout.splitlines() if line.startswith(("#", "Thread")))


def scan_sanitizers(ctx, text, who):
    for marker in SANITIZER_MARKERS:
        if text and marker in text:
            ctx.failures.append(f"{who}: sanitizer report:\n{text[-3000:]}")
            return


def write_script(ctx, name, body):
    """An executable bash script in the test's directory; returns its path."""
    path = ctx.path(name)
    with open(path, "w") as f:
        f.write("#!/bin/bash\n" + body)
    os.chmod(path, 0o755)
    return path


def load_json(path):
    with open(path) as f:
        return json.load(f)


def stop_process(proc, timeout=30):
    """A server the tests started, stopped: asked (SIGTERM), then told (SIGKILL)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def remove_cgroup(path):
    """rmdir a cgroup its processes have left: the kernel lets go of it a moment after the
    last one exits, so try for up to 5 s (a cgroup left behind is only litter)."""
    for _ in range(50):
        try:
            os.rmdir(path)
            return
        except OSError:
            time.sleep(0.1)


def wait_for_socket(path, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        if os.path.exists(path):
            return
        time.sleep(0.02)
    raise Failure(f"socket {path} never appeared")


def start_logged_aggregator(ctx, sock, db, log):
    """An aggregator whose stderr goes to a file the test can read while it runs."""
    with open(log, "w") as out:
        agg = subprocess.Popen([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db, "--user", "nobody",
                                "--collector-user", "nobody"], stderr=out)  # as in ctx.spawn
    ctx.procs.append(agg)
    wait_for_socket(sock)
    return agg


def ensure_aggregator_user():
    """tracer run's own aggregator runs as a dedicated user, never nobody: the packaged
    tracer-aggregator, as on an installed host. Made here if the host lacks it (and kept:
    other suites on the host may be using it)."""
    try:
        return pwd.getpwnam("tracer-aggregator")
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                        "tracer-aggregator"], capture_output=True)
        return pwd.getpwnam("tracer-aggregator")


def start_daemons(ctx, sock, db, extra_agg=(), extra_col=()):
    agg = ctx.spawn([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db,
                     "--user", "nobody", *extra_agg])
    wait_for_socket(sock)
    col = ctx.spawn([ctx.bin("tracer-collector"), "--socket", sock, "--user", "nobody", *extra_col])
    # Ready once its snapshot reached the database: 3-8 s under ASan; a slow
    # moment of the machine must not read as a failure.
    end = time.time() + 40
    while time.time() < end:
        try:
            if ctx.query("SELECT count(*) FROM collector_stats WHERE snapshot_processes > 0", db=db)[0][0]:
                return agg, col
        except sqlite3.Error:
            pass
        time.sleep(0.05)
    # What each daemon said, so a failure here can be told from a slow start.
    said = {name: (p.poll(), "".join(p._lines[-8:])) for name, p in (("collector", col), ("aggregator", agg))}
    raise Failure(f"collector never delivered its snapshot in 40 s; (exit status or None, last log lines): {said}")
