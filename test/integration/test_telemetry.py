"""Kernel telemetry depth: OOM, iowait, run queue, network, files, samples, syscalls."""
import json
import os
import subprocess
import time

from harness import Failure, load_json, remove_cgroup, start_daemons, test


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
        remove_cgroup(self.path)


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
    """stress-ng in a 64 MiB cgroup: a storm of kills, every one recorded and linked."""
    cg = MemoryCgroup(f"tracer-it-storm-{os.getpid()}", "64M")
    try:
        before = cg.oom_kills()
        # 4 s of stress-ng gives ~110 kills here, but once gave 18 in CI: how fast
        # it respawns its workers varies. So it runs again (up to 20 s in all)
        # until the cgroup's own counter shows 60 kills.
        counter = os.path.join(cg.path, "memory.oom_control" if cg.v1 else "memory.events")
        storm = ("end=$((SECONDS + 20)); while [ $SECONDS -lt $end ]; do "
                 "stress-ng --vm 2 --vm-bytes 200M --timeout 4s >/dev/null 2>&1; "
                 f"n=$(awk '$1 == \"oom_kill\" {{print $2}}' {counter}); "
                 f"[ $((n - {before})) -ge 60 ] && break; done; true")
        ctx.tracer_run(cg.enter_cmd(["bash", "-c", storm]))
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
    """I/O wait vs the writer's own timed sleeps, run-queue delay vs /proc/PID/schedstat."""
    sw = ctx.path("sw.json")
    burners = [ctx.path(f"b{i}.json") for i in range(4)]
    # 400 writes, and more until it slept 150 ms in them (fast disks sleep ~0.1 ms a write).
    script = (f"{ctx.helper('syncwriter')} {ctx.path('s.bin')} 400 {sw} 150; "
              + " ".join(f"{ctx.helper('cpuburn')} 600 {b} &" for b in burners)
              + f" wait; {ctx.helper('cpuburn')} 200; true")
    ctx.tracer_run(["bash", "-c", script], expect=0)
    run = ctx.latest_run()
    ours = ctx.one("SELECT iowait_ns FROM processes WHERE run_id = ? AND exe LIKE '%/syncwriter'", run)
    # The writer times its sleeps inside O_DSYNC write() with its own clocks (see
    # syncwriter.c for why not delay accounting). Both sides time the same sleeps;
    # they differ by sleeps outside the loop (exec paging, open: ours only) and
    # sleeps in write() that are not I/O wait (waiting for the ext4 journal's
    # commit or its locks: theirs only). Measured here: ours / theirs 0.89..1.07
    # over eight runs of ~130 ms on a quiet machine; 0.77 once in CI under ASan,
    # where the busier machine makes journal waits longer. So: never more than
    # the writer slept (10% + 20 ms for the sleeps outside its loop), and at least
    # 60% of it.
    theirs = load_json(sw)["slept_in_write_ns"]
    print(f"  I/O wait: tracer {ours / 1e6:.1f} ms, the writer slept {theirs / 1e6:.1f} ms in write() "
          f"(ratio {ours / max(theirs, 1):.2f})")
    ctx.check(theirs > 50_000_000 and ours > 50_000_000, f"the synchronous writer waited on I/O: {ours}, {theirs}")
    ctx.check(ours <= theirs * 1.1 + 20_000_000,
              f"I/O wait of a synchronous writer: tracer {ours} ns, no more than the {theirs} ns it slept in write()")
    ctx.check(ours >= theirs * 0.6,
              f"I/O wait of a synchronous writer: tracer {ours} ns, at least 60% of the {theirs} ns it slept in write()")
    burn_rows = ctx.query("SELECT pid, runq_ns, iowait_ns, json_extract(argv, '$[2]') FROM processes "
                          "WHERE run_id = ? AND exe LIKE '%/cpuburn'", run)
    ctx.check(len(burn_rows) == 5, f"five burners: {len(burn_rows)}")
    # Each burner is matched to its own report by the path in its argv: the four started
    # together exec in any order on a busy machine, so their start times do not say which.
    burn_rows = [r for r in burn_rows if r[3] in burners]
    ctx.check(sorted(r[3] for r in burn_rows) == sorted(burners), f"the four reporting burners: {burn_rows}")
    for pid, runq, iowait, path in burn_rows:
        own = load_json(path)["run_delay_ns"]
        # Read by the burner just before exiting; ours at the exit tracepoint.
        ctx.close(runq, own, 2_000_000 + own // 100, f"run-queue delay of burner {pid} (ns)")
        # Paging the program in at exec can sleep in io_schedule(): allow 5 ms,
        # against the synchronous writer's hundred-odd.
        ctx.check(iowait < 5_000_000, f"a CPU burner has (almost) no I/O wait: {iowait}")
    contended = sorted(r[1] for r in burn_rows)
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
def tcp_bytes_read_by_splice(ctx):
    """A 32 MiB TCP transfer whose receiver splices socket -> pipe -> /dev/null (the bytes never
    reach its memory, as in proxies and `pv`): its net_rx_bytes is exactly what splice moved,
    as for recv(); before, it read 0."""
    out, size = ctx.path("splice.json"), 32 << 20
    ctx.tracer_run([ctx.helper("netpair"), str(size), out, "splice"], expect=0)
    t = load_json(out)
    ctx.check(t["received"] == size, f"the receiver spliced every byte: {t['received']}")
    run = ctx.latest_run()
    rx = ctx.one("SELECT net_rx_bytes FROM processes WHERE run_id = ? AND pid = ?", run, t["receiver"])
    tx = ctx.one("SELECT net_tx_bytes FROM processes WHERE run_id = ? AND pid = ?", run, t["sender"])
    ctx.check(rx == size, f"receiver net_rx_bytes {rx} == {size}")
    ctx.check(tx == size, f"sender net_tx_bytes {tx} == {size}")


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
    check_opener_files(ctx, lambda cmd: ctx.tracer_run(cmd, expect=0) and ctx.latest_run(), ctx.db)


@test
def relative_paths_follow_chdir_and_are_normalised(ctx):
    """Relative opens after `cd` (in the shell itself and in a subshell), and paths with `..`
    and `.`: each file is recorded under its real absolute path (os.path.realpath)."""
    top = ctx.path("tree")
    os.makedirs(os.path.join(top, "one", "two"))
    os.chmod(top, 0o777)
    script = (f"cd {top} && cd one && echo a > a.txt && cd two && echo b > ../b.txt && "
              "cat ./../../one/a.txt > /dev/null; (cd .. && echo c > two/./c.txt); "
              "cd / && cat " + os.path.join(top, "one", "two", "..", "b.txt") + " > /dev/null")
    ctx.tracer_run(["bash", "-c", script], expect=0)
    run = ctx.latest_run()
    paths = {p for (p,) in ctx.query("SELECT f.path FROM files f JOIN processes p ON p.id = f.process_id "
                                     "WHERE p.run_id = ? AND f.path LIKE ?", run, top + "%")}
    want = {os.path.realpath(os.path.join(top, "one", n)) for n in ("a.txt", "b.txt", os.path.join("two", "c.txt"))}
    ctx.check(paths == want, f"paths {sorted(paths)}\n       expected {sorted(want)}")


@test
def files_without_the_repeat_open_cache(ctx):
    """The same opens as counted on Linux 5.5-6.1 (no bpf_rdonly_cast): every open reads its path."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db, extra_col=("--force-no-kfunc",))

    def run(cmd):
        p, run_id = ctx.daemon_run(sock, db, cmd)
        ctx.check(p.returncode == 0, f"tracer run: {p.stderr}")
        return run_id
    check_opener_files(ctx, run, db)
    _, err = ctx.stop(col)
    ctx.check("every open reads its path" in err, "the collector said it runs without the cache")
    ctx.stop(agg)



def run_manyfiles(ctx, sock, db, name, n):
    """manyfiles creating n files in a new directory NAME, as a run: (the directory, the run)."""
    d = ctx.path(name)
    os.mkdir(d)
    p, run = ctx.daemon_run(sock, db, [ctx.helper("manyfiles"), d, str(n)])
    ctx.check(p.returncode == 0, f"tracer run: {p.stderr}")
    return d, run


@test
def files_past_the_per_process_limit(ctx):
    """300 files each opened twice: the first 256 listed, the other 44 counted once each; 5000: the
    documented bound past 4096 remembered; no kernel leftovers."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db)
    d, run = run_manyfiles(ctx, sock, db, "many", 300)
    pid, process_id, overflow = ctx.one("SELECT pid, id, files_overflow FROM processes WHERE run_id = ? AND "
                                        "exe LIKE '%/manyfiles'", run, db=db)
    rows = ctx.query("SELECT path, access, created, count FROM files WHERE process_id = ?", process_id, db=db)
    # manyfiles.c creates f0..f299 in order, then reads each once more: the
    # first 256 distinct paths take the slots, each opened twice.
    want = sorted((f"{d}/f{i}", "rw", 1, 2) for i in range(256))
    ctx.check(sorted(rows) == want, f"{len(rows)} files listed, expected f0..f255 each 'rw', created, "
              f"opened twice; first differences {sorted(set(rows) ^ set(want))[:4]}")
    ctx.check(overflow == 44, f"files_overflow {overflow}, expected 44 (distinct paths, not opens: 88)")
    # Past 4096 overflowed paths the kernel stops remembering them: 5000 paths
    # give 4744 distinct, and the second opens of the last 648 count again.
    d2, run = run_manyfiles(ctx, sock, db, "more", 5000)
    # Found by its exe: the counts (with the overflow) follow the exit event and
    # can come after the commit that wrote the row; they once rewrote the row
    # whole with its exe, argv and cwd already freed (test_proctable.c pins it).
    pid2, overflow2, argv2 = ctx.one("SELECT pid, files_overflow, argv FROM processes WHERE run_id = ? AND "
                                     "exe LIKE '%/manyfiles'", run, db=db)
    ctx.check(json.loads(argv2 or "null") == [ctx.helper("manyfiles"), d2, "5000"],
              f"argv {argv2}, expected the command as run")
    ctx.check(overflow2 == 4744 + 648, f"files_overflow {overflow2}, expected 4744 + 648 (the documented bound)")
    # The kernel forgets the processes' paths at their exit, the overflowed ones too.
    check_no_paths_left(ctx, (pid, pid2))
    ctx.stop(col)
    ctx.stop(agg)


def check_no_paths_left(ctx, pids):
    """No file_seen entry of these (exited) processes is left in the kernel."""
    left, tables = [], 0
    maps = json.loads(subprocess.run(["bpftool", "-j", "map", "show"], capture_output=True, text=True,
                                     check=True).stdout)
    for m in maps:
        if m.get("name") != "file_seen":
            continue
        got = subprocess.run(["bpftool", "-j", "map", "dump", "id", str(m["id"])],
                             capture_output=True, text=True)
        if got.returncode != 0:
            continue  # another collector's map, gone since the listing (a busy host)
        tables += 1
        dump = json.loads(got.stdout)
        left += [e for e in dump if e.get("formatted", {}).get("key", {}).get("tgid") in pids]
        ctx.check(all("formatted" in e for e in dump), "bpftool shows file_seen's keys by field (BTF)")
    ctx.check(tables > 0 and not left, f"file_seen entries left for pids {pids}: {len(left)}")


def thread_files(ctx, per_thread):
    """Files for threadfiles with two threads, and the (access, created, count) each must get:
    it opens each read-write, its own files once per thread, the shared ones once by each."""
    d = ctx.path("threads")
    os.mkdir(d)
    own = [f"{d}/t{t}_{i}" for t in range(2) for i in range(per_thread)]
    shared = [f"{d}/s{i}" for i in range(per_thread)]
    for path in own + shared:
        open(path, "w").close()
    return d, dict([(path, ("rw", 0, 1)) for path in own] + [(path, ("rw", 0, 2)) for path in shared])


def traced_threadfiles(ctx, sock, db, d, per_thread):
    """One threadfiles process (two threads) under tracer run: its pid, files_overflow and files rows."""
    p, run = ctx.daemon_run(sock, db, [ctx.helper("threadfiles"), d, "2", str(per_thread)])
    ctx.check(p.returncode == 0, f"tracer run: {p.stderr}")
    pid, process_id, overflow = ctx.one("SELECT pid, id, files_overflow FROM processes WHERE run_id = ? AND "
                                        "exe LIKE '%/threadfiles'", run, db=db)
    rows = ctx.query("SELECT path, access, created, count FROM files WHERE process_id = ?", process_id, db=db)
    return pid, overflow, rows


@test
def files_opened_by_threads_at_once(ctx):
    """Two threads open 80 files each and 80 shared ones, meeting before every open: every path
    listed once with its count (shared ones twice) or counted as overflow; nothing left in the kernel."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db)
    d, want = thread_files(ctx, 80)
    pid, overflow, rows = traced_threadfiles(ctx, sock, db, d, 80)
    # Two threads racing for one new path each claim a slot; the loser gives its slot back only if no
    # slot was claimed after it (the winner's often was), else it stays empty (documented): a few may overflow,
    # but none is listed twice or miscounted, and listed + overflow is every path.
    paths = [r[0] for r in rows]
    wrong = [r for r in rows if want.get(r[0]) != tuple(r[1:])]
    ctx.check(len(paths) == len(set(paths)) and not wrong, f"{len(rows)} files listed, each once with its "
              f"count (own 1, shared 2); wrong: {wrong[:4]}")
    ctx.check(len(rows) + overflow == 240, f"{len(rows)} listed + {overflow} overflow, expected 240 paths")
    check_no_paths_left(ctx, (pid,))
    ctx.stop(col)
    ctx.stop(agg)


@test
def files_opened_by_threads_past_the_last_slot(ctx):
    """Two threads open 130 files each and 130 shared ones (390 paths, past the 256 slots a process
    has), meeting before every open, in 15 processes: when one thread takes the last slot for a
    shared path while the other finds none, the second open still counts in that slot. Before,
    it was lost: 8 shared paths counted once in 30 such processes."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db)
    d, want = thread_files(ctx, 130)
    wrong, totals, pids = [], [], []
    for _ in range(15):
        pid, overflow, rows = traced_threadfiles(ctx, sock, db, d, 130)
        paths = [r[0] for r in rows]
        wrong += [r for r in rows if want.get(r[0]) != tuple(r[1:])]
        wrong += [("listed twice", p) for p in set(paths) if paths.count(p) > 1]
        totals.append(len(rows) + overflow)
        pids.append(pid)
    ctx.check(not wrong, f"{len(wrong)} paths miscounted (own 1, shared 2): {wrong[:4]}")
    ctx.check(all(t == 390 for t in totals), f"listed + overflow per process, expected 390: {totals}")
    check_no_paths_left(ctx, tuple(pids))
    ctx.stop(col)
    ctx.stop(agg)


def file_events_lost(ctx, db):
    return ctx.one("SELECT coalesce(sum(count), 0) FROM event_loss WHERE hop = 'kernel' AND event_type = 'file'",
                   db=db)


def traced_holdpaths(ctx, db, prefix, n):
    """Runs holdpaths on n new paths and lets it exit; returns (pid, files listed, files_overflow)."""
    p = subprocess.Popen([ctx.helper("holdpaths"), prefix, str(n)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, err = p.communicate(timeout=60)
    ctx.check(p.returncode == 0, f"holdpaths: exit {p.returncode} {err}")
    pid = p.pid
    end = time.time() + 20
    while time.time() < end:
        row = ctx.query("SELECT id, files_overflow FROM processes WHERE pid = ? AND exe LIKE '%/holdpaths' "
                        "AND state = 'exited' ORDER BY id DESC LIMIT 1", pid, db=db)
        if row:
            listed = ctx.one("SELECT count(*) FROM files WHERE process_id = ?", row[0][0], db=db)
            return pid, listed, row[0][1]
        time.sleep(0.1)
    raise Failure(f"holdpaths (pid {pid}) never recorded")


@test
def files_when_the_kernel_table_is_full(ctx):
    """Processes holding 4,352 paths each (256 listed, 4,096 counted) fill the kernel's table of the
    paths of running processes (262,144). Then a process opening 300 new paths lists none and each
    is a lost file event: not a slot taken per open. Once the holders exit it lists 256 again."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db)
    d = ctx.path("full")
    os.mkdir(d)
    # Before: the table has room, so 300 paths give the usual 256 listed and 44 counted.
    _, listed, overflow = traced_holdpaths(ctx, db, f"{d}/before", 300)
    ctx.check((listed, overflow) == (256, 44), f"with room: {listed} listed, {overflow} overflow; expected 256, 44")
    holders = []
    try:
        # 61 holders would take 265,472 entries: more than the table holds, whatever else runs.
        for i in range(61):
            h = subprocess.Popen([ctx.helper("holdpaths"), f"{d}/h{i}_", "4352"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
            holders.append(h)
            ctx.check(h.stdout.readline().strip() == "ready", f"holder {i} ready")
        time.sleep(1.5)  # the collector's report of losses so far (every second)
        before = file_events_lost(ctx, db)
        pid, listed, overflow = traced_holdpaths(ctx, db, f"{d}/full", 300)
        # Lost events reach the database with the collector's next report (every second).
        end = time.time() + 10
        while file_events_lost(ctx, db) - before < 300 - listed and time.time() < end:
            time.sleep(0.2)
        lost = file_events_lost(ctx, db) - before
        # Slack: a background process exiting meanwhile frees entries the prober may take.
        ctx.check(listed <= 4, f"table full: {listed} of 300 paths listed, expected none (at most 4: "
                  "entries freed meanwhile by other processes' exits)")
        ctx.check(overflow == 0, f"table full: files_overflow {overflow}, expected 0 (no slot is used up)")
        ctx.check(lost >= 300 - listed, f"each path not listed is a lost file event: {lost} lost, "
                  f"{300 - listed} expected at least (other processes opening new paths add to it)")
    finally:
        for h in holders:
            h.stdin.close()
        for h in holders:
            h.wait(timeout=30)
    # After: the holders' paths are forgotten at their exit, and the table has room again.
    pid2, listed, overflow = traced_holdpaths(ctx, db, f"{d}/after", 300)
    ctx.check((listed, overflow) == (256, 44), f"after: {listed} listed, {overflow} overflow; expected 256, 44")
    check_no_paths_left(ctx, tuple(h.pid for h in holders) + (pid, pid2))
    ctx.stop(col)
    ctx.stop(agg)


def check_opener_files(ctx, run, db):
    d = ctx.path("files")
    os.mkdir(d)
    open(os.path.join(d, "b.txt"), "w").write("b")
    run_id = run([ctx.helper("opener"), d])
    rows = ctx.query("SELECT f.path, f.access, f.created, f.result, f.count, f.failed FROM files f "
                     "JOIN processes p ON p.id = f.process_id WHERE p.run_id = ? AND p.exe LIKE '%/opener' "
                     "ORDER BY f.path", run_id, db=db)
    # What opener.c opens, in its own words.
    want = [(f"{d}/a.txt", "w", 1, 0, 1, 0), (f"{d}/b.txt", "r", 0, 0, 3, 0),
            (f"{d}/c.txt", "rw", 1, 0, 3, 0), (f"{d}/d.txt", "rw", 1, 0, 2, 0),
            (f"{d}/e.txt", "w", 1, 0, 1, 0), (f"{d}/f.txt", "rw", 1, 0, 3, 0),
            (f"{d}/g.txt", "w", 1, 0, 1, 0), (f"{d}/missing.txt", "r", 0, 2, 2, 2)]
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
    ctx.check(ctx.one("SELECT p.iowait_ns IS NOT NULL AND p.cpu_user_ns IS NOT NULL FROM processes p "
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
def a_fork_only_child_is_in_its_own_cgroup(ctx):
    """A subshell moves itself into a new cgroup, then forks a child that never execs: the child's
    row is in the cgroup it was forked in (the kernel's own /proc/PID/cgroup, read by the child
    itself, is the ground truth), not the one its parent had at its exec."""
    v1 = os.path.isdir("/sys/fs/cgroup/memory")
    name = f"tracer-it-fork-{os.getpid()}"
    path = os.path.join("/sys/fs/cgroup/memory" if v1 else "/sys/fs/cgroup", name)
    seen = ctx.path("child.cgroup")
    try:
        os.mkdir(path)
        ctx.tracer_run(["bash", "-c", f"( echo $BASHPID > {path}/cgroup.procs; "
                        f"( echo $BASHPID > {seen}.pid; cat /proc/$BASHPID/cgroup > {seen}; "
                        "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done ); : ); :"], expect=0)
    finally:
        if os.path.isdir(path):
            os.rmdir(path)
    pid = int(open(seen + ".pid").read())
    hierarchy = ":memory:" if v1 else "0::"
    truth = [line.split(":", 2)[2].strip() for line in open(seen) if hierarchy in line]
    ctx.check(truth == [f"/{name}"], f"the child saw itself in the new cgroup: {truth}")
    col = "memory_cgroup_path" if v1 else "cgroup_path"
    rows = ctx.query(f"SELECT c.{col} FROM process_cgroups c JOIN processes p ON p.id = c.process_id "
                     "WHERE p.run_id = ? AND p.pid = ?", ctx.latest_run(), pid)
    ctx.check(rows == [(f"/{name}",)], f"the fork-only child's row: {rows}, the kernel said /{name}")


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


@test
def files_decided_before_the_path_is_read(ctx):
    """The kernel decides from the opened file: /proc, /sys and device nodes are not
    listed, nor shared libraries; a data file first reached through an alias under an
    excluded prefix (a symlink in /dev/shm) is still listed when a later process opens
    it by its own name. Ground truth: which cat named which file."""
    data = [ctx.path("first.csv"), ctx.path("second.csv")]
    aliases = [f"/dev/shm/tracer-it-alias-{os.getpid()}-{i}" for i in range(2)]
    for path, alias in zip(data, aliases):
        with open(path, "w") as f:
            f.write("a,b\n1,2\n")
        if os.path.lexists(alias):
            os.unlink(alias)
        os.symlink(path, alias)
        ctx.cleanups.append(lambda a=alias: os.unlink(a))
    script = (f"cat {aliases[0]} > /dev/null; cat {aliases[1]} > /dev/null; "
              f"cat /dev/null /proc/self/stat /sys/kernel/mm/transparent_hugepage/enabled > /dev/null; "
              f"cat /lib/x86_64-linux-gnu/libc.so.6 > /dev/null; "
              f"cat {data[0]} > /dev/null; cat {data[1]} > /dev/null")
    ctx.tracer_run(["bash", "-c", script], expect=0)
    run = ctx.latest_run()
    rows = ctx.query("SELECT p.argv, f.path FROM files f JOIN processes p ON p.id = f.process_id "
                     "WHERE p.run_id = ? AND p.exe = '/usr/bin/cat'", run)
    listed = {}
    for argv, path in rows:
        listed.setdefault(json.loads(argv)[1], set()).add(path)
    mine = {name: paths & set(data) for name, paths in listed.items()}
    ctx.check(mine.get(data[0]) == {data[0]} and mine.get(data[1]) == {data[1]},
              f"each data file listed for the cat that named it: {listed}")
    ctx.check(not any(mine.get(a) for a in aliases), f"not under the aliases' excluded prefix: {listed}")
    everything = {p for paths in listed.values() for p in paths}
    hidden = [p for p in everything if p.startswith(("/proc/", "/sys/", "/dev/")) or ".so" in p]
    ctx.check(not hidden, f"pseudo files, devices and libraries are not listed: {hidden}")
