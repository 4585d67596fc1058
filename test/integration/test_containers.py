"""Containers are part of the run and step that started them: Debian's real docker.io
(a private dockerd) and podman (runc, cgroupfs), images imported from a tar of static
binaries. Ground truth: wait4() inside the container (the project's `measure` helper,
built statically into the image, writing to a bind-mounted directory), wait4() of the
docker CLI on the host, docker's own State.OOMKilled. Tolerances are stated per check."""
import json
import os
import subprocess
import time

from container_engines import IMAGE, Docker, Podman, need, truth
from harness import Failure, plain_build_only, start_daemons, test, write_script

# A process's CPU against wait4 of it: the same kernel counters, read at its exit.
TOL_FRAC, TOL_NS = 0.02, 20_000_000
# The container's first program is the process runc set the container up in (its
# namespaces, mounts and exec, 40-60 ms of CPU here) before measure ran: no ground
# truth sees that part, so a run's total may exceed the sum of wait4s by this much.
SETUP_NS = 200_000_000


def cpu(t):
    return t["utime_ns"] + t["stime_ns"]


def close(a, b):
    return a is not None and abs(a - b) <= TOL_FRAC * b + TOL_NS


def links_of(ctx, run_id, db=None):
    cols = ("id", "container_id", "runtime", "engine", "run_id", "step_id", "launcher_process_id",
            "method", "image", "command", "candidates")
    rows = ctx.query(f"SELECT {', '.join(cols)} FROM container_links WHERE run_id = ? ORDER BY first_start_ns",
                     run_id, db=db)
    return [dict(zip(cols, r), command=json.loads(r[9]) if r[9] else None) for r in rows]


def container_procs(ctx, cid, db=None):
    cols = ("id", "pid", "exe", "run_id", "step_id", "cpu_ns", "oom_killed", "signal")
    rows = ctx.query("SELECT id, pid, exe, run_id, step_id, cpu_user_ns + cpu_sys_ns, oom_killed, signal "
                     "FROM processes WHERE container_id = ? ORDER BY start_ns", cid, db=db)
    # exe is NULL for a fork child that never exec'd and whose row has no exe (runc's stages)
    return [dict(zip(cols, r), exe=r[2] or "") for r in rows]


