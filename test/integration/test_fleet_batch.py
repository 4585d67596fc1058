"""One run across hosts (docs/shipping.md, "One run across hosts"): a script whose steps
hold `sbatch --wait` runs on host A; its two Slurm jobs run on hosts B and C. Each host is
its own collector and aggregator recording only its part of this machine (A: the test's
cgroup; B and C: one job's Slurm cgroup each, --scope-cgroup), shipped to one ClickHouse
under its own host id. Read with `tracer --fleet`, the script's run holds both jobs under
the steps that submitted them; a third job, which no host recorded, is listed as not
joined. Ground truth: the job ids sbatch --parsable printed, and each job's own
getrusage (its batch script's RUSAGE_SELF + RUSAGE_CHILDREN after it waited for its
work), beside what A, B and C recorded on their own."""
import json
import os
import subprocess
import time
import uuid

from harness import Failure, Skip, plain_build_only, remove_cgroup, start_daemons, test
from slurm_cluster import SlurmCluster
from test_batch import build_burn, snakefile
from test_fleet import clickhouse, private_file, tracer

MEMCG = "/sys/fs/cgroup/memory"

JOB_PY = """#!/usr/bin/python3
import json, resource, subprocess, sys
subprocess.run([{burn!r}, sys.argv[1]], check=True)
subprocess.run([{burn!r}, "0.1"], check=True)
s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime
with open(sys.argv[2], "w") as f:
    json.dump({{"cpu_ns": int(cpu * 1e9)}}, f)
"""


def wait_job_runs_end(ctx, db, timeout=20):
    end = time.time() + timeout
    while time.time() < end:
        if ctx.one("SELECT count(*) FROM runs WHERE end_ns IS NULL", db=db) == 0 and \
                ctx.one("SELECT count(*) FROM batch_jobs", db=db):
            return
        time.sleep(0.3)
    raise Failure(f"the job's run on {db} never ended: "
                  f"{ctx.query('SELECT id, name, end_ns FROM runs', db=db)}")


def ship(ctx, host, db, state, sink, cred):
    p = subprocess.run([ctx.bin("tracer-shipper"), "--db", db, "--state", state, "--sink", sink,
                        "--host-id", host, "--credentials", cred, "--user", "nobody", "--once",
                        "--batch-age-ms", "100"],
                       capture_output=True, text=True, timeout=300)
    ctx.check(p.returncode == 0, f"{host}: shipped: {p.returncode} {p.stderr[-300:]}")



def fleet_store(ctx):
    """A ClickHouse for the hosts to ship to: the shippers' credentials file, the sink's
    URL, and the reader's fleet.conf (its own credentials file)."""
    ch = clickhouse(ctx)
    secret = f"user = {ch.user}\npassword = {ch.password}\n"
    cred = private_file(ctx, "ch.cred", secret, owner="nobody")
    mine = private_file(ctx, "reader.cred", secret)
    sink = f"clickhouse://127.0.0.1:{ch.http_port}/tracer"
    conf = private_file(ctx, "fleet.conf", f"[fleet]\nurl = {sink}\ncredentials = {mine}\n")
    return cred, sink, conf


def fleet_setup(ctx, name):
    """What both tests start from: Slurm here, the fleet's store, the CPU burner the jobs
    run and an empty work directory NAME: (cred, sink, conf, burn, work)."""
    if not SlurmCluster.available():
        raise Failure("slurm-wlm is not installed (deploy/install-deps.sh tests)")
    cred, sink, conf = fleet_store(ctx)
    burn = build_burn(ctx)
    work = ctx.path(name)
    os.mkdir(work)
    return cred, sink, conf, burn, work


def cluster_and_group(ctx, prefix):
    """A Slurm cluster (not started) and a new memory cgroup PREFIX-xxxxxxxx for the hosts."""
    group = f"{prefix}-{uuid.uuid4().hex[:8]}"
    os.mkdir(f"{MEMCG}/{group}")
    return SlurmCluster(ctx.path("slurm")), group


def stop_hosts(ctx, cluster, hosts, group):
    """The cluster and every host's daemons stopped, their cgroup removed."""
    cluster.stop()
    for sock, db, state, (agg, col) in hosts.values():
        ctx.stop(col)
        ctx.stop(agg)
    remove_cgroup(f"{MEMCG}/{group}")


def ship_hosts(ctx, hosts, sink, cred):
    """Each host's records shipped to the one store, as its shipper would."""
    for host, (sock, db, state, _) in hosts.items():
        ship(ctx, host, db, state, sink, cred)

