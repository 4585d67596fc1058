"""Exact per-process accounting, loss handling, daemons and the CLI."""
import json
import os
import pwd
import signal
import subprocess
import time

from harness import (Failure, load_json, plain_build_only, run_script, scan_sanitizers, start_daemons, test,
                     wait_for_socket, write_script)


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


def kernel_exit_says_group_dead():
    for root in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        try:
            with open(f"{root}/events/sched/sched_process_exit/format") as f:
                return "group_dead" in f.read()
        except OSError:
            pass
    return False


@test
def cpu_of_threads_killed_at_exit(ctx):
    """20 processes that end while several threads run (the kernel kills them as the process
    ends, exiting at once on both CPUs): CPU time matches wait4 for each. Half are spinexit
    (the main thread exits beside spinning threads), half closeexit (a thread ends the
    process and then, in its own exit path, frees a 256 MiB memfd while the main thread it
    killed is usually the last to leave)."""
    n = 20
    loop = "; ".join(f"{ctx.helper('measure')} {ctx.path(f'm{i}.json')} -- " +
                     (f"{ctx.helper('spinexit')} {1 + i % 4} 60" if i % 2 else f"{ctx.helper('closeexit')} 256")
                     for i in range(n))
    ctx.tracer_run(["bash", "-c", loop], expect=0)
    run = ctx.latest_run()
    off, short_ms = [], []
    for i in range(n):
        t = load_json(ctx.path(f"m{i}.json"))
        cpu = ctx.one("SELECT cpu_user_ns + cpu_sys_ns FROM processes WHERE run_id = ? AND pid = ? AND "
                      "exe LIKE '%exit'", run, t["pid"])
        truth = t["utime_ns"] + t["stime_ns"]
        # Every thread still exiting when the group's totals are read sends its own exit tail,
        # so what it ran after that (a tick's lag, its exit path) is counted as wait4 counts
        # it: 1 ms + 1%. When only the last thread sent one, one CI run read a spinexit 16 ms
        # short, and here about one closeexit in six read 17 ms short.
        if cpu is not None:
            short_ms.append((truth - cpu) / 1e6)
        if cpu is None or abs(cpu - truth) > 1_000_000 + truth // 100:
            off.append((t["pid"], i, "spinexit" if i % 2 else "closeexit", round(truth / 1e6, 1),
                        cpu and round(cpu / 1e6, 1)))
    if short_ms:
        print(f"  tracer's CPU short of wait4's by {min(short_ms):.1f} .. {max(short_ms):.1f} ms")
    # Seen in 1 of 16 runs under load and once in CI (4.0 ms short, a tick) while the ending
    # thread's note was read again after its totals: the counters say whether a tail was lost.
    stats = (ctx.query("SELECT tails_unmatched, late_events, unmatched_exits, lost_processes "
                       "FROM aggregator_stats") +
             ctx.query("SELECT kernel_drops, kernel_drops_exit, collector_drops, seq_gaps "
                       "FROM collector_stats")) if off else []
    ctx.check(not off, f"{len(off)} of {n} processes' CPU off by more than 1 ms + 1% "
              f"(pid, index, program, wait4 ms, tracer ms): {off[:6]}; aggregator_stats {stats}")
    # Where the kernel's exit tracepoint says which thread ended the group (group_dead,
    # Linux 6.16), that thread alone sends the process's exit. Before, a thread ending
    # beside it sent a second one in about 1 of 6 such exits here, counted as dropped
    # (late_events), and its exit note could count a thread's time twice.
    if kernel_exit_says_group_dead():
        late = ctx.one("SELECT coalesce(max(late_events), 0) FROM aggregator_stats")
        ctx.check(late == 0, f"{late} exits arrived after their process's exit (late_events)")