def show_json(ctx, run_id, db=None):
    p = subprocess.run([ctx.bin("tracer"), "show", "--db", db or ctx.db, "--json", str(run_id)],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise Failure(f"tracer show --json: {p.returncode} {p.stderr}")
    return json.loads(p.stdout)


def measured_container_run(ctx, engine, name, burn_ms):
    """`tracer run --run NAME -- measure CLI.json -- ENGINE run IMAGE`, the container measuring
    a cpuburn of burn_ms inside it: (the run's id, the container's wait4, the CLI's wait4 file)."""
    out = ctx.path("out")
    os.makedirs(out)
    host = ctx.path("cli.json")
    ctx.tracer_run([ctx.helper("measure"), host, "--",
                    *engine.run(IMAGE, "/bin/measure", "/out/truth.json", "--", "/bin/cpuburn", str(burn_ms),
                                out=out)],
                   "--run", name, expect=0)
    run_id = ctx.one("SELECT id FROM runs WHERE name = ?", name)
    return run_id, truth(os.path.join(out, "truth.json")), host


def check_container_run(ctx, run_id, inside, cli_truth=None, db=None, engine="docker"):
    """The run holds the container: one link by argv, the container's processes in the
    run, the burner's CPU equal to wait4 inside, the run's total the sum of its rows and
    (with the CLI's wait4) the CLI's, the container's and no more than its setup."""
    run_cpu, = ctx.query("SELECT cpu_ns FROM runs WHERE id = ?", run_id, db=db)[0]
    rows_cpu = ctx.one("SELECT sum(cpu_user_ns + cpu_sys_ns) FROM processes WHERE run_id = ?", run_id, db=db)
    ctx.check(abs(run_cpu - rows_cpu) <= 2_000_000, f"run CPU {run_cpu} is the sum of its rows {rows_cpu} (2 ms)")
    doc = show_json(ctx, run_id, db)
    ctx.check(doc["run"]["cpu_ns"] == run_cpu, f"show --json says the run's CPU {doc['run']['cpu_ns']} as SQLite {run_cpu}")
    ctx.check(run_cpu >= cpu(inside) * (1 - TOL_FRAC) - TOL_NS,
              f"the run's CPU {run_cpu} holds the container's {cpu(inside)} (wait4 inside)")
    if cli_truth:
        want = cpu(inside) + cpu(cli_truth)
        ctx.check(want * (1 - TOL_FRAC) - TOL_NS <= run_cpu <= want * (1 + TOL_FRAC) + TOL_NS + SETUP_NS,
                  f"run CPU {run_cpu} vs wait4 of the CLI {cpu(cli_truth)} + wait4 inside {cpu(inside)} "
                  f"(2% + 20 ms, and the container's setup up to {SETUP_NS} ns)")
    print(f"       run {run_id}: CPU {run_cpu / 1e6:.1f} ms, wait4 inside {cpu(inside) / 1e6:.1f} ms"
          + (f", wait4 of the CLI {cpu(cli_truth) / 1e6:.1f} ms" if cli_truth else ""), flush=True)
    links = links_of(ctx, run_id, db)
    ctx.check(len(links) == 1 and links[0]["method"] == "argv" and links[0]["candidates"] == 1
              and links[0]["engine"] == engine and links[0]["image"] == IMAGE,
              f"one container linked to the run by argv: {links}")
    if not links:
        return None, []
    link = links[0]
    # runc's own children in the new cgroup before the command runs (its setup stages,
    # which never exec: their rows have runc's exe, or none) are the runtime's, like
    # the shim: the container is its programs.
    procs = [p for p in container_procs(ctx, link["container_id"], db) if p["exe"] and not p["exe"].endswith("/runc")]
    names = sorted(os.path.basename(p["exe"]) for p in procs)
    ctx.check(names == ["cpuburn", "measure"] and all(p["run_id"] == run_id for p in procs),
              f"the container's processes are the run's: {[(p['exe'], p['run_id']) for p in procs]}")
    burn = [p for p in procs if p["exe"].endswith("cpuburn")]
    ctx.check(burn and close(burn[0]["cpu_ns"], cpu(inside)),
              f"the burner's CPU {burn and burn[0]['cpu_ns']} ns vs wait4 inside {cpu(inside)} "
              f"(2% + 20 ms)")
    if burn:
        print(f"       burner row {burn[0]['cpu_ns'] / 1e6:.2f} ms vs wait4 {cpu(inside) / 1e6:.2f} ms", flush=True)
    shown = doc.get("containers") or []
    ctx.check(len(shown) == 1 and shown[0]["container_id"] == link["container_id"] and not shown[0]["ambiguous"],
              f"show --json lists the container: {shown}")
    return link, procs


@test
@plain_build_only("CI time: a private dockerd and podman per test; run under ASan by hand when this file changes (all passed, 2026-12-01)")
def docker_run_under_tracer_run_holds_the_container(ctx):
    """`tracer run -- docker run IMAGE ...` (the CLI under `measure` for its own wait4):
    the container, a child of containerd-shim, is part of the run."""
    d = Docker(ctx)
    run_id, inside, host = measured_container_run(ctx, d, "ctr-docker", 1000)
    check_container_run(ctx, run_id, inside, truth(host))
    ctx.check(show_json(ctx, run_id).get("containers_unlinked_clis") == 0, "no CLI left unlinked")

    # The image's own command (CMD, nothing after the image): nothing in argv tells its
    # container from another's, so it is not linked, and the run says work went missing.
    tar = subprocess.Popen(["tar", "-C", ctx.path("image"), "-c", "."], stdout=subprocess.PIPE)
    subprocess.run(d.cli("import", "--change", 'CMD ["/bin/cpuburn", "300"]', "-", "local/own-cmd:1"),
                   stdin=tar.stdout, check=True, capture_output=True)
    tar.wait()
    p = ctx.tracer_run(d.run("local/own-cmd:1"), "--run", "ctr-own-cmd", expect=0)
    run_id = ctx.one("SELECT id FROM runs WHERE name = 'ctr-own-cmd'")
    doc = show_json(ctx, run_id)
    ctx.check(doc.get("containers_unlinked_clis") == 1 and not doc.get("containers"),
              f"one docker run with no container linked: {doc.get('containers_unlinked_clis')} {doc.get('containers')}")
    ctx.check("had no container linked" in p.stderr, f"tracer run says so:\n{p.stderr[-1500:]}")


@test
@plain_build_only("CI time: a private dockerd and podman per test; run under ASan by hand when this file changes (all passed, 2026-12-01)")
def script_docker_runs_are_steps_named_by_their_tools(ctx):
    """A script running two `docker run`s: two steps, each holding its container, named by
    the program in the container that did its work (cpuburn under measure; not `docker`), with the container's id and its memory
    limit (--memory 256m on the first; none on the second)."""
    d = Docker(ctx)
    out = ctx.path("out")
    os.makedirs(out)
    a = " ".join(d.run("--memory", "256m", IMAGE, "/bin/measure", "/out/a.json", "--", "/bin/cpuburn", "400", out=out))
    b = " ".join(d.run(IMAGE, "/bin/measure", "/out/b.json", "--", "/bin/cpuburn", "700", out=out))
    script = write_script(ctx, "two-containers.sh", f"{a}\n{b}\n")
    ctx.tracer_run([script], "--run", "ctr-script", expect=0)
    run_id = ctx.one("SELECT id FROM runs WHERE name = 'ctr-script'")
    steps = ctx.query("SELECT id, name, container_id, memory_limit_kb, cpu_ns, status FROM steps "
                      "WHERE run_id = ? ORDER BY start_ns", run_id)
    links = links_of(ctx, run_id)
    ctx.check(len(steps) == 2 and len(links) == 2, f"two steps, two containers: {steps} {links}")
    for (sid, name, cid, mem, step_cpu, status), link, f, limit in zip(steps, links, ("a.json", "b.json"),
                                                                      (256 * 1024, None)):
        inside = truth(os.path.join(out, f))
        ctx.check(name == "cpuburn" and status == "ok", f"step {sid} named by its container's program: {name} {status}")
        ctx.check(link["step_id"] == sid and cid == link["container_id"] and link["method"] == "argv",
                  f"step {sid} holds container {link['container_id'][:12]} (its container_id {cid})")
        ctx.check(mem == limit, f"step {sid} memory limit {mem} KiB, the container was given {limit}")
        procs = [p for p in container_procs(ctx, link["container_id"]) if p["exe"] and not p["exe"].endswith("/runc")]
        ctx.check(procs and all(p["step_id"] == sid for p in procs), f"container's processes in step {sid}: {procs}")
        burn = [p for p in procs if p["exe"].endswith("cpuburn")]
        ctx.check(burn and close(burn[0]["cpu_ns"], cpu(inside)),
                  f"step {sid}: burner {burn and burn[0]['cpu_ns']} vs wait4 inside {cpu(inside)} (2% + 20 ms)")
        ctx.check(step_cpu >= cpu(inside) * (1 - TOL_FRAC) - TOL_NS,
                  f"step {sid} CPU {step_cpu} holds its container's {cpu(inside)}")
        print(f"       step {sid} {name}: CPU {step_cpu / 1e6:.1f} ms, burner "
              f"{burn and burn[0]['cpu_ns'] / 1e6:.2f} ms, wait4 inside {cpu(inside) / 1e6:.2f} ms, "
              f"memory limit {mem} KiB", flush=True)
    doc = show_json(ctx, run_id)
    ctx.check([s["name"] for s in doc["steps"]] == ["cpuburn", "cpuburn"], f"show --json steps {[s['name'] for s in doc['steps']]}")


@test
@plain_build_only("CI time: a private dockerd and podman per test; run under ASan by hand when this file changes (all passed, 2026-12-01)")
def podman_run_holds_its_container(ctx):
    """`tracer run -- podman run IMAGE ...`: the container, a child of conmon, is part of the run."""
    run_id, inside, _ = measured_container_run(ctx, Podman(ctx), "ctr-podman", 800)
    # podman's CLI forks conmon, runc and podman's own helpers: the CLI's wait4 holds
    # those too, so the run is checked against the container's wait4 alone.
    link, _ = check_container_run(ctx, run_id, inside, engine="podman")
    ctx.check(link is None or link["runtime"] == "podman", f"runtime from the cgroup path: {link}")


@test
@plain_build_only("CI time: a private dockerd and podman per test; run under ASan by hand when this file changes (all passed, 2026-12-01)")
def daemon_mode_docker_run_in_a_script_is_the_scripts_step(ctx):
    """The system daemons (scope all) and the same script: the container is the run's and
    its step's, exactly as under a self-hosted tracer run."""
    d = Docker(ctx)
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db)
    out = ctx.path("out")
    os.makedirs(out)
    cmd = " ".join(d.run(IMAGE, "/bin/measure", "/out/truth.json", "--", "/bin/cpuburn", "900", out=out))
    script = write_script(ctx, "one-container.sh", f"{cmd}\n")
    p, run_id = ctx.daemon_run(sock, db, [script], "--run", "ctr-daemon")
    if p.returncode != 0 or not run_id:
        raise Failure(f"tracer run exited {p.returncode}, run {run_id}: {p.stderr[-800:]}")
    time.sleep(1.5)  # the daemons commit what the container did after the run's own frames
    link, procs = check_container_run(ctx, run_id, truth(os.path.join(out, "truth.json")), db=db)
    steps = ctx.query("SELECT id, name, container_id FROM steps WHERE run_id = ?", run_id, db=db)
    ctx.check(link and len(steps) == 1 and steps[0][0] == link["step_id"] and steps[0][1] == "cpuburn"
              and steps[0][2] == link["container_id"], f"the script's step holds the container: {steps} {link}")
    ctx.check(procs and all(pr["step_id"] == (link or {}).get("step_id") for pr in procs),
              f"the container's processes are in the step: {procs}")
    ctx.stop(col)
    ctx.stop(agg)


