"""Engine jobs and what runs beside them, on real engines: Toil (toil-cwl-runner and a
Python workflow), a Snakemake retry, deny-listed programs inside a script step, and the
installed daemons recording the same runs and steps as `tracer run`."""
import json
import os
import re
import shutil
import subprocess
import time

from harness import Failure, plain_build_only, load_json, start_daemons, test, write_script

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")

TOIL_OWN = {"CWLWorkflow", "CWLScatter", "CWLGather", "ResolveIndirect", "CWLJobWrapper", "SelfJob",
            "EncapsulatedJob"}
BURN_MS = 300


def issued_jobs(log):
    """(name, job id) of every job Toil's leader says it issued."""
    return re.findall(r"Issued job '([^']+)' (?:\S+ )?(kind-\S+/instance-\S+) v\d", log)


def rows_of(ctx, run_id, db=None):
    keys = ("id", "step_id", "argv", "cpu_ns", "helper", "exe")
    rows = ctx.query("SELECT id, step_id, argv, cpu_user_ns + cpu_sys_ns, helper, exe FROM processes "
                     "WHERE run_id = ?", run_id, db=db)
    return [dict(zip(keys, r), argv=json.loads(r[2]) if r[2] else []) for r in rows]


def check_sums(ctx, run_id, what, db=None):
    """Every total a user reads is the sum of the rows: the run's and each step's CPU and
    process count against its process rows (exactly: the same kernel counters), in SQLite
    and in `tracer show --json`."""
    rows = rows_of(ctx, run_id, db)
    cpu, procs = ctx.one("SELECT cpu_ns, processes FROM runs WHERE id = ?", run_id, db=db)
    n_rows = ctx.one("SELECT count(DISTINCT pid || '/' || proc_start_boot_ns) FROM processes WHERE run_id = ?",
                     run_id, db=db)
    ctx.check(cpu == sum(r["cpu_ns"] for r in rows) and procs == n_rows,
              f"{what}: run CPU {cpu} / {procs} processes, rows sum {sum(r['cpu_ns'] for r in rows)} / {n_rows}")
    for sid, scpu, sprocs, name in ctx.query("SELECT id, cpu_ns, processes, name FROM steps WHERE run_id = ?",
                                             run_id, db=db):
        mine = [r for r in rows if r["step_id"] == sid]
        pids = ctx.one("SELECT count(DISTINCT pid || '/' || proc_start_boot_ns) FROM processes WHERE step_id = ?",
                       sid, db=db)
        ctx.check(scpu == sum(r["cpu_ns"] for r in mine) and sprocs == pids,
                  f"{what}: step {name} CPU {scpu} / {sprocs} processes, rows sum "
                  f"{sum(r['cpu_ns'] for r in mine)} / {pids}")
    p = subprocess.run([ctx.bin("tracer"), "show", "--db", db or ctx.db, str(run_id), "--json"],
                       capture_output=True, text=True, timeout=60)
    shown = json.loads(p.stdout)

    def flat(prs):
        for pr in prs:
            yield pr
            yield from flat(pr.get("children") or [])
    seen = sum(pr["cpu_user_ns"] + pr["cpu_sys_ns"] for pr in flat(shown["processes"]))
    ctx.check(shown["totals"]["cpu_ns"] == seen == cpu,
              f"{what}: show --json total {shown['totals']['cpu_ns']}, its process rows {seen}, run {cpu}")
    return rows, shown

UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def seconds(text):
    """'1.38s', '113ms', '598us' as tracer prints them -> seconds."""
    m = re.fullmatch(r"([0-9.]+)(ns|us|ms|s)", text)
    return float(m.group(1)) * UNITS[m.group(2)] if m else None


