"""The start-up snapshot (bpf/snapshot.bpf.c): the processes already running when the collector
starts, read by a BPF task iterator after the privilege drop. Ground truth: /proc, read by the
test itself while the processes run."""
import json
import os
import pwd
import shlex
import subprocess
import time

from harness import start_daemons, test

TICK_NS = 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def proc_truth(pid):
    """What /proc says of a process: argv, exe, cwd, ids, parent, start (boot ns, to a tick)."""
    argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")[:-1]
    status = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status").read().splitlines() if ":" in line)
    stat = open(f"/proc/{pid}/stat").read()
    fields = stat[stat.rindex(")") + 2:].split()
    return {"argv": [a.decode() for a in argv], "exe": os.readlink(f"/proc/{pid}/exe"),
            "cwd": os.readlink(f"/proc/{pid}/cwd"), "uid": int(status["Uid"].split()[0]),
            "gid": int(status["Gid"].split()[0]), "ppid": int(fields[1]),
            "start_ns": int(fields[19]) * TICK_NS}


@test
def snapshot_matches_proc_for_processes_already_running(ctx):
    """Three processes start before the collector: a shell in a directory whose name has a space,
    its child shell with an argument of 2,000 bytes, one with a space and one not ASCII, and a
    `sleep` run as nobody. Each is stored once, from_snapshot = 1, with the argv, exe, cwd, uid,
    gid and ppid /proc shows, its start within one clock tick of /proc's (/proc's resolution;
    the iterator's is the nanosecond), and the child linked to its parent's row (parents are
    sent first)."""
    work = ctx.path("snap dir")
    os.makedirs(work)
    long_arg = "x" * 2000
    # The child: a shell whose own argv carries the arguments (its sleep is a grandchild).
    inner = shlex.join(["/bin/sh", "-c", "sleep 60; :", "kid", "arg two", "é", long_arg])
    shell = subprocess.Popen(["/bin/sh", "-c", f"{inner} & wait"], cwd=work)
    nobody = pwd.getpwnam("nobody")
    other = subprocess.Popen(["/bin/sleep", "61"], cwd="/",
                             preexec_fn=lambda: (os.setgid(nobody.pw_gid), os.setuid(nobody.pw_uid)))
    ctx.procs += [shell, other]
    child = None
    end = time.time() + 5
    while child is None and time.time() < end:
        kids = subprocess.run(["pgrep", "-P", str(shell.pid)], capture_output=True, text=True).stdout.split()
        child = int(kids[0]) if kids else None
        time.sleep(0.05)
    ctx.check(child is not None, "the shell started its sleep")
    pids = [p for p in (shell.pid, child, other.pid) if p]
    truth = {pid: proc_truth(pid) for pid in pids}
    sock, db = ctx.path("s.sock"), ctx.path("snap.db")
    agg, col = start_daemons(ctx, sock, db)
    rows = {}
    for pid in pids:
        got = ctx.query("SELECT argv, exe, cwd, uid, gid, ppid, proc_start_boot_ns, from_snapshot, id, parent_id "
                        "FROM processes WHERE pid = ?", pid, db=db)
        ctx.check(len(got) == 1, f"pid {pid} stored once: {got}")
        if not got:
            continue
        argv, exe, cwd, uid, gid, ppid, start, snap, row_id, parent_id = got[0]
        rows[pid] = (row_id, parent_id)
        t = truth[pid]
        ctx.check(snap == 1, f"pid {pid} came through the snapshot")
        ctx.check(json.loads(argv or "[]") == t["argv"], f"pid {pid} argv: {argv[:120] if argv else argv} "
                  f"vs /proc {str(t['argv'])[:120]}")
        ctx.check((exe, cwd, uid, gid, ppid) == (t["exe"], t["cwd"], t["uid"], t["gid"], t["ppid"]),
                  f"pid {pid}: exe, cwd, uid, gid, ppid {(exe, cwd, uid, gid, ppid)} vs /proc "
                  f"{(t['exe'], t['cwd'], t['uid'], t['gid'], t['ppid'])}")
        ctx.check(start is not None and 0 <= start - t["start_ns"] < TICK_NS,
                  f"pid {pid} start {start} within a tick after /proc's {t['start_ns']}")
    if child in rows and shell.pid in rows:
        ctx.check(rows[child][1] == rows[shell.pid][0],
                  f"the child's parent row is the shell's: {rows[child][1]} vs {rows[shell.pid][0]}")
    ctx.stop(col)
    ctx.stop(agg)