@test
@plain_build_only("CI time: a private dockerd and podman per test; run under ASan by hand when this file changes (all passed, 2026-12-01)")
def oom_kill_in_a_container_counts_in_its_run_and_step(ctx):
    """`docker run --memory 64m` of a program growing to 300 MiB, 8 MiB each 150 ms (so the
    container lives past the aggregator's reading of its limit: a container gone before
    then keeps its processes and kill, not its limit): the kernel's OOM kill (docker's
    State.OOMKilled says so) is in the run and the step, which has the limit."""
    d = Docker(ctx)
    name = f"tracer-oom-{os.getpid()}"
    cmd = " ".join(d.cli("run", "--name", name, "--network", "none", "--memory", "64m", "--memory-swap", "64m",
                         IMAGE, "/bin/memramp", "38", "8", "150", "/out/x"))
    ctx.cleanups.append(lambda: subprocess.run(d.cli("rm", "-f", name), capture_output=True))
    script = write_script(ctx, "oom.sh", f"{cmd}\nexit $?\n")
    p = ctx.tracer_run([script], "--run", "ctr-oom")
    ctx.check(p.returncode == 137, f"the script passes docker's 137 on: {p.returncode}")
    oom = subprocess.run(d.cli("inspect", "-f", "{{.State.OOMKilled}}", name), capture_output=True, text=True)
    if oom.stdout.strip() != "true":
        raise Failure(f"docker says the container was not OOM-killed: {oom.stdout} {oom.stderr}")
    run_id = ctx.one("SELECT id FROM runs WHERE name = 'ctr-oom'")
    links = links_of(ctx, run_id)
    ctx.check(len(links) == 1, f"one container linked: {links}")
    if not links:
        return
    procs = container_procs(ctx, links[0]["container_id"])
    victims = [pr for pr in procs if pr["oom_killed"]]
    ctx.check(len(victims) == 1 and victims[0]["run_id"] == run_id and victims[0]["step_id"] == links[0]["step_id"]
              and victims[0]["exe"].endswith("memramp"), f"the OOM victim is the run's and step's: {procs}")
    sigs = ctx.query("SELECT step_id FROM signals WHERE kind = 'oom_kill' AND run_id = ?", run_id)
    ctx.check(len(sigs) == 1 and sigs[0][0] == links[0]["step_id"], f"one oom_kill signal in the run's step: {sigs}")
    mem = ctx.one("SELECT memory_limit_kb FROM steps WHERE id = ?", links[0]["step_id"])
    ctx.check(mem == 64 * 1024, f"the step's memory limit {mem} KiB (--memory 64m)")