def check_report_and_show(ctx, run_id, rows, what, db=None):
    """The HTML report's run and step CPU, and `tracer show`'s header and step lines, equal
    the sums of the process rows (the report exactly; show to its printed precision:
    3 significant digits, so 1% + 1 ms)."""
    out = ctx.path(f"{what}-report.html")
    subprocess.run([ctx.bin("tracer"), "report", "--db", db or ctx.db, "--html", out, str(run_id)],
                   capture_output=True, text=True, timeout=120, check=True)
    page = open(out).read()
    data = json.loads(re.search(r'<script type="application/json" id="tracer-data">(.*?)</script>', page,
                                re.S).group(1))
    total = sum(r["cpu_ns"] for r in rows)
    procs_cpu = sum(pr[data["proc_columns"].index("cpu_ns")] for pr in data["procs"])
    ctx.check(data["run"]["cpu_ns"] == total == procs_cpu,
              f"{what}: report run CPU {data['run']['cpu_ns']}, its process rows {procs_cpu}, SQLite rows {total}")
    by_step = {}
    for r in rows:
        by_step[r["step_id"]] = by_step.get(r["step_id"], 0) + r["cpu_ns"]
    for st in (dict(zip(data["step_columns"], r)) for r in data["steps"]):
        ctx.check(st["cpu_ns"] == by_step.get(st["id"], 0),
                  f"{what}: report step {st['name']} CPU {st['cpu_ns']}, its rows {by_step.get(st['id'], 0)}")
    text = subprocess.run([ctx.bin("tracer"), "show", "--db", db or ctx.db, str(run_id)], capture_output=True,
                          text=True, timeout=60, check=True).stdout
    header = re.search(r"processes.*?, CPU (\S+?),", text)
    got = seconds(header.group(1)) if header else None
    ctx.check(got is not None and abs(got - total / 1e9) <= 0.01 * total / 1e9 + 1e-3,
              f"{what}: show's header CPU {header.group(1) if header else None} vs rows {total / 1e9:.4f} s")
    names = dict(ctx.query("SELECT id, name FROM steps WHERE run_id = ?", run_id, db=db))
    lines = list(re.finditer(r"^  step (\d+): .*? CPU (\S+) \(", text, re.M))
    ctx.check(len(lines) == len(names), f"{what}: show prints {len(lines)} step lines for {len(names)} steps")
    for m in lines:
        sid, cpu = int(m.group(1)), seconds(m.group(2))
        want = by_step.get(sid, 0) / 1e9
        ctx.check(cpu is not None and abs(cpu - want) <= 0.01 * want + 1e-3,
                  f"{what}: show's step {names.get(sid)} line CPU {m.group(2)} vs its rows {want:.4f} s")


def toil_run(ctx, cmd, name):
    truth = ctx.path(f"{name}-wait4.json")
    p = ctx.tracer_run([ctx.helper("measure"), truth, "--", *cmd], "--run", name)
    if p.returncode != 0:
        raise Failure(f"{name} failed ({p.returncode}): {p.stderr[-3000:]}")
    run_id = ctx.one("SELECT id FROM runs WHERE name = ?", name)
    t = load_json(truth)
    return run_id, p.stderr + p.stdout, (t["utime_ns"] + t["stime_ns"]) / 1e9


def check_toil(ctx, run_id, log, wait4_s, want_names):
    engine, store, cpu_ns = ctx.one("SELECT engine, toil_job_store, cpu_ns FROM runs WHERE id = ?", run_id)
    ctx.check(engine == "toil", f"engine {engine}")
    # The leader waits for every worker: wait4 of it holds the whole run, 2% + 100 ms.
    ctx.close(cpu_ns / 1e9, wait4_s, 0.02 * wait4_s + 0.1, "run CPU s vs wait4 of the leader")
    jobs = issued_jobs(log)
    user = sorted(j for j in jobs if j[0] not in TOIL_OWN)
    steps = ctx.query("SELECT name, engine_job, cpu_ns, id FROM steps WHERE run_id = ?", run_id)
    ctx.check(len(user) >= 3, f"Toil's log names its jobs: {jobs}")
    ctx.check(sorted(s[1] for s in steps) == sorted(j[1] for j in user),
              f"one step per user job Toil issued: steps {sorted(s[1] for s in steps)}, Toil {user}")
    ctx.check(sorted(s[0] for s in steps) == sorted(want_names(j) for j in user),
              f"steps named by the user's tool or job: {sorted(s[0] for s in steps)}")
    ctx.check(all(store and store.startswith("file:") for _ in [0]), f"job store column {store}")
    rows, _ = check_sums(ctx, run_id, "toil")
    check_report_and_show(ctx, run_id, rows, "toil")
    for r in rows:
        if "_toil_worker" in " ".join(r["argv"][:3]):
            words = " ".join(r["argv"]).split("_toil_worker", 1)[1].split()
            if words and words[0] in TOIL_OWN:
                ctx.check(r["step_id"] is None, f"Toil's own job {words[0]} is outside the steps")
        if r["exe"] == ctx.helper("cpuburn"):
            # The tool's own clock: it spins until BURN_MS of CPU, then exits.
            ctx.check(BURN_MS * 1e6 <= r["cpu_ns"] <= BURN_MS * 1e6 + 50e6 and r["step_id"] is not None,
                      f"cpuburn row {r['cpu_ns'] / 1e6:.1f} ms in step {r['step_id']}")
    return steps


