"""make fleet-test: one pipeline across three machines, read with the fleet verbs.

The fleet (machines.py): h1, h2, h3 booted with systemd in systemd-nspawn, tracer from
our .deb in each, one ClickHouse on the host, Slurm across them. Two pipelines run on
h1 with their jobs on h2 and h3:
  (a) a script whose steps hold `sbatch --wait` (one job pinned to each node);
  (b) Snakemake with --cluster sbatch (three jobs; Slurm places them);
  (c) the Nextflow-shaped launcher (test/integration/fixtures/nextflow: Nextflow is not
      installable here) with its slurm executor: `sbatch .command.run` from each task's
      work dir <work>/<2 hex>/<30 hex>, polled for .exitcode (two tasks).
Each is asserted through `tracer --fleet CONF show RUN --json` and `runs --json`, run on
h1 with the packaged tracer: one run whose jobs are linked to the steps that submitted
them, on the hosts Slurm says, with a per-host breakdown; the jobs' CPU (the run's
total less h1's own part) equals the sum of sacct's TotalCPU over the jobs' step lines
within 1% (sacct on the host, from slurmdbd: Slurm's own account of the jobs, taken by
slurmstepd, independent of ours). Each job's CPU as the fleet shows its own run is
compared with its sacct line the same way, and printed. Scope: each host's shipped
processes are its own machine's only (each job's burn only from the node Slurm ran it
on, every sbatch from h1); and a collector and aggregator on the host with
--scope-cgroup set to h2's cgroup (/machine.slice/machine-NAME.scope/payload) record
h2's burns and no other machine's."""
import json
import os
import shutil
import subprocess
import time

from clickhouse import ClickHouse
from harness import Failure, start_daemons, test
from machines import Fleet
from test_batch import build_burn, sacct_jobs
from test_fleet_batch import snakemake_job_rules

JOB_SH = "#!/bin/bash\n/fleet/bin/burn \"$1\"\n/fleet/bin/burn 0.1\n"

HEAD_SH = """#!/bin/bash
# Two steps at once, each waiting for its job; submitted 0.3 s apart.
cd /fleet
mkdir -p /fleet/a/j2 /fleet/a/j3
sbatch --parsable --wait -w h2 --mem=100M --chdir /fleet/a/j2 -o /fleet/a/j2.out /fleet/job.sh 1.5 > /fleet/a/j2.id &
sleep 0.3
sbatch --parsable --wait -w h3 --mem=100M --chdir /fleet/a/j3 -o /fleet/a/j3.out /fleet/job.sh 1.0 > /fleet/a/j3.id &
wait
/fleet/bin/burn 0.2
"""

NEXTFLOW = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration", "fixtures", "nextflow")
MAIN_NF = "ALIGN: /fleet/bin/burn 1.2\nCALL: /fleet/bin/burn 0.8\n"

SNAKEFILE = """rule all:
    input: "a.align", "b.align", "merged.txt"
rule align:
    output: "{x}.align"
    shell: "/fleet/bin/burn 1.2 && echo {wildcards.x} > {output}"
rule merge:
    input: "a.align", "b.align"
    output: "merged.txt"
    shell: "/fleet/bin/burn 0.6 && cat {input} > {output}"
"""


def fleet_json(ctx, h1, conf, *args):
    p = h1.run("tracer", "--fleet", conf, *args, "--json", timeout=120)
    if p.returncode != 0:
        raise Failure(f"tracer --fleet {' '.join(args)} --json: {p.returncode} {p.stderr[-600:]}")
    return json.loads(p.stdout)


def wait_joined(ctx, h1, conf, run, job_ids, timeout=120):
    """The pipeline's run as the fleet store shows it, once every job is there and linked
    and every job's own run has ended (the shippers deliver ended images within seconds)."""
    end = time.time() + timeout
    doc = {}
    while time.time() < end:
        try:
            doc = fleet_json(ctx, h1, conf, "show", run)
        except Failure:
            doc = {}
        jobs = {j["job_id_raw"]: j for j in doc.get("batch_jobs") or []}
        hosts = doc.get("hosts") or []
        if set(jobs) >= set(job_ids) and all(j.get("link") in ("linked", "ordered") for j in jobs.values()) \
                and sum(h.get("jobs") or 0 for h in hosts) >= len(job_ids) and (doc.get("run") or {}).get("end_ns"):
            return doc
        time.sleep(2)
    raise Failure(f"{run}: the jobs {job_ids} never all joined: {doc.get('batch_jobs')} hosts {doc.get('hosts')} "
                  f"elsewhere {doc.get('batch_elsewhere')}")


