"""Batch jobs are part of the run and step that submitted them (correlate/batch.c), on a
private single-node Slurm with accounting started by the test. Ground truth is Slurm's own
accounting: sacct's TotalCPU of each job's step lines (JOB.batch, JOB.0; final within
seconds, where `sacct -X` can lag a minute), its JobID (JOB_TASK for array tasks) beside
JobIDRaw, and Submit/Start for the queue wait. The workloads burn CPU with
/work/shared/acceptance/burn.c's shape (compiled by the test from its own copy)."""
import json
import os
import subprocess
import time

from harness import Failure, plain_build_only, start_daemons, test
from slurm_cluster import SlurmCluster, parse_slurm_time

BURN_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
/* burn SECONDS: burn SECONDS of CPU (getrusage of itself). */
int main(int argc, char **argv)
{
	double want = argc > 1 ? atof(argv[1]) : 1.0;
	volatile double x = 0;
	struct rusage r;
	do {
		for (long i = 0; i < 2000000; i++)
			x += i * 0.5;
		getrusage(RUSAGE_SELF, &r);
	} while (r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + r.ru_stime.tv_sec +
		 r.ru_stime.tv_usec / 1e6 < want);
	return 0;
}
"""


def build_burn(ctx):
    src, exe = ctx.path("burn.c"), ctx.path("burn")
    with open(src, "w") as f:
        f.write(BURN_C)
    subprocess.run(["gcc", "-O1", "-o", exe, src], check=True)
    return exe


def workdir(ctx, name):
    d = ctx.path(name)
    os.mkdir(d)
    os.chmod(d, 0o777)
    return d


def sacct_jobs(cluster, workdir_path, expect=1, timeout=45):
    """{JobIDRaw: {"id": JobID, "cpu_ns": sum of its step lines' TotalCPU, "submit": s, "start": s}}
    for the jobs that started in workdir_path, once every step line has its TotalCPU."""
    fmt = "JobIDRaw,JobID,TotalCPU,WorkDir,Submit,Start,State"
    end = time.time() + timeout
    jobs = {}
    while time.time() < end:
        p = subprocess.run(["sacct", "-a", "-P", "-n", f"--format={fmt}", "-S", "now-1hour"],
                           env=cluster.env, capture_output=True, text=True, timeout=60)
        lines = [ln.split("|") for ln in p.stdout.splitlines() if ln.count("|") == 6]
        top = {raw: (jid, wd, sub, start, state) for raw, jid, _, wd, sub, start, state in lines if "." not in raw}
        jobs = {}
        for raw, (jid, wd, sub, start, state) in top.items():
            if wd != workdir_path or state.startswith("CANCELLED"):
                continue  # another test's, or one that never ran (held, then cancelled)
            steps = [parse_slurm_time(cpu) for r, _, cpu, _, _, _, _ in lines if r.startswith(raw + ".")]
            jobs[raw] = {"id": jid, "cpu_ns": sum(s or 0 for s in steps), "steps": len(steps),
                         "submit": sub, "start": start, "state": state}
        done = len(jobs) >= expect and all(j["state"] in ("COMPLETED", "FAILED") and j["steps"] for j in jobs.values())
        if done:
            return jobs
        time.sleep(1)
    return jobs


def slurm_time_s(text):
    return time.mktime(time.strptime(text, "%Y-%m-%dT%H:%M:%S"))


def show_json(ctx, run_id, db, env=None):
    p = subprocess.run([ctx.bin("tracer"), "show", "--db", db, "--json", str(run_id)],
                       capture_output=True, text=True, timeout=60, env=env)
    if p.returncode != 0:
        raise Failure(f"tracer show --json {run_id}: {p.returncode} {p.stderr}")
    return json.loads(p.stdout)


def job_cpu_in_run(ctx, run_id, db):
    """CPU of the run's processes by the Slurm job their cgroup shows (every image)."""
    return dict(ctx.query("SELECT slurm_job, sum(cpu_user_ns + cpu_sys_ns) FROM processes "
                          "WHERE run_id = ? AND slurm_job IS NOT NULL GROUP BY slurm_job", run_id, db=db))


def check_jobs_against_sacct(ctx, run_id, acct, db):
    """Every job is in this run and in no other, and its CPU there is sacct's within 1% or 10 ms."""
    mine = job_cpu_in_run(ctx, run_id, db)
    for raw, truth in acct.items():
        runs = ctx.query("SELECT DISTINCT run_id FROM processes WHERE slurm_job = ?", raw, db=db)
        ctx.check(runs == [(run_id,)], f"job {truth['id']} ({raw}) is in run {run_id} alone: {runs}")
        ctx.close(mine.get(raw), truth["cpu_ns"], max(10_000_000, truth["cpu_ns"] // 100),
                  f"job {truth['id']}: its CPU in the run vs sacct TotalCPU of its steps (ns)")
    total = sum(t["cpu_ns"] for t in acct.values())
    ours = sum(mine.get(raw, 0) for raw in acct)
    print(f"  jobs {sorted(t['id'] for t in acct.values())}: tracer {ours / 1e6:.1f} ms, "
          f"sacct {total / 1e6:.1f} ms")
    ctx.close(ours, total, max(10_000_000, total // 100), "the run's jobs' CPU vs the sum of sacct's (ns)")
    extra = ctx.query("SELECT slurm_job FROM processes WHERE run_id = ? AND slurm_job IS NOT NULL "
                      "AND slurm_job NOT IN (%s)" % ",".join("?" * len(acct)), run_id, *acct, db=db)
    ctx.check(not extra, f"no job in the run that sacct does not list for its work dir: {extra}")


def check_show_total(ctx, doc, run_id, acct, db):
    """show --json's run total, less what ran outside the jobs (the engine, its sbatch calls),
    is sacct's total over the jobs (1% or 10 ms)."""
    outside = ctx.one("SELECT coalesce(sum(cpu_user_ns + cpu_sys_ns), 0) FROM processes "
                      "WHERE run_id = ? AND slurm_job IS NULL", run_id, db=db)
    total = sum(t["cpu_ns"] for t in acct.values())
    shown = (doc.get("totals") or {}).get("cpu_ns")
    ctx.close(shown - outside if shown is not None else None, total, max(10_000_000, total // 100),
              "show --json: the run's CPU less its processes outside jobs vs sacct's jobs (ns)")


def check_run_total_is_its_rows(ctx, run_id, db):
    """What `show` reads as the run's CPU is the sum of the rows it lists (1% or 10 ms: exit tails)."""
    run_cpu = ctx.one("SELECT cpu_ns FROM runs WHERE id = ?", run_id, db=db)
    rows = ctx.one("SELECT sum(cpu_user_ns + cpu_sys_ns) FROM processes WHERE run_id = ?", run_id, db=db)
    ctx.close(run_cpu, rows, max(10_000_000, rows // 100), "run CPU vs the sum of its process rows (ns)")
    return run_cpu



def engine_run(ctx, db, engine, name, d, acct):
    """The one run of the engine started in d, or None; its jobs checked against sacct's
    (acct) and its total against its rows."""
    runs = ctx.query("SELECT r.id FROM runs r JOIN processes p ON p.id = r.engine_process_id "
                     "WHERE r.engine = ? AND p.cwd = ?", engine, d, db=db)
    ctx.check(len(runs) == 1, f"one {name} run started in {d}: {runs}")
    if not runs:
        return None
    check_jobs_against_sacct(ctx, runs[0][0], acct, db)
    check_run_total_is_its_rows(ctx, runs[0][0], db)
    return runs[0][0]

@test
@plain_build_only("CI time: a private Slurm with accounting per test; run under ASan by hand when this file changes (all passed, 2026-12-01)")
def snakemake_cluster_jobs_are_the_runs_steps(ctx):
    """`snakemake --cluster "sbatch ..."` under the daemons: each cluster job is the Snakemake
    run's step, named by its rule, with its whole CPU (sacct's TotalCPU of the job within 1% or
    10 ms); every job in that run alone; `tracer show --json` has the steps by rule and each
    job's queue wait, within 1.5 s of sacct's Start - Submit (whole seconds)."""
    if not SlurmCluster.available(accounting=True):
        raise Failure("slurm-wlm, slurmdbd and mariadb-server are not installed (deploy/install-deps.sh tests)")
    burn = build_burn(ctx)
    d = workdir(ctx, "sm")
    with open(os.path.join(d, "Snakefile"), "w") as f:
        f.write(f"""rule all:
    input: "a.align", "b.align", "merged.txt", "reads.count"
rule count:
    output: "reads.count"
    shell: "{burn} 0.3 && echo 1 > {{output}}"
rule align:
    output: "{{x}}.align"
    shell: "{burn} 0.4 && echo {{wildcards.x}} > {{output}}"
rule merge:
    input: "a.align", "b.align"
    output: "merged.txt"
    shell: "{burn} 0.25 && cat {{input}} > {{output}}"
""")
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db)
    cluster = SlurmCluster(ctx.path("slurm"), accounting=True)
    try:
        cluster.start()
        # As a user would, from a shell: the daemons recognise the engine's run.
        # -j3: count's and both align's jobs wait at once, so the first process of a job
        # (the batch script, the same for every rule) cannot tell which it is: the inner
        # snakemake's --target-jobs must.
        p = subprocess.run(["bash", "-c", f"cd {d} && snakemake -j3 --scheduler greedy --latency-wait 10 "
                           f"--cluster 'sbatch -o {d}/slurm-%j.out' > {d}/sm.log 2>&1"],
                           env=cluster.env, timeout=600)
        ctx.check(p.returncode == 0, f"snakemake exit {p.returncode}: {open(os.path.join(d, 'sm.log')).read()[-800:]}")
        acct = sacct_jobs(cluster, d, expect=4)
        time.sleep(1.5)  # let the daemons commit the last exits
    finally:
        cluster.stop()
    ctx.check(len(acct) == 4, f"four cluster jobs in sacct: {acct}")
    run_id = engine_run(ctx, db, "snakemake", "Snakemake", d, acct)
    if run_id is None:
        return
    links = ctx.query("SELECT b.job_id, b.link, s.name, b.queue_wait_ns, b.engine_job_id, sub.engine_job_id "
                      "FROM batch_jobs b LEFT JOIN steps s ON s.id = b.step_id "
                      "LEFT JOIN batch_submissions sub ON sub.id = b.submission_id WHERE b.run_id = ?", run_id, db=db)
    print(f"  links: {links}")
    by_job = {j: (link, name, wait, mine, theirs) for j, link, name, wait, mine, theirs in links}
    ctx.check(set(by_job) == set(acct), f"a batch_jobs row per job: {sorted(by_job)} vs {sorted(acct)}")
    rules = sorted(by_job[j][1] or "" for j in by_job)
    ctx.check(rules == ["align", "align", "count", "merge"], f"each job is a step named by its rule: {rules}")
    for j, (link, name, wait, mine, theirs) in by_job.items():
        ctx.check(link in ("linked", "ordered"), f"job {j} linked to its submission: {link}")
        ctx.check(mine and mine == theirs, f"job {j}: its Snakemake job id {mine} is its submission's {theirs}")
    # The user's view: show --json has the steps by rule, their CPU holding the jobs' work.
    doc = show_json(ctx, run_id, db, env=cluster.env)
    check_show_total(ctx, doc, run_id, acct, db)
    steps = doc.get("steps") or []
    names = sorted(s.get("name") for s in steps)
    ctx.check(names == ["align", "align", "count", "merge"], f"show --json: the run's steps are its rules: {names}")
    jobs = {b.get("job_id_raw"): b for b in doc.get("batch_jobs") or []}
    for raw, truth in acct.items():
        b = jobs.get(raw) or {}
        want = slurm_time_s(truth["start"]) - slurm_time_s(truth["submit"])
        got = (b.get("queue_wait_ns") or -1e18) / 1e9
        ctx.check(abs(got - want) <= 1.5, f"show: job {truth['id']} queue wait {got:.2f} s vs sacct "
                  f"Start - Submit {want:.0f} s (1.5 s: sacct's whole seconds)")
    step_cpu = sum(s.get("cpu_ns", 0) for s in steps)
    total = sum(t["cpu_ns"] for t in acct.values())
    ctx.check(step_cpu >= total - max(10_000_000, total // 100),
              f"show: the steps hold the jobs' CPU: {step_cpu / 1e6:.0f} ms of sacct's {total / 1e6:.0f} ms")
    ctx.stop(col)
    ctx.stop(agg)


@test
@plain_build_only("CI time: a private Slurm with accounting per test; run under ASan by hand when this file changes (all passed, 2026-12-01)")
def script_sbatch_wait_array_and_srun_are_the_scripts_run(ctx):
    """`tracer run -- ./submit.sh` where the script runs `sbatch --wait job.sh`, an array of
    three tasks with `sbatch --wait --array=1-3`, and `srun burn`: every job is part of the
    script's run (sacct's TotalCPU of each within 1% or 10 ms) and of the step that submitted
    it; `show --json` names the array tasks JOB_TASK as sacct's JobID does."""
    if not SlurmCluster.available(accounting=True):
        raise Failure("slurm-wlm, slurmdbd and mariadb-server are not installed (deploy/install-deps.sh tests)")
    burn = build_burn(ctx)
    d = workdir(ctx, "jobs")
    with open(os.path.join(d, "job.sh"), "w") as f:
        f.write(f"#!/bin/bash\n{burn} 0.5\nsrun {burn} 0.2\n")
    with open(os.path.join(d, "task.sh"), "w") as f:
        f.write(f"#!/bin/bash\n{burn} 0.15\n")
    # Work that leaves the host: a job held (it never runs here; cancelled after), and an
    # AWS Batch submission (a stand-in `aws` with the real CLI's argv: not installable here).
    with open(os.path.join(d, "aws"), "w") as f:
        f.write("#!/bin/bash\necho '{\"jobId\": \"0f1e\"}'\n")
    submit = os.path.join(d, "submit.sh")
    with open(submit, "w") as f:
        f.write(f"#!/bin/bash\ncd {d}\nsbatch --wait -o {d}/job-%j.out -J align job.sh\n"
                f"sbatch --wait --array=1-3 -o {d}/task-%A_%a.out task.sh\n"
                f"srun -J direct {burn} 0.3\n"
                f"held=$(sbatch --parsable --hold -J parked job.sh)\nscancel $held\n"
                f"./aws batch submit-job --job-name remote-align --job-queue q --job-definition d:1\n")
    for name in ("job.sh", "task.sh", "submit.sh", "aws"):
        os.chmod(os.path.join(d, name), 0o755)
    cluster = SlurmCluster(ctx.path("slurm"), accounting=True)
    try:
        cluster.start()
        p = ctx.tracer_run([submit], "--run", "submitter", env=cluster.env)
        ctx.check(p.returncode == 0, f"tracer run: {p.returncode} {p.stderr[-600:]}")
        # Its end says what ran here (job.sh, the array, srun) and what went elsewhere.
        ctx.check("3 batch submissions ran on this host" in p.stderr and "(aws, sbatch)" in p.stderr,
                  f"tracer run's end says where the work went: {p.stderr[-700:]}")
        acct = sacct_jobs(cluster, d, expect=5)
        run_id = ctx.one("SELECT id FROM runs WHERE name = 'submitter'")
        doc = show_json(ctx, run_id, ctx.db, env=cluster.env)  # sacct reachable: JOB_TASK names
        text = subprocess.run([ctx.bin("tracer"), "show", "--db", ctx.db, str(run_id)], capture_output=True,
                              text=True, timeout=60, env=cluster.env).stdout
    finally:
        cluster.stop()
    ids = sorted(t["id"] for t in acct.values())
    print(f"  sacct: {[(raw, t['id'], t['cpu_ns'] / 1e6) for raw, t in acct.items()]}")
    ctx.check(len(acct) == 5 and sum("_" in i for i in ids) == 3,
              f"sacct: one job, three array tasks and srun's job: {ids}")
    check_jobs_against_sacct(ctx, run_id, acct, ctx.db)
    check_run_total_is_its_rows(ctx, run_id, ctx.db)
    check_show_total(ctx, doc, run_id, acct, ctx.db)
    rows = ctx.query("SELECT b.job_id, b.link, sub.submitter, sub.array_spec, b.step_id, sub.step_id "
                     "FROM batch_jobs b JOIN batch_submissions sub ON sub.id = b.submission_id "
                     "WHERE b.run_id = ?", run_id)
    print(f"  links: {rows}")
    ctx.check(len(rows) == len(acct) and all(r[1] in ("linked", "ordered") for r in rows),
              f"every job linked to its submission: {rows}")
    ctx.check(all(r[4] == r[5] for r in rows), f"each job in its submitter's step: {rows}")
    kinds = sorted((r[2], r[3] or "") for r in rows)
    ctx.check(kinds == [("sbatch", ""), ("sbatch", "1-3"), ("sbatch", "1-3"), ("sbatch", "1-3"), ("srun", "")],
              f"the jobs came from sbatch, the array's sbatch and srun: {kinds}")
    for b in doc.get("batch_jobs") or []:
        truth = acct.get(b.get("job_id_raw"))
        if truth:
            want = slurm_time_s(truth["start"]) - slurm_time_s(truth["submit"])
            got = (b.get("queue_wait_ns") or -1e18) / 1e9
            ctx.check(abs(got - want) <= 1.5, f"show: job {truth['id']} queue wait {got:.2f} s vs sacct "
                      f"Start - Submit {want:.0f} s (1.5 s: sacct's whole seconds)")
    named = {b.get("job_id_raw"): b.get("job") for b in doc.get("batch_jobs") or []}
    for raw, truth in acct.items():
        ctx.check(named.get(raw) == truth["id"], f"show names job {raw} as sacct does: "
                  f"{named.get(raw)} vs {truth['id']}")
    batch_text = text[text.find("\nBatch jobs"):text.find("\nProcess tree")]
    print("  show:" + batch_text.replace("\n", "\n    "))
    # Where the work that did not run here went, in JSON and in the text users read.
    away = sorted((b.get("submitter"), b.get("job_name")) for b in doc.get("batch_elsewhere") or [])
    ctx.check(away == [("aws", "remote-align"), ("sbatch", "parked")],
              f"show --json: the submissions whose work did not run here: {away}")
    ctx.check("sent to AWS Batch" in text and "parked" in text and all(t["id"] in text for t in acct.values()),
              f"show says where work went and names array tasks: {text[:1500]}")


@test
@plain_build_only("CI time: a private Slurm with accounting per test; run under ASan by hand when this file changes (all passed, 2026-12-01)")
def nextflow_slurm_executor_tasks_are_the_runs_tasks(ctx):
    """A Nextflow-shaped launcher (fixtures/nextflow: Nextflow is not installable here) with
    `-process.executor slurm` submits `sbatch .command.run` from each task's work dir, as
    Nextflow's Slurm executor does, and polls for .exitcode. Each job is the Nextflow run's
    task (a step keyed by the work dir's hash, as a local task is), with sacct's TotalCPU of the
    job within 1% or 10 ms; the launcher is the run, every job in it alone."""
    if not SlurmCluster.available(accounting=True):
        raise Failure("slurm-wlm, slurmdbd and mariadb-server are not installed (deploy/install-deps.sh tests)")
    burn = build_burn(ctx)
    d = workdir(ctx, "nf-grid")
    with open(os.path.join(d, "main.nf"), "w") as f:
        f.write(f"ALIGN: {burn} 0.4\nCALL: {burn} 0.25\n")
    launcher = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "nextflow", "nextflow")
    sock, db = ctx.path("s.sock"), ctx.path("daemon.db")
    agg, col = start_daemons(ctx, sock, db)
    cluster = SlurmCluster(ctx.path("slurm"), accounting=True)
    work = os.path.join(d, "work")
    try:
        cluster.start()
        p = subprocess.run(["bash", "-c", f"cd {d} && {launcher} run main.nf -process.executor slurm"],
                           env=cluster.env, capture_output=True, text=True, timeout=300)
        ctx.check(p.returncode == 0, f"launcher exit {p.returncode}: {p.stderr[-500:]}")
        tasks = dict(line.split() for line in open(os.path.join(work, "tasks.txt")))
        acct = {}
        for name, task_dir in tasks.items():
            acct.update(sacct_jobs(cluster, task_dir))
        time.sleep(1.5)
    finally:
        cluster.stop()
    ctx.check(len(acct) == 2, f"a job per task in sacct: {acct}")
    run_id = engine_run(ctx, db, "nextflow", "Nextflow", d, acct)
    if run_id is None:
        return
    steps = {k: (kind, sid) for sid, k, kind in ctx.query("SELECT id, key, kind FROM steps WHERE run_id = ?",
                                                           run_id, db=db)}
    want = {"/".join(t.split("/")[-2:]) for t in tasks.values()}
    ctx.check(set(steps) == want and all(k == "nextflow-task" for k, _ in steps.values()),
              f"a nextflow-task step per task work dir: {steps} vs {want}")
    for raw in acct:
        rows = ctx.query("SELECT DISTINCT p.step_id, s.key FROM processes p LEFT JOIN steps s ON s.id = p.step_id "
                         "WHERE p.slurm_job = ? AND p.exe LIKE '%/burn'", raw, db=db)
        ctx.check(len(rows) == 1 and rows[0][1] in want, f"job {raw}'s work is in its task's step: {rows}")
    doc = show_json(ctx, run_id, db, env=cluster.env)
    check_show_total(ctx, doc, run_id, acct, db)
    waits = [s.get("queue_wait_ns") for s in doc.get("steps") or []]
    ctx.check(len(waits) == 2 and all(isinstance(w, int) and w >= 0 for w in waits),
              f"show --json: each task's queue wait (Nextflow trace's submit to start): {waits}")
    ctx.stop(col)
    ctx.stop(agg)