@test
@plain_build_only("CI time: real Toil, Snakemake and cwltool take minutes; run under ASan by hand when this file changes (all passed, 2026-12-01)")
def toil_cwl_scatter_jobs_are_steps_named_by_their_tool(ctx):
    """toil-cwl-runner on a scatter over 3 inputs: 3 steps, one per CWLJob Toil's log says
    it issued (by job id), each named by its tool; Toil's CWLWorkflow, CWLScatter,
    CWLGather and ResolveIndirect jobs are the engine's, outside every step; the run's CPU
    against wait4 of the leader, every total the sum of its rows."""
    d = ctx.path("toilcwl")
    os.makedirs(d)
    burn = ctx.helper("cpuburn")
    with open(os.path.join(d, "burn.cwl"), "w") as f:
        f.write(f"cwlVersion: v1.2\nclass: CommandLineTool\nbaseCommand: [{burn}, '{BURN_MS}']\n"
                "inputs:\n  word:\n    type: string\n    inputBinding: {position: 1}\n"
                "stdout: out.txt\noutputs:\n  out: {type: stdout}\n")
    with open(os.path.join(d, "scatter.cwl"), "w") as f:
        f.write("cwlVersion: v1.2\nclass: Workflow\nrequirements:\n  ScatterFeatureRequirement: {}\n"
                "inputs:\n  words: string[]\noutputs:\n  outs:\n    type: File[]\n    outputSource: burn/out\n"
                "steps:\n  burn:\n    run: burn.cwl\n    scatter: word\n    in:\n      word: words\n"
                "    out: [out]\n")
    with open(os.path.join(d, "in.yml"), "w") as f:
        f.write("words: [a, b, c]\n")
    run_id, log, wait4_s = toil_run(ctx, ["toil-cwl-runner", "--jobStore", os.path.join(d, "js"), "--outdir",
                                          os.path.join(d, "out"), "--no-container",
                                          os.path.join(d, "scatter.cwl"), os.path.join(d, "in.yml")], "toilcwl")
    steps = check_toil(ctx, run_id, log, wait4_s, lambda j: "cpuburn")
    ctx.check(len(steps) == 3, f"3 steps for 3 scattered jobs: {steps}")