def start_waiting_run(ctx, sock, db, script, name):
    args = [ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", name, "--", script]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@test
@plain_build_only("CI time: a private dockerd and podman per test; run under ASan by hand when this file changes (all passed, 2026-12-01)")
def identical_containers_of_two_runs_at_one_moment_are_ambiguous(ctx):
    """Two runs (daemon mode) start `docker run IMAGE /bin/cpuburn 1000` at the same moment
    (both wait on a FIFO the test closes): both CLIs are alive and match each container's
    first program, so neither container is given to a run, and each run says so in
    container_links, `show --json`, `show` and `explain --json`."""
    d = Docker(ctx)
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db)
    # Each script blocks reading its own FIFO; the test opens both and closes them at
    # once, so both CLIs start within a few ms, well before docker starts either container.
    fifos = [ctx.path(f"go-{i}") for i in (1, 2)]
    for f in fifos:
        os.mkfifo(f)
    cmd = " ".join(d.run(IMAGE, "/bin/cpuburn", "1000"))
    scripts = [write_script(ctx, f"same-{i}.sh", f"read -r _ < {f} || true\n{cmd}\n")
               for i, f in enumerate(fifos)]
    runs = [start_waiting_run(ctx, sock, db, s, f"ctr-same-{i}") for i, s in enumerate(scripts)]
    writers = [open(f, "w") for f in fifos]
    for w in writers:
        w.close()
    for p in runs:
        p.communicate(timeout=120)
        ctx.check(p.returncode == 0, f"tracer run exited {p.returncode}")
    time.sleep(1.5)
    run_ids = [ctx.one("SELECT id FROM runs WHERE launcher_pid = ?", p.pid, db=db) for p in runs]
    links = ctx.query("SELECT DISTINCT l.id, l.container_id, l.method, l.run_id, l.candidates FROM container_links l "
                      "JOIN container_link_candidates c ON c.link_id = l.id WHERE c.run_id IN (?, ?)",
                      *run_ids, db=db)
    ctx.check(len(links) == 2 and all(m == "ambiguous" and r is None and n == 2 for _, _, m, r, n in links),
              f"both containers ambiguous, in no run, two candidates each: {links}")
    for _, cid, *_ in links:
        cands = sorted(r for r, in ctx.query("SELECT c.run_id FROM container_link_candidates c JOIN container_links l "
                                             "ON l.id = c.link_id WHERE l.container_id = ?", cid, db=db))
        ctx.check(cands == sorted(run_ids), f"container {cid[:12]}: candidates {cands}, the two runs {run_ids}")
        procs = container_procs(ctx, cid, db)
        ctx.check(procs and all(pr["run_id"] is None for pr in procs) and
                  any(pr["exe"].endswith("cpuburn") and pr["cpu_ns"] >= 0.98e9 for pr in procs),
                  f"container {cid[:12]}'s burner ran (>= 980 ms) and is counted in no run: {procs}")
    for rid in run_ids:
        doc = show_json(ctx, rid, db)
        shown = doc.get("containers") or []
        ctx.check(len(shown) == 2 and all(k["ambiguous"] for k in shown), f"run {rid}: show --json {shown}")
        text = subprocess.run([ctx.bin("tracer"), "show", "--db", db, str(rid)], capture_output=True, text=True).stdout
        ctx.check("AMBIGUOUS" in text, f"run {rid}: show says so:\n{text[:1500]}")
        ex = subprocess.run([ctx.bin("tracer"), "explain", "--db", db, "--json", str(rid)],
                            capture_output=True, text=True)
        ctx.check(ex.returncode == 0 and len(json.loads(ex.stdout).get("containers", [])) == 2,
                  f"run {rid}: explain --json lists both: {ex.stdout[:800]} {ex.stderr}")
        burned = ctx.one("SELECT cpu_ns FROM runs WHERE id = ?", rid, db=db)
        ctx.check(burned < 700_000_000, f"run {rid} does not count a container it cannot claim: {burned} ns")
    ctx.stop(col)
    ctx.stop(agg)