@test
@plain_build_only("CI time: a private Slurm and ClickHouse; the fleet reader's code runs under ASan in test_fleet")
def fleet_joins_slurm_jobs_of_other_hosts_to_the_run_that_submitted_them(ctx):
    """`tracer --fleet show RUN` of a script on host A whose steps ran `sbatch --wait`: both
    jobs (ids as sbatch printed them) are the run's, each under its own step and with its
    host (B, C), linked; the run's and each step's CPU is A's own plus the job's as its host
    recorded it (exact) and the job's getrusage within 1% or 20 ms; the job's processes are
    in the run; a per-host breakdown; a third job no host recorded is listed as not joined;
    explain, timeline and report read the joined run."""
    cred, sink, conf, burn, work = fleet_setup(ctx, "work")
    job_py = os.path.join(work, "job.py")
    with open(job_py, "w") as f:
        f.write(JOB_PY.format(burn=burn))
    os.chmod(job_py, 0o755)
    cluster, group = cluster_and_group(ctx, "tracer-fleetjob")
    hosts = {}
    try:
        cluster.start()
        first = cluster.first_job
        job_cg = f"/slurm_{cluster.node}/uid_0/job_"
        # B and C each record one job (ids are given out in order from FirstJobId); the
        # third job is nobody's.
        for host, scope in (("fleet-a", f"/{group}"), ("fleet-b", f"{job_cg}{first}"),
                            ("fleet-c", f"{job_cg}{first + 1}")):
            sock, db, state = ctx.path(f"{host}.sock"), ctx.path(f"{host}.db"), ctx.path(f"{host}-ship.db")
            daemons = start_daemons(ctx, sock, db, extra_agg=(
                "--outbox-mib", "64", "--shipper-state", state, "--scope-cgroup", scope))
            hosts[host] = (sock, db, state, daemons)
        script = ctx.path("head.sh")
        with open(script, "w") as f:
            # Three steps waiting at once (sbatch --wait polls for up to 10 s), each job in
            # a work dir of its own; submitted 0.3 s apart so that Slurm's ids follow.
            f.write("#!/bin/bash\n" + "".join(
                f"mkdir -p {work}/{d}\n" for d in ("a", "b", "other")) + "".join(
                f"sbatch --parsable --wait --chdir {work}/{d} -o {work}/{d}.out {job_py} {cpu} "
                f"{work}/{d}.json > {work}/{d}.id &\nsleep 0.3\n"
                for d, cpu in (("a", 0.6), ("b", 0.4), ("other", 0.05))) + f"wait\n{burn} 0.2\n")
        os.chmod(script, 0o755)
        sock_a, db_a = hosts["fleet-a"][0], hosts["fleet-a"][1]
        run = subprocess.run(["sh", "-c", f"echo $$ > {MEMCG}/{group}/cgroup.procs; exec {ctx.bin('tracer')} "
                              f"run --socket {sock_a} --db {db_a} --run head -- {script}"],
                             capture_output=True, text=True, timeout=180, env=cluster.env)
        ctx.check(run.returncode == 0, f"the head script: {run.returncode} {run.stderr[-600:]}")
        job_ids = [open(f"{work}/{d}.id").read().strip() for d in ("a", "b", "other")]
        ctx.check(job_ids == [str(first), str(first + 1), str(first + 2)],
                  f"sbatch gave the ids in order from FirstJobId {first}: {job_ids}")
        for host in ("fleet-b", "fleet-c"):
            wait_job_runs_end(ctx, hosts[host][1])
        time.sleep(1.5)
    finally:
        stop_hosts(ctx, cluster, hosts, group)
    ship_hosts(ctx, hosts, sink, cred)
    db_a = hosts["fleet-a"][1]
    rid = ctx.one("SELECT id FROM runs WHERE name = 'head'", db=db_a)
    truth = {jid: json.load(open(f"{work}/{d}.json")) for d, jid in zip(("a", "b", "other"), job_ids)}
    # What each job's host recorded on its own: the job's run there.
    recorded = {}
    for host, jid in (("fleet-b", job_ids[0]), ("fleet-c", job_ids[1])):
        db = hosts[host][1]
        row = ctx.query("SELECT b.run_id, b.link, r.cpu_ns, r.processes FROM batch_jobs b "
                        "JOIN runs r ON r.id = b.run_id WHERE b.job_id = ?", jid, db=db)
        ctx.check(len(row) == 1 and row[0][1] == "unmatched",
                  f"{host} recorded job {jid} alone, unmatched there (its submitter ran on A): {row}")
        recorded[jid] = {"host": host, "cpu_ns": row[0][2], "processes": row[0][3]}
        ctx.close(row[0][2], truth[jid]["cpu_ns"], max(20_000_000, truth[jid]["cpu_ns"] // 100),
                  f"job {jid} on {host}: its run's CPU vs the job's own getrusage (ns)")
    local_cpu, local_procs = ctx.query("SELECT cpu_ns, processes FROM runs WHERE id = ?", rid, db=db_a)[0]
    subs = dict(ctx.query("SELECT id, step_id FROM batch_submissions WHERE run_id = ?", rid, db=db_a))
    ctx.check(len(subs) == 3, f"A recorded three submissions: {subs}")
    step_cpu = dict(ctx.query("SELECT id, cpu_ns FROM steps WHERE run_id = ?", rid, db=db_a))

    name = f"fleet-a:{rid}"
    code, out, err = tracer(ctx, "--fleet", conf, "show", "--json", name)
    ctx.check(code == 0, f"fleet show --json: {code} {err[-400:]}")
    doc = json.loads(out)
    jobs = {j["job_id_raw"]: j for j in doc.get("batch_jobs") or []}
    if set(jobs) != set(job_ids[:2]):
        raise Failure(f"the two recorded jobs are the run's: {sorted(jobs)}; batch_jobs "
                      f"{doc.get('batch_jobs')}, elsewhere {doc.get('batch_elsewhere')}; before: {ctx.failures}")
    for jid, rec in recorded.items():
        j = jobs[jid]
        ctx.check(j["link"] == "linked" and j["host"] == rec["host"] and j.get("step_id") in subs.values(),
                  f"job {jid}: linked, on {rec['host']}, under a step of the run: {j}")
    ctx.check(jobs[job_ids[0]]["step_id"] != jobs[job_ids[1]]["step_id"],
              "each job under the step of its own sbatch")
    totals = doc.get("totals") or doc.get("run") or {}
    fleet_cpu = totals.get("cpu_ns")
    want = local_cpu + sum(r["cpu_ns"] for r in recorded.values())
    ctx.check(fleet_cpu == want, f"the run's CPU is A's {local_cpu} + the jobs' as B and C recorded them: "
              f"{fleet_cpu} vs {want}")
    jobs_truth = sum(truth[j]["cpu_ns"] for j in recorded)
    ctx.close(fleet_cpu - local_cpu, jobs_truth, max(20_000_000, jobs_truth // 100),
              "the run's CPU less A's own vs the jobs' getrusage (ns)")
    print(f"  run CPU: A {local_cpu / 1e6:.1f} ms + jobs {(fleet_cpu - local_cpu) / 1e6:.1f} ms "
          f"(getrusage {jobs_truth / 1e6:.1f} ms)")
    steps = {s["id"]: s for s in doc.get("steps") or []}
    for jid, rec in recorded.items():
        sid = jobs[jid]["step_id"]
        ctx.check(steps.get(sid, {}).get("cpu_ns") == step_cpu[sid] + rec["cpu_ns"],
                  f"step {sid}: A's {step_cpu[sid]} + job {jid}'s {rec['cpu_ns']}: {steps.get(sid, {}).get('cpu_ns')}")
    hosts_doc = {h["host"]: h for h in doc.get("hosts") or []}
    ctx.check(set(hosts_doc) == {"fleet-a", "fleet-b", "fleet-c"} and hosts_doc["fleet-a"]["head"] and
              hosts_doc["fleet-b"]["jobs"] == 1 and hosts_doc["fleet-c"]["jobs"] == 1 and
              hosts_doc["fleet-b"]["cpu_ns"] == recorded[job_ids[0]]["cpu_ns"],
              f"a per-host breakdown: {hosts_doc}")
    elsewhere = doc.get("batch_elsewhere") or []
    ctx.check(len(elsewhere) == 1 and elsewhere[0]["work_dir"] == f"{work}/other",
              f"the job no host recorded is listed as not joined: {elsewhere}")
    procs = ctx.one("SELECT count(*) FROM processes WHERE run_id = ?", rid, db=db_a)
    ctx.check(totals.get("processes") == local_procs + sum(r["processes"] for r in recorded.values()),
              f"processes: A's {local_procs} ({procs} rows) + the jobs': {totals.get('processes')}")
    ctx.check((doc.get("run") or {}).get("cpu_ns") == want,
              f"the run's own row grew the same: {(doc.get('run') or {}).get('cpu_ns')} vs {want}")
    # runs: one row for the pipeline (the jobs' runs folded into it), with its whole CPU.
    code, out, err = tracer(ctx, "--fleet", conf, "runs", "--json")
    rows = json.loads(out)["runs"] if code == 0 else []
    ctx.check([(r["host"], r["id"]) for r in rows] == [("fleet-a", rid)] and rows[0]["cpu_ns"] == want,
              f"fleet runs: the head's run alone, CPU {want}: {code} {err[-200:]} "
              f"{[(r.get('host'), r.get('id'), r.get('cpu_ns')) for r in rows]}")
    # The job's side: its own run on its host says whose it is across the fleet.
    for jid, rec in recorded.items():
        job_run = ctx.one("SELECT run_id FROM batch_jobs WHERE job_id = ?", jid, db=hosts[rec["host"]][1])
        code, out, err = tracer(ctx, "--fleet", conf, "show", "--json", f"{rec['host']}:{job_run}")
        mine = [j for j in (json.loads(out).get("batch_jobs") or []) if j["job_id_raw"] == jid] if code == 0 else []
        ctx.check(len(mine) == 1 and mine[0].get("fleet_link") == "linked" and mine[0].get("fleet_run") == name,
                  f"job {jid}'s own run on {rec['host']} names {name} as its run: {code} {err[-200:]} {mine}")
    code, text, err = tracer(ctx, "--fleet", conf, "show", name)
    ctx.check(code == 0 and "Hosts of this run" in text and "not joined" in text and
              all(j in text for j in job_ids[:2]), f"fleet show text: {code} {err[-300:]} {text[-1500:]}")
    for verb in (("explain",), ("timeline",), ("signals",), ("report", "--html", ctx.path("r.html"))):
        code, out, err = tracer(ctx, "--fleet", conf, *verb, name)
        ctx.check(code == 0, f"fleet {verb[0]} of the joined run: {code} {err[-300:]}")


def snakemake_job_rules(log):
    """{Slurm job id: rule} from Snakemake's own log: each `rule R:` block's `jobid: N`, and
    its `Submitted job N with external jobid 'Submitted batch job X'`."""
    import re
    rule_of, rules = None, {}
    for line in log.splitlines():
        m = re.match(r"\s*rule (\w+):", line)
        if m:
            rule_of = m.group(1)
        m = re.match(r"\s*jobid: (\d+)", line)
        if m and rule_of:
            rules[m.group(1)] = rule_of
    out = {}
    for n, ext in re.findall(r"Submitted job (\d+) with external jobid 'Submitted batch job (\d+)'", log):
        out[ext] = (rules.get(n), n)
    return out


@test
@plain_build_only("not in CI (30 s): TRACER_FLEET_SNAKEMAKE=1 runs it")
def fleet_joins_snakemake_cluster_jobs_by_rule(ctx):
    """`snakemake --cluster sbatch` on host A, every job recorded on host B (its collector
    and aggregator scoped to the Slurm cgroups): `tracer --fleet show --json A:RUN` holds each
    job under the step of its rule, as Snakemake's own log says which Slurm job ran which
    rule; the run's CPU is A's plus the jobs' runs as B recorded them (exact)."""
    if os.environ.get("TRACER_FLEET_SNAKEMAKE") != "1":
        raise Skip("TRACER_FLEET_SNAKEMAKE=1 runs it (30 s more than CI has)")
    cred, sink, conf, burn, work = fleet_setup(ctx, "sm")
    with open(os.path.join(work, "Snakefile"), "w") as f:
        f.write(snakefile(burn))
    cluster, group = cluster_and_group(ctx, "tracer-fleetsm")
    hosts = {}
    try:
        cluster.start()
        for host, scope in (("fleet-a", f"/{group}"), ("fleet-b", f"/slurm_{cluster.node}")):
            sock, db, state = ctx.path(f"{host}.sock"), ctx.path(f"{host}.db"), ctx.path(f"{host}-ship.db")
            hosts[host] = (sock, db, state, start_daemons(ctx, sock, db, extra_agg=(
                "--outbox-mib", "64", "--shipper-state", state, "--scope-cgroup", scope)))
        p = subprocess.run(["sh", "-c", f"echo $$ > {MEMCG}/{group}/cgroup.procs; cd {work} && exec snakemake "
                            f"-j2 --scheduler greedy --latency-wait 10 --cluster 'sbatch -o {work}/slurm-%j.out' "
                            f"> {work}/sm.log 2>&1"], env=cluster.env, timeout=300)
        log = open(os.path.join(work, "sm.log")).read()
        ctx.check(p.returncode == 0, f"snakemake: {p.returncode} {log[-600:]}")
        truth = snakemake_job_rules(log)
        wait_job_runs_end(ctx, hosts["fleet-b"][1])
        time.sleep(1.5)
    finally:
        stop_hosts(ctx, cluster, hosts, group)
    ctx.check(len(truth) == 3 and sorted(r for r, _ in truth.values()) == ["align", "align", "merge"],
              f"Snakemake's log names three jobs: {truth}")
    ship_hosts(ctx, hosts, sink, cred)
    db_a, db_b = hosts["fleet-a"][1], hosts["fleet-b"][1]
    runs = ctx.query("SELECT id, cpu_ns FROM runs WHERE engine = 'snakemake'", db=db_a)
    if len(runs) != 1:
        raise Failure(f"one Snakemake run on A: {runs}")
    rid, local_cpu = runs[0]
    job_cpu = dict(ctx.query("SELECT b.job_id, r.cpu_ns FROM batch_jobs b JOIN runs r ON r.id = b.run_id",
                             db=db_b))
    code, out, err = tracer(ctx, "--fleet", conf, "show", "--json", f"fleet-a:{rid}")
    if code != 0:
        raise Failure(f"fleet show: {code} {err[-400:]}")
    doc = json.loads(out)
    steps = {s["id"]: s.get("name") for s in doc.get("steps") or []}
    jobs = {j["job_id_raw"]: j for j in doc.get("batch_jobs") or []}
    print(f"  jobs: {[(k, j['link'], steps.get(j.get('step_id'))) for k, j in jobs.items()]}; truth {truth}")
    ctx.check(set(jobs) == set(truth), f"every job is the run's: {sorted(jobs)} vs {sorted(truth)}")
    for jid, (rule, n) in truth.items():
        j = jobs.get(jid) or {}
        ctx.check(j.get("link") in ("linked", "ordered") and steps.get(j.get("step_id")) == rule,
                  f"job {jid} under the step of its rule {rule}: {j.get('link')} {steps.get(j.get('step_id'))}")
        # A recorded which step ran `sbatch .../snakejob.RULE.N.sh`.
        submitted_in = ctx.query("SELECT step_id FROM batch_submissions WHERE run_id = ? AND engine_job_id = ?",
                                 rid, n, db=db_a)
        ctx.check(j.get("engine_job_id") == n and submitted_in == [(j.get("step_id"),)],
                  f"job {jid} is Snakemake's job {n} and under the step that submitted it: its marker "
                  f"says {j.get('engine_job_id')}, step {j.get('step_id')}, A's submission in {submitted_in}")
    want = local_cpu + sum(job_cpu.get(j, 0) for j in truth)
    ctx.check((doc.get("run") or {}).get("cpu_ns") == want,
              f"the run's CPU: A's {local_cpu} + B's jobs: {(doc.get('run') or {}).get('cpu_ns')} vs {want}")


@test
@plain_build_only("CI time: a private Slurm and ClickHouse; the fleet reader's code runs under ASan in test_fleet")
def fleet_puts_nextflow_slurm_tasks_of_other_hosts_under_their_task_steps(ctx):
    """The Nextflow-shaped launcher (fixtures/nextflow) with its slurm executor on host A,
    every job recorded on host B (scoped to the Slurm cgroups): A's `sbatch .command.run`
    ran outside any step, so `tracer --fleet show --json A:RUN` puts each job under its
    task's step (nextflow-task, keyed by the hash of the work dir the launcher's tasks.txt
    names), whose CPU is the job's run as B recorded it; the run's CPU is A's plus those."""
    if not SlurmCluster.available():
        raise Failure("slurm-wlm is not installed (deploy/install-deps.sh tests)")
    ch = clickhouse(ctx)
    secret = f"user = {ch.user}\npassword = {ch.password}\n"
    cred = private_file(ctx, "ch.cred", secret, owner="nobody")
    mine = private_file(ctx, "reader.cred", secret)
    sink = f"clickhouse://127.0.0.1:{ch.http_port}/tracer"
    conf = private_file(ctx, "fleet.conf", f"[fleet]\nurl = {sink}\ncredentials = {mine}\n")
    burn = build_burn(ctx)
    work = ctx.path("nf")
    os.mkdir(work)
    with open(os.path.join(work, "main.nf"), "w") as f:
        f.write(f"ALIGN: {burn} 0.3\nCALL: {burn} 0.2\n")
    launcher = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "nextflow", "nextflow")
    cluster = SlurmCluster(ctx.path("slurm"))
    group = f"tracer-fleetnf-{uuid.uuid4().hex[:8]}"
    os.mkdir(f"{MEMCG}/{group}")
    hosts = {}
    try:
        cluster.start()
        for host, scope in (("fleet-a", f"/{group}"), ("fleet-b", f"/slurm_{cluster.node}")):
            sock, db, state = ctx.path(f"{host}.sock"), ctx.path(f"{host}.db"), ctx.path(f"{host}-ship.db")
            hosts[host] = (sock, db, state, start_daemons(ctx, sock, db, extra_agg=(
                "--outbox-mib", "64", "--shipper-state", state, "--scope-cgroup", scope)))
        p = subprocess.run(["sh", "-c", f"echo $$ > {MEMCG}/{group}/cgroup.procs; cd {work} && exec {launcher} "
                            "run main.nf -process.executor slurm"], env=cluster.env, capture_output=True,
                           text=True, timeout=300)
        ctx.check(p.returncode == 0, f"the launcher: {p.returncode} {p.stderr[-600:]}")
        wait_job_runs_end(ctx, hosts["fleet-b"][1])
        time.sleep(1.5)
    finally:
        cluster.stop()
        for sock, db, state, (agg, col) in hosts.values():
            ctx.stop(col)
            ctx.stop(agg)
        remove_cgroup(f"{MEMCG}/{group}")
    tasks = dict(line.split() for line in open(os.path.join(work, "work", "tasks.txt")))
    for host, (sock, db, state, _) in hosts.items():
        ship(ctx, host, db, state, sink, cred)
    db_a, db_b = hosts["fleet-a"][1], hosts["fleet-b"][1]
    runs = ctx.query("SELECT id, cpu_ns FROM runs WHERE engine = 'nextflow'", db=db_a)
    if len(runs) != 1:
        raise Failure(f"one Nextflow run on A: {runs}")
    rid, local_cpu = runs[0]
    ctx.check(ctx.one("SELECT count(*) FROM batch_submissions WHERE run_id = ? AND step_id IS NULL", rid,
                      db=db_a) == 2, "A's two sbatch .command.run ran outside any step")
    on_b = dict(ctx.query("SELECT b.cwd, r.cpu_ns FROM batch_jobs b JOIN runs r ON r.id = b.run_id", db=db_b))
    code, out, err = tracer(ctx, "--fleet", conf, "show", "--json", f"fleet-a:{rid}")
    if code != 0:
        raise Failure(f"fleet show: {code} {err[-400:]}")
    doc = json.loads(out)
    steps = {s["id"]: s for s in doc.get("steps") or []}
    jobs = doc.get("batch_jobs") or []
    got = {j.get("cwd"): (j.get("link"), (steps.get(j.get("step_id")) or {}).get("key"),
                          (steps.get(j.get("step_id")) or {}).get("kind")) for j in jobs}
    want = {d: ("linked", "/".join(d.split("/")[-2:]), "nextflow-task") for d in tasks.values()}
    ctx.check(got == want, f"each task's job linked under the step of its work dir's hash: {got} vs {want}")
    ctx.check(set(on_b) == set(tasks.values()), f"B recorded both tasks' jobs: {sorted(on_b)}")
    for d in tasks.values():
        step = next((s for s in steps.values() if s.get("key") == "/".join(d.split("/")[-2:])), {})
        ctx.check(step.get("cpu_ns") == on_b.get(d) and step.get("status") == "ok",
                  f"task {d}: its step's CPU is its job's run on B: {step.get('cpu_ns')} vs {on_b.get(d)}, "
                  f"status {step.get('status')}")
    want_cpu = local_cpu + sum(on_b.values())
    ctx.check((doc.get("run") or {}).get("cpu_ns") == want_cpu,
              f"the run's CPU: A's {local_cpu} + B's jobs: {(doc.get('run') or {}).get('cpu_ns')} vs {want_cpu}")