@test
@plain_build_only("CI time: real Toil, Snakemake and cwltool take minutes; run under ASan by hand when this file changes (all passed, 2026-12-01)")
def toil_python_workflow_is_a_run_with_its_jobs(ctx):
    """A Toil Python workflow (Job.Runner.startToil: a root job adding 3 children that each
    run a tool): the leader, a plain python3 process until its first worker, is a Toil run;
    one step per job Toil issued, named by its job function; CPU against wait4."""
    d = ctx.path("toilpy")
    os.makedirs(d)
    flow = os.path.join(d, "flow.py")
    with open(flow, "w") as f:
        f.write("import subprocess\nfrom toil.job import Job\n\n"
                f"def burn(job, n):\n    subprocess.run(['{ctx.helper('cpuburn')}', '{BURN_MS}'], check=True)\n\n"
                "def root(job):\n    for i in range(3):\n        job.addChildJobFn(burn, i)\n\n"
                "if __name__ == '__main__':\n    opts = Job.Runner.getDefaultArgumentParser().parse_args()\n"
                "    opts.logLevel = 'INFO'\n    Job.Runner.startToil(Job.wrapJobFn(root), opts)\n")
    run_id, log, wait4_s = toil_run(ctx, ["/usr/bin/python3", flow, os.path.join(d, "js")], "toilpy")
    steps = check_toil(ctx, run_id, log, wait4_s, lambda j: j[0])
    ctx.check(sorted(s[0] for s in steps) == ["burn", "burn", "burn", "root"], f"steps {steps}")
    # Toil's leader probes for GPUs by running nvidia-smi: where it is not installed, that
    # fork's exec fails (exit 255). The run succeeded: a handled failure, not a failed tool.
    doc = json.loads(subprocess.run([ctx.bin("tracer"), "show", "--db", ctx.db, "--json", str(run_id)],
                                    capture_output=True, text=True, timeout=60, check=True).stdout)

    def flat(prs):
        for pr in prs:
            yield pr
            yield from flat(pr.get("children") or [])
    failed = [(pr["pid"], pr.get("exit_code"), pr.get("exec_failed")) for pr in flat(doc["processes"])
              if pr.get("exit_code") or pr.get("signal")]
    if shutil.which("nvidia-smi") is None:
        ctx.check(failed and all(f[1] == 255 and f[2] for f in failed),
                  f"the failures of the ok run are forks whose exec failed (nvidia-smi is not installed): {failed}")
        ctx.check(f"{len(failed)} failed, handled: the run succeeded" in log,
                  f"tracer run's header calls them handled: {log[log.find('Run '):][:400]}")
    pipeline = ctx.one("SELECT pipeline FROM runs WHERE id = ?", run_id)
    ctx.check(pipeline == "flow", f"pipeline named after the workflow script: {pipeline}")


@test
@plain_build_only("CI time: real Toil, Snakemake and cwltool take minutes; run under ASan by hand when this file changes (all passed, 2026-12-01)")
def toil_retry_is_known_by_its_job_id(ctx):
    """A Toil Python job that fails its first attempt after running `touch` (a marker) and
    succeeds on its retry running gzip (--retryCount 1): Toil's log issues the job twice
    under one job id; tracer has two steps with that engine_job, failed then ok, and one
    `retried` signal on the second naming the first."""
    d = ctx.path("toilretry")
    os.makedirs(d)
    flow = os.path.join(d, "flakyflow.py")
    with open(flow, "w") as f:
        f.write("import os, subprocess\nfrom toil.job import Job\n\n"
                "def flaky(job, d):\n    marker = os.path.join(d, 'marker')\n"
                "    if not os.path.exists(marker):\n        subprocess.run(['touch', marker], check=True)\n"
                "        raise RuntimeError('first attempt fails')\n"
                "    subprocess.run(['gzip', '-c', '/etc/services'], stdout=subprocess.DEVNULL, check=True)\n\n"
                "if __name__ == '__main__':\n    opts = Job.Runner.getDefaultArgumentParser().parse_args()\n"
                f"    opts.logLevel = 'INFO'\n    Job.Runner.startToil(Job.wrapJobFn(flaky, '{d}'), opts)\n")
    p = ctx.tracer_run(["/usr/bin/python3", flow, "--retryCount", "1", os.path.join(d, "js")], "--run", "toilretry")
    ctx.check(p.returncode == 0, f"the workflow succeeded on its retry: {p.returncode} {p.stderr[-1500:]}")
    jobs = issued_jobs(p.stderr + p.stdout)
    ctx.check(len(jobs) == 2 and jobs[0] == jobs[1], f"Toil issued one job twice: {jobs}")
    run_id = ctx.one("SELECT id FROM runs WHERE name = 'toilretry'")
    steps = ctx.query("SELECT id, name, status, engine_job FROM steps WHERE run_id = ? ORDER BY start_ns", run_id)
    ctx.check([(s[1], s[2], s[3]) for s in steps] == [("flaky", "failed", jobs[0][1]), ("flaky", "ok", jobs[0][1])]
              if jobs else False, f"two attempts of the job: {steps}")
    sigs = ctx.query("SELECT step_id, details FROM signals WHERE run_id = ? AND kind = 'retried'", run_id)
    ctx.check(len(sigs) == 1 and len(steps) == 2 and sigs[0][0] == steps[1][0] and
              json.loads(sigs[0][1] or "{}").get("previous_step") == steps[0][0],
              f"one retried signal on the second attempt, naming the first: {sigs}")