CWL_TOOL = """cwlVersion: v1.2
class: CommandLineTool
requirements:
  DockerRequirement:
    dockerPull: {image}
baseCommand: [/bin/measure, truth.json, "--", /bin/cpuburn, "900"]
inputs: []
outputs:
  truth:
    type: File
    outputBinding:
      glob: truth.json
"""


@test
@plain_build_only("CI time: a private dockerd and podman per test; run under ASan by hand when this file changes (all passed, 2026-12-01)")
def cwltool_docker_requirement_step_is_the_tool_in_its_container(ctx):
    """cwltool with a DockerRequirement (the real docker): one step, the tool run in the
    container and named by it; cwltool's `docker images` and its `docker stats` monitor
    (which it kills) are the engine's helpers, in no step and no failure."""
    need("/usr/bin/cwltool")
    d = Docker(ctx)
    tool = ctx.path("burn.cwl")
    with open(tool, "w") as f:
        f.write(CWL_TOOL.format(image=IMAGE))
    outdir = ctx.path("cwl-out")
    env = dict(os.environ, PATH="/usr/bin:" + os.environ["PATH"], DOCKER_HOST=f"unix://{d.sock}")
    p = ctx.tracer_run(["cwltool", "--quiet", "--outdir", outdir, tool], "--run", "ctr-cwl", env=env)
    if p.returncode != 0:
        raise Failure(f"cwltool failed {p.returncode}: {p.stderr[-1500:]}")
    inside = truth(os.path.join(outdir, "truth.json"))
    run_id = ctx.one("SELECT id FROM runs WHERE name = 'ctr-cwl'")
    engine, status = ctx.one("SELECT engine, status FROM runs WHERE id = ?", run_id)
    steps = ctx.query("SELECT id, name, status, container_id, cpu_ns FROM steps WHERE run_id = ?", run_id)
    links = links_of(ctx, run_id)
    ctx.check(engine == "cwltool" and status == "ok", f"run {engine} {status}")
    ctx.check(len(steps) == 1 and steps[0][1] == "measure" and steps[0][2] == "ok",
              f"one step, the tool in the container: {steps}")
    ctx.check(len(links) == 1 and steps and links[0]["step_id"] == steps[0][0] and steps[0][3] == links[0]["container_id"],
              f"the step holds the container: {links}")
    if steps:
        print(f"       cwltool step {steps[0][1]}: CPU {steps[0][4] / 1e6:.1f} ms, wait4 inside "
              f"{cpu(inside) / 1e6:.1f} ms", flush=True)
        ctx.check(steps[0][4] >= cpu(inside) * (1 - TOL_FRAC) - TOL_NS,
                  f"the step's CPU {steps[0][4]} holds the tool's {cpu(inside)} (wait4 inside)")
    clis = ctx.query("SELECT argv, helper, step_id, signal FROM processes WHERE run_id = ? AND exe LIKE '%/docker'", run_id)
    plumbing = [(json.loads(a)[1], h, s, sig) for a, h, s, sig in clis if json.loads(a)[1] != "run"]
    ctx.check(plumbing and all(h == 1 and s is None for _, h, s, _ in plumbing),
              f"docker images/stats are helpers outside every step: {plumbing}")
    # (A busy machine may add cpu_contention warnings about cwltool itself: not asked here.)
    bad = ctx.query("SELECT g.kind, g.severity, g.message FROM signals g JOIN processes p ON p.id = g.process_id "
                    "WHERE g.run_id = ? AND g.severity != 'info' AND p.exe LIKE '%/docker'", run_id)
    ctx.check(not bad, f"no warning or failure from cwltool's docker plumbing: {bad}")
    if links:
        burn = [pr for pr in container_procs(ctx, links[0]["container_id"]) if pr["exe"].endswith("cpuburn")]
        ctx.check(burn and close(burn[0]["cpu_ns"], cpu(inside)),
                  f"the burner {burn and burn[0]['cpu_ns']} vs wait4 inside {cpu(inside)} (2% + 20 ms)")


