"""The scope setting: an aggregator records only the processes of one cgroup subtree
(docs/operations.md, "Scope"). Ground truth: where the test put each workload (a v1
memory cgroup it makes, as TESTBED.md shows) and wait4's account of each (measure)."""
import json
import os
import signal
import subprocess
import time
import uuid

from harness import Failure, remove_cgroup, start_daemons, test, write_script

MEMCG = "/sys/fs/cgroup/memory"


def wait_for_file(path, timeout=60):
    end = time.time() + timeout
    while not os.path.exists(path) or os.path.getsize(path) == 0:
        if time.time() > end:
            raise Failure(f"{path} never written")
        time.sleep(0.05)


def wait_for_row(ctx, db, sql, *params, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        rows = ctx.query(sql, *params, db=db)
        if rows and rows[0][0]:
            return rows[0]
        time.sleep(0.1)
    raise Failure(f"never in the database: {sql} {params}")


def cpu_script(ctx, name, ms):
    """A script run (bash x.sh) of two CPU burners, its steps."""
    burn = ctx.helper("cpuburn")
    return write_script(ctx, name, f"{burn} {ms}\n{burn} {ms // 2}\n")



def wait_both(ctx, *procs):
    """Waits for the workloads, checks they succeeded; pid -> the rusage wait4 gave."""
    rusage = {}
    for p in procs:
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        rusage[p.pid] = ru
    ctx.check(all(p.returncode == 0 for p in procs), "both workloads ran")
    return rusage

@test
def scope_cgroup_records_only_the_subtree(ctx):
    """Two script runs at once, one moved into a v1 memory cgroup the test makes, one left
    outside; the aggregator's [scope] cgroup names the first. Only it is recorded (its
    processes, its run in `tracer runs --json`), from the exec after its move on: the shell
    that moved it and the test's own process, outside, are not. Its CPU in `tracer show
    --json` equals wait4's for the workload (9 ms + 1%: the exit path after our tracepoint,
    and the outer `bash -c`, not in the run)."""
    name = f"tracer-scope-{uuid.uuid4().hex[:8]}"
    group = f"{MEMCG}/{name}"
    os.mkdir(group)
    try:
        conf = ctx.path("aggregator.conf")
        with open(conf, "w") as f:
            f.write(f"[collector]\nflush-ms = 100\n\n[scope]\ncgroup = /{name}\n")
        sock, db = ctx.path("s.sock"), ctx.path("s.db")
        agg, col = start_daemons(ctx, sock, db, extra_agg=("--config", conf))
        inside, outside = cpu_script(ctx, "inside.sh", 400), cpu_script(ctx, "outside.sh", 300)
        # The shell moves itself into the cgroup, then execs a shell that starts the script
        # (a script a user starts from a shell is a run; docs/correlation.md).
        def start(script, move):
            head = f"echo $$ > {group}/cgroup.procs; " if move else ""
            return subprocess.Popen(["sh", "-c", f"{head}exec bash -c 'bash {script}; true'"])
        mover, other = start(inside, True), start(outside, False)
        rusage = wait_both(ctx, mover, other)
        run = wait_for_row(ctx, db, "SELECT run_id FROM processes WHERE ppid = ? AND exe LIKE '%/bash' "
                           "AND end_ns > 0 AND run_id > 0", mover.pid)[0]
        wait_for_row(ctx, db, "SELECT 1 FROM runs WHERE id = ? AND end_ns > 0", run)
        time.sleep(1)  # the outer shell's exit reaches the database too
        ctx.stop(col)
        ctx.stop(agg)
        for sql, pid, who in (("pid = ? OR ppid = ?", other.pid, "the outside workload or its children"),
                              ("pid = ?", os.getpid(), "the test itself, an ancestor outside")):
            n = ctx.query(f"SELECT count(*) FROM processes WHERE {sql}", *[pid] * sql.count("?"),
                          db=db)[0][0]
            ctx.check(n == 0, f"{who} (pid {pid}) is not recorded: {n} rows")
        images = ctx.query("SELECT exe FROM processes WHERE pid = ? ORDER BY image", mover.pid, db=db)
        ctx.check([os.path.basename(e or "") for (e,) in images] == ["bash"],
                  f"the mover is recorded from its exec in the cgroup on, not as the sh before: {images}")
        outside_cg = ctx.query("SELECT count(*) FROM process_cgroups WHERE memory_cgroup_path IS NULL OR "
                               "(memory_cgroup_path != ? AND memory_cgroup_path NOT LIKE ?)",
                               f"/{name}", f"/{name}/%", db=db)
        ctx.check(outside_cg[0][0] == 0, f"no process of another cgroup: {outside_cg}")
        listed = json.loads(subprocess.run([ctx.bin("tracer"), "runs", "--db", db, "--json"],
                                           capture_output=True, text=True, check=True).stdout)["runs"]
        ctx.check([r["id"] for r in listed] == [run], f"tracer runs lists the inside run alone: {listed}")
        shown = json.loads(subprocess.run([ctx.bin("tracer"), "show", "--db", db, "--json", str(run)],
                                          capture_output=True, text=True, check=True).stdout)
        ru = rusage[mover.pid]  # the mover's and its reaped descendants' (RUSAGE_BOTH)
        truth = round((ru.ru_utime + ru.ru_stime) * 1e9)
        cpu = shown["run"]["cpu_ns"]
        ctx.close(cpu, truth, 9_000_000 + truth // 100, "the inside run's CPU against wait4 (ns)")
        print(f"  inside run {run}: {cpu / 1e6:.1f} ms CPU, wait4 {truth / 1e6:.1f} ms; "
              f"{len(shown.get('steps', []))} steps")
    finally:
        remove_cgroup(group)


@test
def scope_cgroup_refuses_a_path_that_is_not_one(ctx):
    """A relative --scope-cgroup, or an unknown [scope] key, stops the aggregator at start
    (exit 2) naming the setting: a typo must not record the whole host."""
    for extra, said in ((["--scope-cgroup", "slurm"], "/slurm"),
                        (["--config", ctx.path("bad.conf")], "unknown setting")):
        with open(ctx.path("bad.conf"), "w") as f:
            f.write("[scope]\ncgroups = /slurm\n")
        p = subprocess.run([ctx.bin("tracer-aggregator"), "--socket", ctx.path("x.sock"), "--db",
                            ctx.path("x.db"), "--user", "nobody", *extra], capture_output=True, text=True,
                           timeout=30)
        ctx.check(p.returncode == 2 and said in p.stderr, f"{extra}: exit {p.returncode}: {p.stderr}")


@test
def scope_pidns_records_only_the_namespace(ctx):
    """A collector with --scope-pidns PID records only the processes of that PID namespace
    (`unshare -fp --mount-proc`), numbered as the namespace numbers them: a script run
    entered into it with nsenter is the only run; nsenter itself, outside, and a script
    run outside at the same time are not recorded. The run's CPU in `tracer show --json`
    equals wait4's for nsenter, which waited for it (9 ms + 1%: the exit path after our
    tracepoint, and the `bash -c` around the script, not in the run)."""
    holder = subprocess.Popen(["unshare", "-fp", "--mount-proc", "sleep", "600"])
    try:
        init = None
        for _ in range(100):
            kids = open(f"/proc/{holder.pid}/task/{holder.pid}/children").read().split()
            if kids:
                init = int(kids[0])
                break
            time.sleep(0.05)
        ctx.check(init is not None, "the namespace's first process started")
        sock, db = ctx.path("n.sock"), ctx.path("n.db")
        agg, col = start_daemons(ctx, sock, db, extra_col=("--scope-pidns", str(init)))
        inside, outside = cpu_script(ctx, "inside.sh", 400), cpu_script(ctx, "outside.sh", 300)
        enter = subprocess.Popen(["nsenter", "-t", str(init), "-p", "-m", "bash", "-c", f"bash {inside}; true"])
        other = subprocess.Popen(["bash", "-c", f"bash {outside}; true"])
        rusage = wait_both(ctx, enter, other)
        run = wait_for_row(ctx, db, "SELECT run_id FROM processes WHERE argv LIKE ? AND end_ns > 0 "
                           "AND run_id > 0", f"%{inside}%")[0]
        wait_for_row(ctx, db, "SELECT 1 FROM runs WHERE id = ? AND end_ns > 0", run)
        time.sleep(1)
        ctx.stop(col)
        ctx.stop(agg)
        for sql, what in (("argv LIKE '%outside.sh%'", "the outside script"),
                          ("exe LIKE '%/nsenter'", "nsenter, outside the namespace"),
                          (f"pid = {os.getpid()}", "the test itself")):
            n = ctx.query(f"SELECT count(*) FROM processes WHERE {sql}", db=db)[0][0]
            ctx.check(n == 0, f"{what} is not recorded: {n} rows")
        first = ctx.query("SELECT exe FROM processes WHERE pid = 1", db=db)
        ctx.check([os.path.basename(e or "") for (e,) in first] == ["sleep"],
                  f"the namespace's pid 1 is its sleep, numbered as it numbers it: {first}")
        listed = json.loads(subprocess.run([ctx.bin("tracer"), "runs", "--db", db, "--json"],
                                           capture_output=True, text=True, check=True).stdout)["runs"]
        ctx.check([r["id"] for r in listed] == [run], f"tracer runs lists the inside run alone: {listed}")
        shown = json.loads(subprocess.run([ctx.bin("tracer"), "show", "--db", db, "--json", str(run)],
                                          capture_output=True, text=True, check=True).stdout)
        ru = rusage[enter.pid]
        truth = round((ru.ru_utime + ru.ru_stime) * 1e9)
        cpu = shown["run"]["cpu_ns"]
        ctx.close(cpu, truth, 9_000_000 + truth // 100, "the namespace's run CPU against wait4 (ns)")
        print(f"  namespace run {run}: {cpu / 1e6:.1f} ms CPU, wait4 {truth / 1e6:.1f} ms")
    finally:
        if init:
            os.kill(init, signal.SIGKILL)  # a namespace's pid 1 ignores SIGTERM
        holder.wait(timeout=30)