@test
@plain_build_only("CI time: real Toil, Snakemake and cwltool take minutes; run under ASan by hand when this file changes (all passed, 2026-12-01)")
def snakemake_retry_is_known_by_the_job(ctx):
    """`snakemake --retries 1`: a rule whose first attempt runs `mkdir` and fails (exit 3),
    whose second runs the real tool (gzip). The retry is recognised by the job (its command
    and work dir), not by the program it ran first: one `retried` signal on the second
    attempt's step, naming the first; and both attempts carry one name, the tool's that
    the retry ran, in the steps table, the first attempt's failure signal and the outbox
    (its rewrite queued again for the shipper). Recorded by the daemons, whose outbox is
    on; ground truth: the programs in each step's process rows."""
    d = ctx.path("smkretry")
    os.makedirs(d)
    os.chmod(ctx.tmp, 0o777)
    with open(os.path.join(d, "Snakefile"), "w") as f:
        f.write("rule all:\n    input: 'out.txt'\n\n"
                "rule work:\n    output: 'out.txt'\n    shell:\n"
                "        'if [ ! -e marker ]; then touch marker; mkdir -p x; exit 3; fi; "
                "gzip -c /etc/services > {output}'\n")
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db, extra_agg=("--outbox-mib", "16"))
    p, run_id = ctx.daemon_run(sock, db, ["snakemake", "--cores", "1", "--retries", "1", "--scheduler",
                                          "greedy", "-s", os.path.join(d, "Snakefile"), "-d", d],
                               "--run", "smkretry", timeout=300)
    ctx.stop(col)
    ctx.stop(agg)
    ctx.check(p.returncode == 0 and os.path.exists(os.path.join(d, "out.txt")),
              f"snakemake succeeded on its retry: {p.returncode} {p.stderr[-1500:]}")
    steps = ctx.query("SELECT id, name, status FROM steps WHERE run_id = ? ORDER BY start_ns", run_id, db=db)
    ran = {sid: {os.path.basename(json.loads(a)[0]) for (a,) in
                 ctx.query("SELECT argv FROM processes WHERE step_id = ? AND argv IS NOT NULL", sid, db=db)}
           for sid, _, _ in steps}
    ctx.check(len(steps) == 2 and [s[2] for s in steps] == ["failed", "ok"] and "mkdir" in ran[steps[0][0]]
              and "gzip" not in ran[steps[0][0]] and "gzip" in ran[steps[1][0]],
              f"two attempts, the first ran mkdir, the second gzip: {steps} {ran}")
    ctx.check(len(steps) == 2 and steps[0][1] == steps[1][1] == "gzip",
              f"both attempts named after the tool of the retry: {steps}")
    sigs = ctx.query("SELECT step_id, message, details FROM signals WHERE run_id = ? AND kind = 'retried'", run_id,
                     db=db)
    ctx.check(len(sigs) == 1 and len(steps) == 2 and sigs[0][0] == steps[1][0],
              f"one retried signal on the second attempt: {sigs}")
    if sigs and len(steps) == 2:
        ctx.check(json.loads(sigs[0][2] or "{}").get("previous_step") == steps[0][0],
                  f"it names the failed attempt: {sigs[0]}")
        failed = ctx.query("SELECT message FROM signals WHERE step_id = ? AND kind = 'tool_failed'", steps[0][0],
                           db=db)
        ctx.check(len(failed) == 1 and "step 'gzip'" in failed[0][0] and "'mkdir'" not in failed[0][0],
                  f"the first attempt's failure says the job's name: {failed}")
        shipped = ctx.query("SELECT payload FROM outbox WHERE kind = 'steps' AND record_key = ? ORDER BY id",
                            str(steps[0][0]), db=db)
        ctx.check(shipped and json.loads(shipped[-1][0]).get("name") == "gzip",
                  f"the rewrite is queued for the shipper, newest last: {[json.loads(x[0]).get('name') for x in shipped]}")