@test
@plain_build_only("CI time: a private dockerd and podman per test; run under ASan by hand when this file changes (all passed, 2026-12-01)")
def podman_step_fails_by_the_tool_in_its_container(ctx):
    """A script's `podman run` whose program exits 5 (memhog's own exit code), the script
    passing it on: the step is named by that program, not by podman or the conmon it
    forks; `explain` gives that program as the cause, not podman, and none of the
    runtime's routine probes (podman's hooks.d, podman-machine, short-name aliases;
    runc's user lookup in the image before the command ran) as evidence."""
    pm = Podman(ctx)
    cmd = " ".join(pm.run(IMAGE, "/bin/memhog", "8", "5", "/out/hwm"))
    script = write_script(ctx, "podman-fails.sh", f"{cmd}\nexit $?\n")
    p = ctx.tracer_run([script], "--run", "ctr-podman-fail")
    ctx.check(p.returncode == 5, f"the script passes memhog's 5 on: {p.returncode} {p.stderr[-500:]}")
    run_id = ctx.one("SELECT id FROM runs WHERE name = 'ctr-podman-fail'")
    steps = ctx.query("SELECT name, status, exit_code, container_id FROM steps WHERE run_id = ?", run_id)
    links = links_of(ctx, run_id)
    ctx.check(len(steps) == 1 and steps[0][:3] == ("memhog", "failed", 5) and links
              and steps[0][3] == links[0]["container_id"], f"one step, memhog's, in its container: {steps} {links}")
    ex = subprocess.run([ctx.bin("tracer"), "explain", "--db", ctx.db, "--json", str(run_id)],
                        capture_output=True, text=True)
    doc = json.loads(ex.stdout)
    causes = [(g.get("message"), g.get("evidence")) for g in doc.get("failure", [])]
    ctx.check(causes and "memhog" in causes[0][0] and "podman" not in causes[0][0],
              f"the cause is memhog in the container, not podman: {causes}")
    # runc, in the container's first process before it ran memhog, looks the user up in
    # the image's /etc/passwd and /etc/group (absent here): the runtime's, not memhog's.
    probes = [e for _, ev in causes for e in json.dumps(ev).split('"')
              if "hooks.d" in e or "podman-machine" in e or "short-name-aliases" in e
              or e in ("/etc/passwd", "/etc/group")]
    ctx.check(not probes, f"the runtime's routine probes are not evidence: {probes}")