@test
def cpu_includes_the_exit_path(ctx):
    """CPU of each process against wait4, exit path included: a process that leaves 1 GiB to
    be freed at exit (hundreds of ms after the exit tracepoint), and 200 processes of about
    3 ms each. Within 1 ms or 1% each, and the 200 together within 1%."""
    ctx.tracer_run([ctx.helper("measure"), ctx.path("big.json"), "--", ctx.helper("bigfree"), "1024"],
                   expect=0)
    t = load_json(ctx.path("big.json"))
    truth = t["utime_ns"] + t["stime_ns"]
    cpu, peak = ctx.one("SELECT cpu_user_ns + cpu_sys_ns, max_rss_kb FROM processes WHERE run_id = ? AND "
                        "pid = ? AND exe LIKE '%/bigfree'", ctx.latest_run(), t["pid"])
    ctx.close(cpu, truth, max(1_000_000, truth // 100), "CPU of a process freeing 1 GiB at exit (ns)")
    # The peak stays the program's own: what it touched, not less for what exit freed.
    ctx.check(peak >= 1024 * 1024, f"peak RSS {peak} KiB for 1 GiB touched")

    n = 200
    loop = "; ".join(f"{ctx.helper('measure')} {ctx.path(f's{i}.json')} -- {ctx.helper('cpuburn')} 3"
                     for i in range(n))
    ctx.tracer_run(["bash", "-c", loop], expect=0)
    run = ctx.latest_run()
    rows = dict(ctx.query("SELECT pid, cpu_user_ns + cpu_sys_ns FROM processes WHERE run_id = ? AND "
                          "exe LIKE '%/cpuburn'", run))
    off, sum_truth, sum_ours = [], 0, 0
    for i in range(n):
        t = load_json(ctx.path(f"s{i}.json"))
        truth = t["utime_ns"] + t["stime_ns"]
        ours = rows.get(t["pid"])
        sum_truth += truth
        sum_ours += ours or 0
        if ours is None or abs(ours - truth) > max(1_000_000, truth // 100):
            off.append((t["pid"], truth, ours))
    ctx.check(not off, f"{len(off)} of {n} short processes off wait4 by more than 1 ms or 1% "
              f"(pid, wait4 ns, tracer ns): {off[:5]}")
    ctx.close(sum_ours, sum_truth, sum_truth // 100, f"CPU of {n} short processes together (ns)")
    print(f"  200 short processes: tracer {sum_ours / 1e6:.1f} ms, wait4 {sum_truth / 1e6:.1f} ms")


@test
def step_and_run_totals_hold_every_image(ctx):
    """A script whose steps are a program that re-execs itself four times and a thread that
    execs after burning CPU: each step's and the run's CPU hold every image of every
    process, against wait4 of each step's work (measure), and every verb reads the same
    total (runs --json, show --json)."""
    run = run_script(ctx, "images.sh", "set -e\n"
                     f"{ctx.helper('measure')} {ctx.path('a.json')} -- {ctx.helper('reexec')} 4 120\n"
                     f"{ctx.helper('measure')} {ctx.path('b.json')} -- "
                     f"{ctx.helper('threadexec')} {ctx.helper('cpuburn')} 150\n")
    steps = ctx.query("SELECT id, cpu_ns, processes FROM steps WHERE run_id = ? ORDER BY start_ns", run)
    ctx.check(len(steps) == 2, f"two steps, one per line of the script: {steps}")
    for (step, cpu, procs), name in zip(steps, ("a.json", "b.json")):
        t = load_json(ctx.path(name))
        truth = t["utime_ns"] + t["stime_ns"]
        # The step also holds measure itself: its own rows, a millisecond or two.
        own = ctx.one("SELECT coalesce(sum(cpu_user_ns + cpu_sys_ns), 0) FROM processes "
                      "WHERE step_id = ? AND exe LIKE '%/measure'", step)
        # wait4 counts the exit path after our exit tracepoint (up to a tick per thread):
        # 9 ms + 1%.
        ctx.close(cpu - own, truth, 9_000_000 + truth // 100, f"step {name[0]} CPU minus measure's (ns)")
        ctx.check(procs == 2, f"step {name[0]}: two processes (measure and its child), "
                  f"however many images: {procs}")
    rows = ctx.one("SELECT sum(cpu_user_ns + cpu_sys_ns) FROM processes WHERE run_id = ?", run)
    run_cpu = ctx.one("SELECT cpu_ns FROM runs WHERE id = ?", run)
    ctx.check(run_cpu == rows, f"the run's CPU is the sum over its rows (every image): {run_cpu} vs {rows}")
    listed = json.loads(subprocess.run([ctx.bin("tracer"), "runs", "--db", ctx.db, "--json"],
                                       capture_output=True, text=True, check=True).stdout)
    shown = json.loads(subprocess.run([ctx.bin("tracer"), "show", "--db", ctx.db, "--json", str(run)],
                                      capture_output=True, text=True, check=True).stdout)
    ctx.check(listed["runs"][0]["cpu_ns"] == run_cpu, f"tracer runs reads the run's CPU: {listed['runs'][0]}")
    ctx.check(json.dumps(run_cpu) in json.dumps(shown.get("run", shown)),
              f"tracer show reads the same run CPU {run_cpu}")


def orphan_script(ctx):
    """A script that leaves a CPU burner running past its own end (setsid: out of its
    process group, not waited for), recording the burner's pid; measure reports what the
    burner used, from wait4, when it ends."""
    return write_script(ctx, "orphan.sh",
                        f"setsid {ctx.helper('measure')} {ctx.path('orphan.json')} -- "
                        f"{ctx.helper('cpuburn')} 400 </dev/null >/dev/null 2>&1 &\n"
                        f"echo $! > {ctx.path('orphan.pid')}\n"
                        f"{ctx.helper('cpuburn')} 120\n")


def wait_for_file(path, timeout=30):
    end = time.time() + timeout
    while not os.path.exists(path) or os.path.getsize(path) == 0:
        if time.time() > end:
            raise Failure(f"{path} never written")
        time.sleep(0.05)


def show_json(ctx, db, run):
    return json.loads(subprocess.run([ctx.bin("tracer"), "show", "--db", db, "--json", str(run)],
                                     capture_output=True, text=True, check=True).stdout)


@test
def a_process_that_outlives_tracer_runs_own_daemons_is_named_not_counted(ctx):
    """tracer run's own daemons stop with the command: a process the command left running
    is named in the summary, show and explain as not counted, and the run's CPU is the
    command's own (wait4 of the script, which never waited for the orphan)."""
    script = orphan_script(ctx)
    p = ctx.tracer_run([ctx.helper("measure"), ctx.path("cmd.json"), "--", script], "--run", "orphan",
                       expect=0)
    orphan_pid = int(open(ctx.path("orphan.pid")).read())
    run = ctx.one("SELECT id FROM runs WHERE name = 'orphan'")
    note = [line for line in p.stderr.splitlines() if "outlived the command" in line]
    ctx.check(len(note) == 1 and f"pid {orphan_pid} (measure)" in note[0] and "not counted" in note[0],
              f"the summary names the orphan pid {orphan_pid} as not counted: {note}\n{p.stderr[-2000:]}")
    cmd = load_json(ctx.path("cmd.json"))
    truth = cmd["utime_ns"] + cmd["stime_ns"]
    shown = show_json(ctx, ctx.db, run)
    totals = shown["totals"]
    # The orphan and its burner (two processes) are still running; measure of the
    # script (outside wait4's account of the script) adds a millisecond or two.
    ctx.check(totals["running_processes"] == 2 and
              orphan_pid in [u["pid"] for u in totals["unfinished"]],
              f"show --json counts the orphan (pid {orphan_pid}) and its child as running: {totals}")
    ctx.close(totals["cpu_ns"], truth, 10_000_000 + truth // 50, "run CPU, the command's own (ns)")
    wait_for_file(ctx.path("orphan.json"))
    text = subprocess.run([ctx.bin("tracer"), "show", "--db", ctx.db, str(run)],
                          capture_output=True, text=True, check=True).stdout
    ctx.check("2 processes outlived the command" in text and "not counted" in text,
              f"show, after the daemons stopped, says the orphans are not counted:\n{text[:1500]}")
    explained = subprocess.run([ctx.bin("tracer"), "explain", "--db", ctx.db, str(run)],
                               capture_output=True, text=True, check=True).stdout
    ctx.check("Not counted: 2 processes outlived the command" in explained,
              f"explain says what its numbers leave out:\n{explained[:1500]}")


@test
def a_process_that_outlives_the_command_is_counted_when_it_ends(ctx):
    """Under long-lived daemons the orphan is watched to its end: first named as running
    (counted once it ends), then the run's CPU holds it, against wait4 of the script plus
    the orphan's own wait4 account (measure)."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    start_daemons(ctx, sock, db)
    script = orphan_script(ctx)
    p, run = ctx.daemon_run(sock, db, [ctx.helper("measure"), ctx.path("cmd.json"), "--", script])
    ctx.check(p.returncode == 0 and run, f"tracer run: {p.returncode} {p.stderr[-1500:]}")
    note = [line for line in p.stderr.splitlines() if "outlived the command" in line]
    ctx.check(len(note) == 1 and "counted once they end" in note[0],
              f"the summary says the orphans are counted once they end: {note}")
    wait_for_file(ctx.path("orphan.json"))
    end = time.time() + 15
    while show_json(ctx, db, run)["totals"]["running_processes"] and time.time() < end:
        time.sleep(0.1)
    totals = show_json(ctx, db, run)["totals"]
    ctx.check(totals["running_processes"] == 0, f"the orphan's end recorded: {totals}")
    cmd, orphan = load_json(ctx.path("cmd.json")), load_json(ctx.path("orphan.json"))
    truth = cmd["utime_ns"] + cmd["stime_ns"] + orphan["utime_ns"] + orphan["stime_ns"]
    # Two wait4 accounts, each up to a tick per thread after our exit tracepoint, plus the
    # orphan's measure itself (outside both accounts, a millisecond or two): 15 ms + 2%.
    ctx.close(totals["cpu_ns"], truth, 15_000_000 + truth // 50, "run CPU with the orphan (ns)")
    ctx.check(ctx.one("SELECT cpu_ns FROM runs WHERE id = ?", run, db=db) == totals["cpu_ns"],
              "the runs row holds the same CPU")
    text = subprocess.run([ctx.bin("tracer"), "show", "--db", db, str(run)],
                          capture_output=True, text=True, check=True).stdout
    ctx.check("outlived" not in text, f"no note once every process ended:\n{text[:800]}")


@test
def a_thread_that_execs_is_the_same_process(ctx):
    """A second thread uses 150 ms of CPU and execs cpuburn (to 300 ms in all) while the leader
    sleeps: one process (the kernel gives the thread the leader's pid), two images, no row for
    the thread; the images' CPU sums to wait4's, split at the exec."""
    out = ctx.path("m.json")
    ctx.tracer_run([ctx.helper("measure"), out, "--", ctx.helper("threadexec"), ctx.helper("cpuburn"), "150"],
                   expect=0)
    t = load_json(out)
    rows = ctx.query("SELECT exe, state, exit_code, cpu_user_ns + cpu_sys_ns FROM processes "
                     "WHERE run_id = ? AND pid = ? ORDER BY id", ctx.latest_run(), t["pid"])
    ctx.check([r[:3] for r in rows] == [(ctx.helper("threadexec"), "exec", None), (ctx.helper("cpuburn"), "exited", 0)],
              f"the pid's rows: {rows}")
    threads = ctx.query("SELECT pid, exe FROM processes WHERE run_id = ? AND pid > ? AND pid <= ?",
                        ctx.latest_run(), t["pid"], t["pid"] + 2)
    ctx.check(threads == [], f"no row for the thread: {threads}")
    if len(rows) == 2:
        before, after = rows[0][3], rows[1][3]
        # The thread execs once the process's clock reads 150 ms; exec itself costs well under 25 ms.
        ctx.check(150_000_000 <= before <= 175_000_000, f"CPU before the exec {before / 1e6:.1f} ms, "
                  "expected 150..175")
        total_truth = t["utime_ns"] + t["stime_ns"]
        ctx.close(before + after, total_truth, 5_000_000 + total_truth // 100, "CPU of both images (ns)")


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
    rows = ctx.query("SELECT signal, exit_code, state FROM processes WHERE run_id = ? "
                     "AND exe LIKE '%/sleep' AND argv LIKE '%30%'", ctx.latest_run())
    if len(rows) != 1:
        # Seen once in a full local run beside other tests (not in 28 runs since): say what was held.
        raise Failure(f"one sleep 30 row expected, got {rows}; runs "
                      f"{ctx.query('SELECT id, name, status, exit_code, signal FROM runs')}; processes "
                      f"{ctx.query('SELECT run_id, pid, exe, argv, state, signal FROM processes')}\n{p.stderr[-800:]}")
    sig, code, state = rows[0]
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
    script = (f"cd '{work}' && /bin/echo {' '.join(long_args)} > /dev/null && (sleep 0.05; true) && "
              f"/bin/true one 'two words' && cd /dev/shm && /bin/true mounts")
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
    check_cwd_across_mounts(ctx, rows)


def check_cwd_across_mounts(ctx, rows):
    """/dev/shm is a tmpfs on the devtmpfs /dev on /: the kernel-side path walk
    must climb through two mount points to spell it."""
    ctx.check(os.path.ismount("/dev/shm"), "/dev/shm is a mount point here")
    shm = [r[6] for r in rows if r[4] == "/usr/bin/true" and r[5] == '["/bin/true","mounts"]']
    ctx.check(shm == ["/dev/shm"], f"cwd across mount points: {shm}")


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
    """1000 fork+exec of /bin/true on 2 workers, as fast as they go: all 1000 recorded,
    nothing dropped (make bench measures 6000)."""
    n = 1000
    ctx.tracer_run([ctx.helper("storm"), str(n), "2", "/bin/true"], expect=0)
    run = ctx.latest_run()
    got = ctx.one("SELECT count(*) FROM processes WHERE run_id = ? AND exe = '/usr/bin/true' "
                  "AND exit_code = 0", run)
    ctx.check(got == n, f"recorded {got} of {n} /bin/true processes")
    drops = ctx.one("SELECT sum(kernel_drops + collector_drops + seq_gaps) FROM collector_stats")
    ctx.check(drops == 0, f"drops and gaps: {drops}")
    # What the rows take on disk, by SQLite's own page accounting (dbstat): rows
    # written newest first split every page they filled into two half-empty
    # ones (52% used, twice the disk and WAL writes); in id order they are
    # appended. 80% leaves room for the rows rewritten in place.
    used, size = ctx.query("SELECT sum(pgsize - unused), sum(pgsize) FROM dbstat "
                           "WHERE name = 'processes' AND pagetype = 'leaf'")[0]
    ctx.check(used >= 0.8 * size, f"the processes table's leaf pages are {100 * used / size:.0f}% "
              f"used ({size // 4096} pages); want at least 80%")


@test
def kernel_threads_are_not_processes(ctx):
    """Mounting an ext4 image starts a journal kernel thread (jbd2/loopN-8, a child of
    kthreadd) and unmounting ends it. Kernel threads are not workloads: on tp_btf and
    on classic tracepoints neither its fork nor its exit makes a row (nor is counted as
    lost), while the mount and umount processes beside it are recorded. Ground truth:
    the thread seen in /proc while mounted. The journal thread waits on I/O (synced
    writes), so the kernel side keeps an I/O-wait accumulator for its pid; a
    /bin/true started on that pid after it ended (ns_last_pid) must not inherit it:
    a true from the page cache waits on no I/O."""
    if not os.path.exists("/dev/loop-control"):
        raise Failure("this test needs loop devices (/dev/loop-control)")
    image, mnt = ctx.path("ext4.img"), ctx.path("mnt")
    os.mkdir(mnt)
    with open(image, "wb") as f:
        f.truncate(16 << 20)
    subprocess.run(["mkfs.ext4", "-q", "-F", image], check=True)
    for extra in ((), ("--force-tracepoints",)):
        sock, db = ctx.path("s.sock"), ctx.path(f"kthread{len(extra)}.db")
        agg, col = start_daemons(ctx, sock, db, extra_col=extra)
        since = time.time_ns()
        subprocess.run(["mount", "-o", "loop", image, mnt], check=True)
        journal = [pid for pid in os.listdir("/proc") if pid.isdigit() and
                   proc_comm(pid).startswith("jbd2/loop")]
        for i in range(4):
            subprocess.run(["dd", "if=/dev/zero", f"of={mnt}/f{i}", "bs=64k", "count=16", "conv=fsync",
                            "status=none"], check=True)
        subprocess.run(["umount", mnt], check=True)
        ctx.check(len(journal) == 1, f"{extra}: one journal thread while mounted: {journal}")
        journal_pid = int(journal[0]) if journal else -1
        reused = start_on_pid(journal_pid, "/bin/true") if journal else None
        time.sleep(0.5)
        ctx.stop(col)
        ctx.stop(agg)
        ctx.check(reused or not journal, f"{extra}: a process started on the journal thread's pid")
        if reused:
            iowait = ctx.query("SELECT iowait_ns FROM processes WHERE pid = ? AND exe = '/usr/bin/true' "
                               "AND start_ns >= ?", reused, since, db=db)
            ctx.check(iowait == [(0,)], f"{extra}: a true on the journal thread's pid inherits no I/O wait: {iowait}")
        kthreads = ctx.query("SELECT pid, comm, state FROM processes WHERE (start_ns >= ? OR end_ns >= ?) "
                             "AND (ppid = 2 OR (pid = ? AND exe IS NULL))",
                             since, since, journal_pid, db=db)
        ctx.check(kthreads == [], f"{extra}: no rows for kernel threads: {kthreads}")
        tools = {r[0] for r in ctx.query("SELECT exe FROM processes WHERE start_ns >= ?", since, db=db)}
        ctx.check({"/usr/bin/mount", "/usr/bin/umount"} <= tools, f"{extra}: mount and umount recorded: {tools}")
        lost = ctx.one("SELECT kernel_drops FROM collector_stats", db=db)
        ctx.check(lost == 0, f"{extra}: nothing lost: {lost}")


@test
def threads_are_not_processes(ctx):
    """A process whose four threads each start three threads at the same moment and fork
    one child that execs true: on both probe paths it has its own row and one per child,
    and its 16 threads have none (the classic fork tracepoint fires for threads too and
    names no child task). Ground truth: the child pids the program wrote; all exit 0."""
    for extra in ((), ("--force-tracepoints",)):
        sock, db = ctx.path("s.sock"), ctx.path(f"threads{len(extra)}.db")
        agg, col = start_daemons(ctx, sock, db, extra_col=extra)
        out = ctx.path(f"children{len(extra)}.txt")
        p = subprocess.Popen([ctx.helper("threadtree"), out])
        rc = p.wait(timeout=60)
        time.sleep(0.5)
        ctx.stop(col)
        ctx.stop(agg)
        ctx.check(rc == 0, f"{extra}: threadtree and its children exited 0 (got {rc})")
        children = sorted(int(line) for line in open(out))
        ctx.check(len(children) == 4, f"{extra}: four children made: {children}")
        own = ctx.query("SELECT exe, state FROM processes WHERE pid = ?", p.pid, db=db)
        ctx.check(own == [(ctx.helper("threadtree"), "exited")], f"{extra}: one row for the process: {own}")
        made = ctx.query("SELECT pid, exe, state FROM processes WHERE ppid = ? ORDER BY pid, id", p.pid, db=db)
        ctx.check(sorted({r[0] for r in made}) == children,
                  f"{extra}: rows under it are its children {children}, no threads: {made}")
        trues = sorted(r[0] for r in made if r[1] == "/usr/bin/true" and r[2] == "exited")
        ctx.check(trues == children, f"{extra}: each child recorded running true, exited: {made}")


@test
def io_wait_of_an_exit_path_is_not_inherited(ctx):
    """A process that writes to a block device and exits without closing it waits for
    the device's flush in its exit path (the last close syncs it), after its exit was
    recorded. That wait is not reported, and a process the kernel later gives the same
    pid must not inherit it: a /bin/true started on that pid (ns_last_pid) from the page
    cache waits on no I/O. Before, 15-40 ms of the writer's I/O wait stayed in the
    kernel's accumulator for its pid, for the next process with that pid to report."""
    if not os.path.exists("/dev/loop-control"):
        raise Failure("this test needs loop devices (/dev/loop-control)")
    image = ctx.path("blk.img")
    with open(image, "wb") as f:
        f.truncate(256 << 20)
    dev = subprocess.run(["losetup", "-f", "--show", image], capture_output=True, text=True, check=True).stdout.strip()
    sock, db = ctx.path("s.sock"), ctx.path("exitio.db")
    writer = ("import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY); b = bytes(1 << 20)\n"
              "for _ in range(64): os.write(fd, b)\nos._exit(0)")
    try:
        agg, col = start_daemons(ctx, sock, db)
        since = time.time_ns()
        reused = []
        with open("/proc/sys/kernel/ns_last_pid") as f, open("/proc/sys/kernel/pid_max") as g:
            base, pid_max = int(f.read()) + 1000, int(g.read())
        if base + 500 >= pid_max:
            base = 1000
        for i in range(4):
            # Rounds far apart in pid space, so no round's processes take another's pids.
            with open("/proc/sys/kernel/ns_last_pid", "w") as f:
                f.write(str(base + 100 * i))
            p = subprocess.Popen(["python3", "-c", writer, dev])
            ctx.check(p.wait(timeout=60) == 0, "the writer exited 0")
            reused.append(start_on_pid(p.pid, "/bin/true"))
        time.sleep(0.5)
        ctx.stop(col)
        ctx.stop(agg)
    finally:
        subprocess.run(["losetup", "-d", dev])
    reused = [pid for pid in reused if pid]
    ctx.check(len(reused) >= 2, f"processes started on the writers' pids: {reused}")
    for pid in reused:
        # Ours by ancestry (this test forked it): another user's true may take the pid later.
        iowait = ctx.query("SELECT iowait_ns FROM processes WHERE pid = ? AND exe = '/usr/bin/true' "
                           "AND start_ns >= ? AND ppid = ?", pid, since, os.getpid(), db=db)
        ctx.check(iowait == [(0,)], f"a true on a writer's pid {pid} inherits no I/O wait: {iowait}")


def start_on_pid(pid, program):
    """Runs program (from the page cache: run once first) as the given pid, which must
    be free, by setting the kernel's last pid just below it; returns the pid if that
    worked (another fork can take it first), else None."""
    subprocess.run([program], check=True)
    for _ in range(5):
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(pid - 1))
        p = subprocess.Popen([program])
        p.wait()
        if p.pid == pid:
            return pid
    return None


def proc_comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


@test
def fallbacks_tracepoints_and_perf_buffers(ctx):
    """The classic-tracepoint and perf-buffer paths (for kernels without tp_btf or ring
    buffers) record the same things: exit code, exec in place, peak RSS, no loss."""
    check_probe_fallback(ctx, ("--force-tracepoints", "--force-perfbuf"),
                         ("tracepoint: sched_process_fork", "events via perf buffers"))


@test
def exec_on_its_classic_tracepoint_beside_tp_btf(ctx):
    """Linux 5.5-6.1 have tp_btf but not the bpf_rdonly_cast kfunc that exec_btf's path
    walk needs: exec then runs on its classic tracepoint beside tp_btf fork and exit."""
    check_probe_fallback(ctx, ("--force-no-kfunc",),
                         ("tp_btf: sched_process_fork,sched_process_exit", "; tracepoint: sched_process_exec"))


def check_probe_fallback(ctx, extra_col, collector_says):
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db, extra_col=extra_col)
    hog = ctx.path("hog.json")
    p = subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", "fb", "--",
                        "bash", "-c", f"{ctx.helper('storm')} 300 2 /bin/true; (cd /dev/shm && /bin/true mounts); "
                        f"exec {ctx.helper('memhog')} 64 6 {hog}"],
                       capture_output=True, text=True, timeout=120)
    ctx.check(p.returncode == 6, f"exit {p.returncode}: {p.stderr}")
    if "not every event reached" in p.stderr:
        # Seen twice in CI on this path (events of the command's end never committed, nothing
        # counted lost): what the stream looked like then, for the next one to read.
        stream = ctx.query("SELECT last_seq, watermark_boot_ns, frames_received, duplicate_frames, "
                           "events_received, last_seen_ns FROM collector_stats", db=db)
        agg_stats = ctx.query("SELECT * FROM aggregator_stats", db=db)
        boot_now = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
        ctx.check(False, f"tracer run waited in vain: {p.stderr.strip()[:300]}; stream (last_seq, "
                         f"watermark, frames, duplicates, events, last_seen): {stream}; boot time now "
                         f"{boot_now}; aggregator_stats: {agg_stats}")
    # First, so that a failure below says whether events were counted lost.
    loss = ctx.one("SELECT kernel_drops, kernel_drops_other, collector_drops, seq_gaps, decode_errors FROM collector_stats", db=db)
    ctx.check(sum(loss) == 0, f"no loss (kernel, perf buffers, collector, gaps, undecodable): {loss}")
    run = ctx.one("SELECT id FROM runs WHERE name = 'fb'", db=db)
    ctx.check(ctx.one("SELECT count(*) FROM processes WHERE run_id = ? AND exe = '/usr/bin/true' "
                      "AND argv = '[\"/bin/true\"]'", run, db=db) == 300, "all 300 storm processes")
    check_cwd_across_mounts(ctx, ctx.query("SELECT id, parent_id, pid, ppid, exe, argv, cwd FROM processes "
                                           "WHERE run_id = ?", run, db=db))
    rss, code = ctx.one("SELECT max_rss_kb, exit_code FROM processes WHERE run_id = ? AND exe LIKE '%/memhog'", run, db=db)
    ctx.close(rss, load_json(hog)["vmhwm_kb"], 1024, "peak RSS via fallbacks")
    ctx.check(code == 6, f"exec'd image exit code {code}")
    rc_col, err = ctx.stop(col)
    ctx.check(all(s in err for s in collector_says),
              f"collector reported the fallback probes ({collector_says})")
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
    # Outside any tracer run (it may still belong to a run the aggregator recognised, e.g.
    # when the test suite itself runs from a script such as .ci/run).
    ctx.check(ctx.one("SELECT count(*) FROM processes p LEFT JOIN runs r ON r.id = p.run_id "
                      "WHERE p.argv = '[\"/bin/sleep\",\"0.11\"]' "
                      "AND (r.id IS NULL OR r.source != 'explicit')", db=db) == 1,
              "outside process recorded, not in the tracer run")
    rc_col, _ = ctx.stop(col)
    rc_agg, _ = ctx.stop(agg)
    ctx.check(rc_col == 0 and rc_agg == 0, f"exit codes collector {rc_col} aggregator {rc_agg}")
    ctx.check(ctx.one("SELECT final FROM collector_stats", db=db) == 1, "final frame committed")


@test
@plain_build_only("LeakSanitizer's check at the ASan launcher's exit clones a task without "
                  "CLONE_THREAD: the kernel shows a child process, taken for the command")
def a_tracer_run_that_starts_nothing_leaves_no_run(ctx):
    """Under long-lived daemons, a tracer run that refuses (a --db that is not the daemons',
    a command that does not exist) or is killed before starting its command ran nothing: the
    daemons, which saw its launcher start, keep no run for it (before, each stayed `running`
    forever in tracer runs); a run that does start is still recorded."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db)
    refused = subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", ctx.path("other.db"),
                              "--run", "wrongdb", "--", "true"], capture_output=True, text=True, timeout=60)
    ctx.check(refused.returncode == 1 and "not " in refused.stderr,
              f"a --db that is not the daemons' is refused: {refused.returncode} {refused.stderr}")
    missing = subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", "nocmd", "--",
                              "/no/such/command"], capture_output=True, text=True, timeout=60)
    ctx.check(missing.returncode == 127 and "nothing recorded" in missing.stderr,
              f"a missing command: 127, nothing recorded: {missing.returncode} {missing.stderr}")
    p, run = ctx.daemon_run(sock, db, ["/bin/sh", "-c", "exit 3"], "--run", "started")
    ctx.check(p.returncode == 3 and run, f"a run that starts is recorded: {p.returncode} {p.stderr[-800:]}")
    time.sleep(0.5)  # past a commit of the daemons'
    names = [r[0] for r in ctx.query("SELECT name FROM runs ORDER BY id", db=db)]
    ctx.check("wrongdb" not in names and "nocmd" not in names and "started" in names,
              f"runs kept: only the one that started a command: {names}")
    # The daemons record the whole host: other runs (other users', a CI script's) are not ours.
    listed = subprocess.run([ctx.bin("tracer"), "runs", "--db", db, "--json"], capture_output=True, text=True,
                            timeout=60)
    ours = [r for r in json.loads(listed.stdout or "{}").get("runs", [])
            if r.get("name") in ("wrongdb", "nocmd", "started")]
    ctx.check(len(ours) == 1 and ours[0].get("status") not in ("running", "unknown")
              and ours[0].get("end_ns") is not None,
              f"tracer runs lists this test's one run, ended, none left running (or unknown): {ours}")
    ctx.stop(col)
    ctx.stop(agg)


@test
def a_run_whose_command_ended_unwatched_ends_with_its_launcher(ctx):
    """The collector is killed while a tracer run's command runs, and a new one starts after the
    command ended: nobody saw the command's exit (its row is lost), but the new collector sees
    tracer run exit with the command's status (5, which tracer run passes on), so the run ends
    failed with exit 5 instead of staying `running` forever."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db)
    launcher = subprocess.Popen([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", "unseen-end",
                                 "--", "sh", "-c", "sleep 1.2; exit 5"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.4)
    col.kill()
    col.wait(timeout=10)
    time.sleep(1.4)  # the command ends meanwhile, unwatched
    col = ctx.spawn([ctx.bin("tracer-collector"), "--socket", sock, "--user", "nobody"])
    _, err = launcher.communicate(timeout=90)
    scan_sanitizers(ctx, err, "tracer run")
    ctx.check(launcher.returncode == 5, f"tracer run passes the command's exit 5: {launcher.returncode} {err[-600:]}")
    end = time.time() + 15
    row = None
    while time.time() < end:
        row = ctx.query("SELECT status, exit_code, end_ns IS NOT NULL FROM runs WHERE name = 'unseen-end'", db=db)
        if row and row[0][0] != "running":
            break
        time.sleep(0.2)
    ctx.check(row and row[0] == ("failed", 5, 1), f"the run ended failed with exit 5: {row}")
    lost = ctx.query("SELECT state FROM processes p JOIN runs r ON r.command_process_id = p.id "
                     "WHERE r.name = 'unseen-end'", db=db)
    ctx.check(lost == [("lost",)], f"the command itself ended unseen: {lost}")
    ctx.stop(col)
    ctx.stop(agg)


@test
def a_killed_tracer_run_leaves_its_run_to_the_command(ctx):
    """tracer run is SIGKILLed while its command runs on: the run is not ended with the
    launcher's death; it ends when the command does, with the command's own exit status."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db)
    launcher = subprocess.Popen([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", "outlives-launcher",
                                 "--", "sh", "-c", "sleep 2; exit 6"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    launcher.kill()
    launcher.wait(timeout=30)  # the command, its child, runs on
    time.sleep(0.5)
    mid = ctx.query("SELECT status FROM runs WHERE name = 'outlives-launcher'", db=db)
    ctx.check(mid == [("running",)], f"the command still runs, so does the run: {mid}")
    end = time.time() + 15
    row = None
    while time.time() < end:
        row = ctx.query("SELECT status, exit_code FROM runs WHERE name = 'outlives-launcher'", db=db)
        if row and row[0][0] != "running":
            break
        time.sleep(0.2)
    ctx.check(row == [("failed", 6)], f"the run ended with its command's exit 6: {row}")
    kinds = [k for (k,) in ctx.query("SELECT s.kind FROM signals s JOIN runs r ON r.id = s.run_id "
                                     "WHERE r.name = 'outlives-launcher' AND s.severity = 'critical'", db=db)]
    ctx.check("killed" not in kinds, f"no critical signal for the launcher's death: {kinds}")
    ctx.stop(col)
    ctx.stop(agg)


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
    """Garbage, truncated, oversize and invalid frames (a time that would overflow the wall
    clock) are rejected and counted; the daemon lives;
    an unprivileged user is refused at connect time."""
    sock, db = ctx.path("s.sock"), ctx.path("agg.db")
    agg = ctx.spawn([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db, "--user", "nobody",
                     "--socket-mode", "0666", "--collector-user", "root"])
    wait_for_socket(sock)
    send = ctx.helper("framesend")
    for mode, extra in (("garbage", ["50"]), ("truncated", []), ("badevent", []), ("oversize", []),
                        ("badclock", [])):
        r = subprocess.run([send, sock, mode, *extra], capture_output=True, text=True, timeout=30)
        ctx.check(r.returncode == 0, f"framesend {mode}: {r.returncode} {r.stderr}")
    r = subprocess.run([send, sock, "valid"], capture_output=True, text=True, timeout=30)
    if r.returncode != 0 or "acked" not in r.stdout:
        _, log = ctx.stop(agg)
        raise Failure(f"valid frame not acked after garbage: {r.stdout} {r.stderr}\n"
                      f"aggregator said:\n{log[-3000:]}")
    ctx.check(agg.poll() is None, "aggregator still running")
    # A local user who can reach the socket file is still refused by credentials.
    nobody = pwd.getpwnam("nobody")
    r = subprocess.run(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups",
                        send, sock, "valid"], capture_output=True, text=True, timeout=30)
    ctx.check(r.returncode != 0, f"unprivileged sender must not be acked: {r.returncode} {r.stdout}")
    time.sleep(1.3)
    bad, refused = ctx.one("SELECT bad_frames, refused_peers FROM aggregator_stats ORDER BY id DESC LIMIT 1", db=db)
    ctx.check(bad == 54, f"bad frames counted: {bad} (expected 50 garbage + 1 truncated + 1 bad event "
              "+ 1 of 12 MiB + 1 with a start time past 2^62 ns)")
    ctx.check(refused >= 1, f"refused peers counted: {refused}")
    ctx.check(ctx.one("SELECT count(*) FROM processes WHERE exe = '/usr/bin/framesend-test'", db=db) == 1,
              "the valid frame's process was stored")
    rc, _ = ctx.stop(agg)
    ctx.check(rc == 0, f"aggregator exit {rc}")


@test
def a_wall_clock_step_changes_no_process_duration(ctx):
    """A process that starts before a wall-clock step and ends after it keeps its start's clock:
    duration, sample time and end from the boot clock (exact); a process starting after the step
    gets the new clock; the step is counted (framesend clockstep: offsets 10000 s and 6400 s)."""
    sock, db = ctx.path("s.sock"), ctx.path("agg.db")
    agg = ctx.spawn([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db, "--user", "nobody"])
    wait_for_socket(sock)
    r = subprocess.run([ctx.helper("framesend"), sock, "clockstep"], capture_output=True, text=True, timeout=30)
    ctx.check(r.returncode == 0 and "acked" in r.stdout, f"framesend clockstep: {r.returncode} {r.stdout} {r.stderr}")
    s = 10**9
    start_boot, offset, step = 1000 * s, 10000 * s, -3600 * s
    rows = ctx.query("SELECT pid, start_ns, end_ns, state FROM processes WHERE pid IN (4300100, 4300101) "
                     "ORDER BY pid", db=db)
    ctx.check(len(rows) == 2, f"both processes stored: {rows}")
    (_, start, end, state), (_, start2, _, _) = rows
    ctx.check(start == start_boot + offset and state == "exited", f"first process: start {start}, {state}")
    ctx.check(end - start == 2 * s, f"duration across the step: {(end - start) / s} s, expected 2 s")
    sample = ctx.one("SELECT ts_ns FROM samples WHERE process_id = "
                     "(SELECT id FROM processes WHERE pid = 4300100)", db=db)
    ctx.check(sample - start == s, f"sample at {(sample - start) / s} s after the start, expected 1 s")
    ctx.check(start2 == start_boot + 2500 * 10**6 + offset + step,
              f"a process started after the step has the new clock: {start2}")
    steps, last = ctx.one("SELECT clock_steps, last_clock_step_ns FROM aggregator_stats "
                          "ORDER BY id DESC LIMIT 1", db=db)
    ctx.check(steps == 1 and last == step, f"clock steps {steps}, last {last}")
    text = subprocess.run([ctx.bin("tracer"), "status", "--socket", sock, "--db", db],
                          capture_output=True, text=True, timeout=30).stdout
    ctx.check("wall-clock steps: 1, the last by -3600.000 s" in text, f"tracer status:\n{text}")
    rc, log = ctx.stop(agg)
    ctx.check(rc == 0, f"aggregator exit {rc}")
    ctx.check("wall clock was stepped by -3600.000 s" in log, f"the step is logged: {log[-800:]}")


@test
def events_the_aggregator_cannot_apply_are_counted_and_shown(ctx):
    """Well-formed events that find nothing to apply to are counted per kind in aggregator_stats
    and shown by tracer status, exactly as sent (framesend orphans: 5 crafted events)."""
    sock, db = ctx.path("s.sock"), ctx.path("agg.db")
    agg = ctx.spawn([ctx.bin("tracer-aggregator"), "--socket", sock, "--db", db, "--user", "nobody"])
    wait_for_socket(sock)
    r = subprocess.run([ctx.helper("framesend"), sock, "orphans"], capture_output=True, text=True, timeout=30)
    ctx.check(r.returncode == 0 and "acked" in r.stdout, f"framesend orphans: {r.returncode} {r.stdout} {r.stderr}")
    # The ack follows the commit, and the counts are written with the batch that changed them.
    expected = {"events_ingested": 5, "samples_unmatched": 1, "files_unmatched": 1, "late_events": 1,
                "unmatched_exits": 1, "missing_parents": 2, "lost_processes": 0, "events_skipped": 0}
    cols = ", ".join(expected)
    got = dict(zip(expected, ctx.one(f"SELECT {cols} FROM aggregator_stats ORDER BY id DESC LIMIT 1", db=db)))
    ctx.check(got == expected, f"aggregator_stats {got}, expected {expected}")
    # The exit never seen starting is still a row; its repeat changed nothing.
    rows = ctx.query("SELECT state, comm, parent_id, ppid FROM processes WHERE pid = 4300003", db=db)
    ctx.check(rows == [("exited", "orphan-exit", None, 4300009)], f"the unmatched exit's row: {rows}")
    st = subprocess.run([ctx.bin("tracer"), "status", "--socket", sock, "--db", db, "--json"],
                        capture_output=True, text=True, timeout=30)
    shown = json.loads(st.stdout)["aggregator"]
    ctx.check({k: shown.get(k) for k in expected} == expected, f"tracer status --json: {shown}")
    text = subprocess.run([ctx.bin("tracer"), "status", "--socket", sock, "--db", db],
                          capture_output=True, text=True, timeout=30).stdout
    ctx.check("of 5 events: dropped 1 samples, 1 file opens" in text, f"tracer status text:\n{text}")
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


@test
def a_failure_after_its_run_ended_is_settled_and_shipped(ctx):
    """A process the command left running (`sleep 30 &`, the command then exits 0) is
    killed after its run ended: the run's verdict was given without it, so its `killed`
    signal is settled at once (not left active for ever, which kept it from the shipper):
    inactive, info, saying it came after the run, and queued in the outbox. Ground
    truth: the kill is ours (SIGTERM to the pid the command wrote), the run's status
    is the command's exit 0."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db, extra_agg=("--outbox-mib", "16"))
    pidfile = ctx.path("bg.pid")
    os.chmod(ctx.tmp, 0o777)
    done, run_id = ctx.daemon_run(sock, db, ["bash", "-c", f"sleep 30 > /dev/null 2>&1 & echo $! > {pidfile}; exit 0"],
                                  "--run", "leaves-a-sleeper")
    ctx.check(done.returncode == 0 and run_id, f"tracer run: rc {done.returncode}, run {run_id}")
    bg = int(open(pidfile).read())
    status = ctx.query("SELECT status FROM runs WHERE id = ?", run_id, db=db)
    ctx.check(status == [("ok",)], f"the run ended with its command: {status}")
    os.kill(bg, signal.SIGTERM)
    end, rows = time.time() + 20, []
    while time.time() < end:
        rows = ctx.query("SELECT id, active, severity, message FROM signals WHERE run_id = ? AND kind = 'killed'",
                         run_id, db=db)
        if rows:
            break
        time.sleep(0.2)
    ctx.check(len(rows) == 1 and rows[0][1] == 0 and rows[0][2] == "info" and "after its run had ended" in rows[0][3],
              f"the late kill is settled: {rows}")
    if rows:
        queued = ctx.query("SELECT count(*) FROM outbox WHERE kind = 'signals' AND record_key = ?",
                           str(rows[0][0]), db=db)
        ctx.check(queued[0][0] >= 1, f"and queued for the shipper: {queued}")
    ctx.stop(col)
    ctx.stop(agg)