PROBES = r"""
import os, subprocess, sys
# As engines probe for optional programs (Toil's nvidia-smi): the ones that are not there.
caught = 0
for name in ("tracer-no-such-gpu-probe", "tracer-no-such-runtime", "tracer-no-such-helper"):
    try:
        subprocess.run([name, "--version"], stdout=subprocess.DEVNULL)
    except FileNotFoundError:
        caught += 1
# A real failure beside them: a fork that ran and wrote, then exited 255 (not an exec error).
pid = os.fork()
if pid == 0:
    with open(os.devnull, "w") as f:
        f.write("x" * 4096)
    os._exit(255)
os.waitpid(pid, 0)
subprocess.run(["gzip", "-c", "/etc/services"], stdout=subprocess.DEVNULL, check=True)
print(caught, pid)
sys.exit(int(sys.argv[1]))
"""


@test
def programs_python_could_not_start_are_handled_failures(ctx):
    """A Python program probes three programs that are not installed (subprocess forks; each
    child's exec fails, it reports the errno to the parent and exits 255) and catches the
    FileNotFoundError, forks one real failure (a child that writes 4 KiB and exits 255),
    runs gzip and exits 0, then the same exiting 1. Ground truth: the errors the program
    caught and the pid it forked. In the ok run, the report's header counts the 4 failures
    as handled; each probe's row is marked exec_failed (show --json) and shown as a fork of
    its parent that could not start a program, the real failure is not; in the failed
    run the failures are not called handled, the probes are still marked."""
    script = ctx.path("probes.py")
    with open(script, "w") as f:
        f.write(PROBES)
    for code in (0, 1):
        p = ctx.tracer_run(["/usr/bin/python3", script, str(code)], "--run", f"probes-{code}", expect=code)
        caught, forked = (int(x) for x in p.stdout.split())
        ctx.check(caught == 3, f"the program caught 3 exec errors: {p.stdout}")
        run_id = ctx.one("SELECT id FROM runs WHERE name = ?", f"probes-{code}")
        doc = json.loads(subprocess.run([ctx.bin("tracer"), "show", "--db", ctx.db, "--json", str(run_id)],
                                        capture_output=True, text=True, timeout=60, check=True).stdout)

        def flat(prs):
            for pr in prs:
                yield pr
                yield from flat(pr.get("children") or [])
        procs = list(flat(doc["processes"]))
        failed = [pr for pr in procs if pr.get("exit_code")]
        probes = [pr for pr in procs if pr.get("exec_failed")]
        n_failed = caught + 1 + code  # and the program itself, when it exits 1
        ctx.check(len(failed) == n_failed and doc["totals"]["failed_processes"] == n_failed,
                  f"run exit {code}: the probes and the real failure failed: {[(f['pid'], f['exit_code']) for f in failed]}")
        ctx.check(len(probes) == caught == doc["totals"].get("exec_failed_processes") and
                  all(pr["exit_code"] == 255 and pr["argv"] == ["/usr/bin/python3", script, str(code)]
                      for pr in probes) and forked not in [pr["pid"] for pr in probes],
                  f"run exit {code}: the {caught} probes marked exec_failed, the real failure (pid {forked}) not: "
                  f"{[(pr['pid'], pr.get('wchar')) for pr in failed]}")
        header = re.search(r"\d+ processes \(([^)]*)\)", p.stderr)
        want = f"{n_failed} failed, handled: the run succeeded" if code == 0 else f"{n_failed} failed"
        ctx.check(header and header.group(1) == want, f"run exit {code}: the header says {want!r}: "
                  f"{header.group(0) if header else p.stderr[:600]}")
        marked = [ln for ln in p.stderr.splitlines() if "[exec failed in a fork of]" in ln]
        ctx.check(len(marked) == caught and not any(re.match(rf"\S*\s*{forked}\b", ln.strip()) for ln in marked),
                  f"run exit {code}: the report marks the {caught} probes and not pid {forked}: {marked}")