def check_pipeline(ctx, fleet, h1, conf, ch, label, run, truth):
    """The fleet's view of one pipeline against sacct (TRUTH: {job id: sacct job})."""
    job_ids = sorted(truth)
    doc = wait_joined(ctx, h1, conf, run, job_ids)
    jobs = {j["job_id_raw"]: j for j in doc["batch_jobs"]}
    steps = {s["id"]: s for s in doc.get("steps") or []}
    ctx.check(set(jobs) == set(job_ids), f"{label}: the run's jobs are sacct's: {sorted(jobs)} vs {job_ids}")
    for jid, j in jobs.items():
        ctx.check(j.get("link") in ("linked", "ordered") and j.get("step_id") in steps,
                  f"{label}: job {jid} linked to a step of the run: {j.get('link')} step {j.get('step_id')}")
        ctx.check(fleet.host_of(j["host"]) == truth[jid]["node"],
                  f"{label}: job {jid} on {fleet.host_of(j['host'])}, Slurm ran it on {truth[jid]['node']}")
    hosts = {fleet.host_of(h["host"]): h for h in doc.get("hosts") or []}
    want_hosts = {"h1"} | {t["node"] for t in truth.values()}
    ctx.check(set(hosts) == want_hosts, f"{label}: per-host breakdown {sorted(hosts)}, want {sorted(want_hosts)}")
    for node in want_hosts - {"h1"}:
        n = sum(1 for t in truth.values() if t["node"] == node)
        ctx.check((hosts.get(node) or {}).get("jobs") == n,
                  f"{label}: {node} holds {n} job(s): {(hosts.get(node) or {}).get('jobs')}")
    total = (doc.get("run") or {}).get("cpu_ns") or 0
    head = (hosts.get("h1") or {}).get("cpu_ns") or 0
    jobs_cpu = sum((hosts.get(h) or {}).get("cpu_ns") or 0 for h in want_hosts - {"h1"})
    sacct_cpu = sum(t["cpu_ns"] for t in truth.values())
    ctx.check(total == head + jobs_cpu, f"{label}: the run's CPU {total} is the hosts' sum {head} + {jobs_cpu}")
    ctx.close(jobs_cpu, sacct_cpu, sacct_cpu // 100, f"{label}: the jobs' CPU (hosts 2 and 3) vs sacct TotalCPU (ns)")
    print(f"    {label}: run {run}: CPU {total / 1e6:.1f} ms = h1 {head / 1e6:.1f} ms + jobs "
          f"{jobs_cpu / 1e6:.1f} ms; sacct TotalCPU of the jobs {sacct_cpu / 1e6:.1f} ms "
          f"({(jobs_cpu - sacct_cpu) / max(sacct_cpu, 1) * 100:+.2f}%)", flush=True)
    # Each job's own run on its host (the job side), against its sacct lines.
    for jid in job_ids:
        rows = ch.rows(f"SELECT _host, run_id FROM tracer.batch_jobs FINAL WHERE job_id = '{jid}'")
        if len(rows) != 1:
            ctx.check(False, f"{label}: job {jid} recorded once in the fleet store: {rows}")
            continue
        own = fleet_json(ctx, h1, conf, "show", f"{rows[0][0]}:{rows[0][1]}")
        cpu = (own.get("run") or {}).get("cpu_ns") or 0
        want = truth[jid]["cpu_ns"]
        ctx.close(cpu, want, want // 100, f"{label}: job {jid}'s run on {fleet.host_of(rows[0][0])} vs sacct (ns)")
        print(f"      job {jid} on {fleet.host_of(rows[0][0])}: ours {cpu / 1e6:.1f} ms, "
              f"sacct {want / 1e6:.1f} ms ({(cpu - want) / max(want, 1) * 100:+.2f}%)", flush=True)
    # runs: the pipeline is one row (its jobs' runs folded in), with the whole CPU.
    rows = [r for r in fleet_json(ctx, h1, conf, "runs")["runs"] if f"{r['host']}:{r['id']}" == run]
    ctx.check(len(rows) == 1 and rows[0]["cpu_ns"] == total,
              f"{label}: fleet runs lists the pipeline once with its CPU {total}: {rows}")
    job_hosts = {fleet.machines[t["node"]].machine_id for t in truth.values()}
    folded = [r for r in fleet_json(ctx, h1, conf, "runs")["runs"] if r["host"] in job_hosts]
    ctx.check(not folded, f"{label}: no job's run of hosts 2 and 3 is a row of its own: {folded}")
    text = h1.run("tracer", "--fleet", conf, "show", run)
    ctx.check(text.returncode == 0 and "Hosts of this run" in text.stdout,
              f"{label}: fleet show text: {text.returncode} {text.stderr[-300:]}")
    return {jid: steps.get(j.get("step_id")) or {} for jid, j in jobs.items()}


def check_steps(ctx, label, got, want):
    """Each job under the step its own engine says (WANT: {job id: (field, value)})."""
    for jid, (field, value) in want.items():
        ctx.check((got.get(jid) or {}).get(field) == value,
                  f"{label}: job {jid}'s step has {field} {value!r}: {(got.get(jid) or {}).get(field)!r}")


def sacct_truth(ctx, slurm, workdirs, expect):
    """{job id: {"cpu_ns": sum of its step lines' TotalCPU, "node": NodeList}} from slurmdbd."""
    jobs = {}
    for wd in workdirs:
        jobs.update(sacct_jobs(slurm, wd, expect=expect.get(wd, 1), timeout=90))
    nodes = {}
    p = subprocess.run(["sacct", "-a", "-X", "-P", "-n", "--format=JobIDRaw,NodeList", "-j", ",".join(jobs)],
                       env=slurm.env, capture_output=True, text=True, timeout=60)
    for line in p.stdout.splitlines():
        raw, node = (line.split("|") + [""])[:2]
        nodes[raw] = node
    return {raw: {"cpu_ns": j["cpu_ns"], "node": nodes.get(raw), "state": j["state"]} for raw, j in jobs.items()}


def check_scope(ctx, fleet, ch, placed):
    """Each host shipped its own machine's processes only: the burns of a job's work dir
    (two per job of (a), one per Snakemake job or Nextflow task) from the node sacct ran it on, the
    submitting sbatch and the head's own burn from h1, each under its machine id.
    PLACED: {work dir: {host: burns expected}}."""
    got = {}
    for host, cwd, n in ch.rows("SELECT _host, cwd, count() FROM tracer.processes FINAL "
                                "WHERE exe = '/fleet/bin/burn' GROUP BY _host, cwd"):
        got.setdefault(cwd, {})[fleet.host_of(host)] = int(n)
    ctx.check(got == placed, f"each job's burns recorded by its own node alone: {got}, want {placed}")
    sbatch = {fleet.host_of(h): int(n) for h, n in ch.rows(
        "SELECT _host, count() FROM tracer.processes FINAL WHERE exe = '/usr/bin/sbatch' GROUP BY _host")}
    ctx.check(sbatch == {"h1": 7}, f"the seven sbatch recorded by h1 alone: {sbatch}")
    hosts = {fleet.host_of(h) for (h,) in ch.rows("SELECT DISTINCT _host FROM tracer.processes")}
    ctx.check(hosts == {"h1", "h2", "h3"}, f"three hosts shipped, each under its machine id: {hosts}")
    print(f"    scope: burns by work dir and host {got}; sbatch by host {sbatch}", flush=True)


def start_clickhouse(ctx):
    # ClickHouse's data on a tmpfs: its tens of thousands of part files take minutes to
    # delete on this machine's disk (ext4 with discard), an unmount no time.
    os.makedirs(ctx.path("ch"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2g,mode=0755", "tracer-fleet-ch", ctx.path("ch")], check=True)
    ctx.cleanups.append(lambda: subprocess.run(["umount", ctx.path("ch")], check=True))
    ch = ClickHouse(ctx.path("ch"))
    ch.start()
    ctx.cleanups.append(ch.stop)
    return ch


def write_workloads(ctx, shared):
    """The pipelines' files in /fleet, which every machine sees."""
    os.makedirs(os.path.join(shared, "bin"))
    shutil.copy(build_burn(ctx), os.path.join(shared, "bin/burn"))
    for f in ("nextflow", "command.run.in"):
        shutil.copy(os.path.join(NEXTFLOW, f), os.path.join(shared, "bin", f))
    for name, text, mode in (("job.sh", JOB_SH, 0o755), ("head.sh", HEAD_SH, 0o755),
                             ("sm/Snakefile", SNAKEFILE, 0o644), ("nf/main.nf", MAIN_NF, 0o644)):
        path = os.path.join(shared, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)


def engine_run(h1, engine):
    runs = [r for r in json.loads(h1.run("tracer", "runs", "--json").stdout)["runs"] if r.get("engine") == engine]
    if len(runs) != 1:
        raise Failure(f"h1 recorded one {engine} run: {runs}")
    return f"{h1.machine_id}:{runs[0]['id']}"


def script_pipeline(ctx, fleet, h1, conf, ch, slurm, placed):
    """(a) the script: two steps waiting on sbatch --wait, one job on each node."""
    h1.sh("tracer run --run fleet-sbatch -- /fleet/head.sh")
    rid = [r["id"] for r in json.loads(h1.run("tracer", "runs", "--json").stdout)["runs"]
           if r.get("name") == "fleet-sbatch"]
    if len(rid) != 1:
        raise Failure(f"h1 recorded the script's run once: {rid}")
    truth = sacct_truth(ctx, slurm, ["/fleet/a/j2", "/fleet/a/j3"], {})
    ids = {open(os.path.join(fleet.shared, f"a/{n}.id")).read().strip(): n for n in ("j2", "j3")}
    ctx.check(set(ids) == set(truth) and all(truth[j]["node"] == "h" + ids[j][1:] for j in ids),
              f"sbatch's ids {ids} are sacct's jobs on the nodes asked for: {truth}")
    placed.update({"/fleet": {"h1": 1}, "/fleet/a/j2": {"h2": 2}, "/fleet/a/j3": {"h3": 2}})
    steps = check_pipeline(ctx, fleet, h1, conf, ch, "sbatch --wait", f"{h1.machine_id}:{rid[0]}", truth)
    ctx.check(len({s.get("id") for s in steps.values()}) == 2, f"each job under the step of its own sbatch: {steps}")


def snakemake_pipeline(ctx, fleet, h1, conf, ch, slurm, placed):
    """(b) Snakemake --cluster sbatch from h1; Slurm places the three jobs."""
    h1.sh("cd /fleet/sm && snakemake -j2 --scheduler greedy --latency-wait 10 "
          "--cluster 'sbatch --mem=100M -o /fleet/sm/slurm-%j.out' > /fleet/sm/sm.log 2>&1")
    run = engine_run(h1, "snakemake")
    truth = sacct_truth(ctx, slurm, ["/fleet/sm"], {"/fleet/sm": 3})
    ctx.check(len(truth) == 3 and all(t["state"] == "COMPLETED" for t in truth.values()),
              f"sacct: Snakemake's three jobs completed: {truth}")
    steps = check_pipeline(ctx, fleet, h1, conf, ch, "snakemake --cluster", run, truth)
    rules = snakemake_job_rules(open(os.path.join(fleet.shared, "sm/sm.log")).read())
    ctx.check(set(rules) == set(truth), f"Snakemake's log names sacct's jobs: {rules}")
    check_steps(ctx, "snakemake --cluster", steps, {jid: ("name", rule) for jid, (rule, _) in rules.items()})
    placed["/fleet/sm"] = {}
    for t in truth.values():
        placed["/fleet/sm"][t["node"]] = placed["/fleet/sm"].get(t["node"], 0) + 1


def nextflow_pipeline(ctx, fleet, h1, conf, ch, slurm, placed):
    """(c) Nextflow's slurm executor's shapes: each task a job started in its work dir."""
    h1.sh("cd /fleet/nf && /fleet/bin/nextflow run main.nf -process.executor slurm > /fleet/nf/nf.log 2>&1")
    run = engine_run(h1, "nextflow")
    tasks = dict(line.split() for line in open(os.path.join(fleet.shared, "nf/work/tasks.txt")))
    truth = sacct_truth(ctx, slurm, sorted(tasks.values()), {})
    ctx.check(len(truth) == 2, f"sacct: a job per task: {truth}")
    steps = check_pipeline(ctx, fleet, h1, conf, ch, "nextflow slurm", run, truth)
    keys = {}
    for raw, t in truth.items():
        wd = subprocess.run(["sacct", "-X", "-P", "-n", "--format=WorkDir", "-j", raw], env=slurm.env,
                            capture_output=True, text=True, timeout=60).stdout.strip()
        placed[wd] = {t["node"]: 1}
        keys[raw] = ("key", "/".join(wd.split("/")[-2:]))  # the task's hash, as Nextflow names its dir
    check_steps(ctx, "nextflow slurm", steps, keys)
    ctx.check(set(tasks.values()) <= set(placed), f"sacct's work dirs are the tasks': {sorted(placed)}")


def host_view(ctx, m):
    """A collector and aggregator on the host (this build's), scoped by --scope-cgroup to
    the cgroup nspawn put machine M in: the other scope, from outside the machine."""
    sock, db = ctx.path("hostview.sock"), ctx.path("hostview.db")
    agg, col = start_daemons(ctx, sock, db, extra_agg=("--scope-cgroup", f"/{m.cgroup}/payload"))
    return db, agg, col


def check_host_view(ctx, fleet, view, placed, name):
    """The host's view of machine NAME recorded the burns that machine ran, and no other's."""
    db, agg, col = view
    time.sleep(1.5)
    ctx.stop(col)
    ctx.stop(agg)
    got = dict(ctx.query("SELECT cwd, count(*) FROM processes WHERE exe = '/fleet/bin/burn' GROUP BY cwd", db=db))
    want = {d: hosts[name] for d, hosts in placed.items() if name in hosts}
    ctx.check(got == want, f"the host's aggregator scoped to {fleet.machines[name].cgroup}/payload recorded "
              f"{name}'s burns alone: {got}, want {want}")
    print(f"    on the host, --scope-cgroup /{fleet.machines[name].cgroup}/payload: burns {got}", flush=True)


def boot_fleet(ctx, target):
    """The package make's target built, one ClickHouse, the machines prepared with the
    workloads and booted: (ClickHouse, Fleet)."""
    deb = os.environ.get("TRACER_FLEET_DEB")
    if not deb or not os.path.exists(deb):
        raise Failure(f"TRACER_FLEET_DEB={deb!r}: make {target} builds the package first")
    ch = start_clickhouse(ctx)
    fleet = Fleet(ctx)
    fleet.prepare(deb)
    write_workloads(ctx, fleet.shared)
    fleet.boot(ch)
    return ch, fleet


@test
def fleet_one_run_across_three_machines(ctx):
    t0 = time.time()
    ch, fleet = boot_fleet(ctx, "fleet-test")
    for m in fleet.machines.values():
        active = m.run("systemctl", "is-active", "tracer-collector", "tracer-aggregator", "tracer-shipper").stdout.split()
        enabled = m.run("systemctl", "is-enabled", "tracer.target").stdout.strip()
        ident = m.run("sh", "-c", "hostname; cat /etc/machine-id").stdout.split()
        ctx.check(active == ["active"] * 3 and enabled == "enabled" and ident == [m.host, m.machine_id],
                  f"{m.host}: units {active}, tracer.target {enabled}, hostname and id {ident}")
    slurm = fleet.start_slurm()
    conf = fleet.fleet_config(ch)
    h1 = fleet.machines["h1"]
    print(f"    fleet up in {time.time() - t0:.0f} s", flush=True)
    view = host_view(ctx, fleet.machines["h2"])
    placed = {}  # {work dir: {host: burns}}: where each pipeline's work ran
    for pipeline in (script_pipeline, snakemake_pipeline, nextflow_pipeline):
        pipeline(ctx, fleet, h1, conf, ch, slurm, placed)
    check_scope(ctx, fleet, ch, placed)
    check_host_view(ctx, fleet, view, placed, "h2")
    print(f"    fleet test body {time.time() - t0:.0f} s", flush=True)