@test
@plain_build_only("CI time: real Toil, Snakemake and cwltool take minutes; run under ASan by hand when this file changes (all passed, 2026-12-01)")
def deny_listed_programs_count_in_rows_and_totals(ctx):
    """A script step runs deny-listed root programs (apt-get, dpkg from tools.deny): their
    rows are kept (helper = 1), so the step's and run's CPU and process counts equal the
    sum of the visible rows in SQLite and `show --json`, the report's header equals the
    run's total; no step is named after apt's helpers."""
    # Each does work enough to be a step (not a helper of a few ms: docs/correlation.md).
    script = write_script(ctx, "denied.sh", "apt-get indextargets > /dev/null\n"
                          "dpkg --verify coreutils bash > /dev/null || true\n"
                          f"{ctx.helper('cpuburn')} 100\n")
    ctx.tracer_run(["bash", script], "--run", "denied", expect=0)
    run_id = ctx.one("SELECT id FROM runs WHERE name = 'denied'")
    rows, _ = check_sums(ctx, run_id, "deny-listed")
    denied = [r for r in rows if os.path.basename(r["exe"] or "") in ("apt-get", "dpkg")]
    ctx.check(len(denied) >= 2 and all(r["helper"] == 1 and r["step_id"] for r in denied),
              f"deny-listed rows kept, helper, in their steps: {[(r['exe'], r['helper'], r['step_id']) for r in denied]}")
    names = [n for (n,) in ctx.query("SELECT name FROM steps WHERE run_id = ? ORDER BY start_ns", run_id)]
    ctx.check(names == ["apt-get", "dpkg", "cpuburn"], f"steps named by their own programs: {names}")
    check_report_and_show(ctx, run_id, rows, "deny-listed")


def snapshot(ctx, run_id, db):
    """What a user compares between two records of one command: engine, steps by name with
    the programs in each."""
    engine = ctx.one("SELECT engine FROM runs WHERE id = ?", run_id, db=db)
    steps = {}
    for sid, name in ctx.query("SELECT id, name FROM steps WHERE run_id = ?", run_id, db=db):
        progs = sorted(os.path.basename(e or "?") for (e,) in ctx.query(
            "SELECT exe FROM processes WHERE step_id = ?", sid, db=db))
        steps.setdefault(name, []).append(progs)
    return engine, sorted((k, sorted(v)) for k, v in steps.items())


def marked_run(ctx, db, marker):
    """The run holding the process whose argv carries marker (others run on this host too)."""
    rows = ctx.query("SELECT DISTINCT run_id FROM processes WHERE argv LIKE ?", f"%{marker}%", db=db)
    ids = [r[0] for r in rows if r[0]]
    return ids[0] if len(ids) == 1 else None


@test
@plain_build_only("CI time: real Toil, Snakemake and cwltool take minutes; run under ASan by hand when this file changes (all passed, 2026-12-01)")
def daemons_record_what_tracer_run_records(ctx):
    """One workload, recorded four ways on the same host: a self-hosted `tracer run`; the
    daemons (scope all) seeing it started from a shell and from a Python subprocess (as a
    test harness, a driver script or cron's children start it); and `tracer run` joining the
    running daemons. Engine, steps, step names and membership are the same every way, for a
    script of steps, a Snakemake pipeline, a cwltool pipeline and a Toil Python workflow."""
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db)
    burn = ctx.helper("cpuburn")
    smk = ctx.path("smkpipe")
    os.makedirs(smk)
    with open(os.path.join(smk, "Snakefile"), "w") as f:
        f.write("rule all:\n    input: 'b.gz'\n\nrule a:\n    output: 'a.txt'\n    shell: 'sort /etc/services > {output}'\n\n"
                "rule b:\n    input: 'a.txt'\n    output: 'b.gz'\n    shell: 'gzip -c {input} > {output}'\n")
    cwl = os.path.join(FIXTURES, "cwl", "workflow.cwl")
    numbers = ctx.path("numbers.txt")
    with open(numbers, "w") as f:
        f.write("\n".join(str((i * 7919) % 100003) for i in range(50000)) + "\n")
    bulk = ctx.path("bulk.txt")  # enough for gzip to take over 50 ms
    with open(bulk, "w") as f:
        f.write("\n".join(os.urandom(32).hex() for _ in range(200000)) + "\n")
    flow = ctx.path("flow.py")
    with open(flow, "w") as f:
        f.write("import subprocess\nfrom toil.job import Job\n\n"
                f"def burn(job):\n    subprocess.run(['{burn}', '50'], check=True)\n\n"
                "def root(job):\n    job.addChildJobFn(burn)\n    job.addChildJobFn(burn)\n\n"
                "if __name__ == '__main__':\n    opts = Job.Runner.getDefaultArgumentParser().parse_args()\n"
                "    Job.Runner.startToil(Job.wrapJobFn(root), opts)\n")

    def outdir(m):
        d = ctx.path(f"out-{m}")
        os.makedirs(d, mode=0o777, exist_ok=True)
        return d
    workloads = {
        # Each step does real work (a helper of a few ms would not be a step: docs/correlation.md).
        "script": lambda m: ["bash", write_script(ctx, f"steps-{m}.sh", f"# {m}\n{burn} 80\nsort {bulk} > /dev/null\n"
                                                 f"gzip -c {bulk} > /dev/null\n")],
        "snakemake": lambda m: ["snakemake", "--cores", "1", "--scheduler", "greedy", "-q", "--forceall",
                                "-s", os.path.join(smk, "Snakefile"), "-d", smk, "--config", f"m={m}"],
        "cwltool": lambda m: ["cwltool", "--quiet", "--no-container", "--outdir", outdir(m), cwl, "--infile", numbers],
        "toil": lambda m: ["/usr/bin/python3", flow, os.path.join(outdir(m), "js")],
    }
    for kind, cmd_of in workloads.items():
        seen = {}
        m = f"{kind}-selfhost"
        own_db = ctx.path(f"{m}.db")
        p = subprocess.run([ctx.bin("tracer"), "run", "--db", own_db, "--", *cmd_of(m)],
                           capture_output=True, text=True, timeout=300)
        ctx.check(p.returncode == 0, f"{m}: {p.stderr[-500:]}")
        seen["tracer run (own daemons)"] = snapshot(ctx, ctx.latest_run(db=own_db), own_db)
        for how in ("shell", "python"):
            m = f"{kind}-{how}"
            cmd = cmd_of(m)
            if how == "shell":
                subprocess.run(["bash", "-c", " ".join(f"'{a}'" for a in cmd) + "; true"], timeout=300,
                               capture_output=True)
            else:
                subprocess.run(cmd, timeout=300, capture_output=True)
            time.sleep(2)
            rid = marked_run(ctx, db, m)
            seen[f"daemons, from a {how}"] = snapshot(ctx, rid, db) if rid else None
        m = f"{kind}-joined"
        done, rid = ctx.daemon_run(sock, db, cmd_of(m), timeout=300)
        seen["tracer run (the daemons)"] = snapshot(ctx, rid, db) if rid else None
        # The self-hosted tracer run above, as the daemons saw it.
        rid = marked_run(ctx, db, f"{kind}-selfhost")
        seen["the self-hosted tracer run, seen by the daemons"] = snapshot(ctx, rid, db) if rid else None
        want = seen["tracer run (own daemons)"]
        ctx.check(want[0] == kind and len(want[1]) >= 2, f"{kind}: tracer run's own record {want}")
        for how, got in seen.items():
            ctx.check(got == want, f"{kind}, {how}: {got} where tracer run recorded {want}")
    ctx.stop(col)
    ctx.stop(agg)
