"""Steps of plain scripts shaped like real pipelines: named by the tool that did their work
(never a loop's `seq`), command substitutions of a few ms not steps, each step's CPU the sum
of its processes' rows and its work's own wait4 (test/helpers/measure.c)."""
import json
import os
import shutil
import subprocess

from harness import Failure, load_json, run_script, test

# A step's CPU against its work's wait4: 9 ms + 1% (the collector's accounting, as in
# test_correlation.py), plus 20 ms for each process wrapping the work (measure, shells).
WORK_TOL_NS, WORK_TOL_FRAC, WRAPPER_NS = 9_000_000, 0.01, 20_000_000
# A step's CPU against the sum of its processes' rows: the same numbers, added up.
ROWS_TOL_NS = 1_000_000


def show_json(ctx, run_id):
    p = subprocess.run([ctx.bin("tracer"), "show", "--db", ctx.db, "--json", str(run_id)],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise Failure(f"tracer show --json: {p.returncode} {p.stderr}")
    return json.loads(p.stdout)


def samples(ctx, n):
    """n FASTQ-like files of pseudo-random reads (incompressible enough that gzip works)."""
    d = ctx.path("reads")
    os.makedirs(d)
    for i in range(n):
        with open(os.path.join(d, f"s{i}.fq"), "w") as f:
            rnd = os.urandom(3 << 20).hex()
            for j in range(0, len(rnd) - 150, 150):
                f.write(f"@r{j}\n{rnd[j:j + 150]}\n+\n{'I' * 150}\n")
    return d


def step_rows_cpu(ctx, run_id):
    return dict(ctx.query("SELECT step_id, sum(cpu_user_ns + cpu_sys_ns) FROM processes "
                          "WHERE run_id = ? AND step_id IS NOT NULL GROUP BY step_id", run_id))


def truth_cpu(ctx, names):
    return {n: (lambda t: t["utime_ns"] + t["stime_ns"])(load_json(ctx.path(f"t/{n}.json"))) for n in names}


@test
def script_steps_are_named_by_their_work_and_helpers_are_not_steps(ctx):
    """A sample loop (`for fq in $(ls *.fq)`, `$(basename ...)`), a subshell looping over
    `$(seq 2)`, an `ls | while read` loop and a background loop with `wait`: one step per
    command that did work, named gzip (x3), sort, wc, md5sum; no step named seq; the
    command substitutions, the `ls |` side and `date` are the script's own (outside every step). Each
    step's CPU is the sum of its processes' rows (1 ms) and its work's wait4 (9 ms + 1% +
    20 ms per wrapping process); the CPU outside steps is the script's and its helpers'."""
    m = ctx.helper("measure")
    reads = samples(ctx, 3)
    os.makedirs(ctx.path("t"))
    os.makedirs(ctx.path("out"))
    t, out = ctx.path("t"), ctx.path("out")
    # wc counts words too (tens of ms): wc -l's 2 ms of a 13 MB file came within a busy
    # host's noise of measure's own fork and wait, and the step was named measure.
    run = run_script(ctx, "align-samples.sh", f"""cd {reads}
for fq in $(ls *.fq); do
    s=$(basename $fq .fq)
    {m} {t}/gzip_$s.json -- gzip -c $fq > {out}/$s.fq.gz
done
( for i in $(seq 2); do {m} {t}/sort_$i.json -- sort s0.fq > /dev/null; done )
ls *.fq | while read fq; do {m} {t}/wc_${{fq%.fq}}.json -- wc $fq > /dev/null; done
for i in $(seq 3); do {m} {t}/md5_$i.json -- md5sum s1.fq > /dev/null; done > /dev/null &
n=$(date +%s)
wait
""")
    doc = show_json(ctx, run)
    steps = sorted(doc["steps"], key=lambda s: (s["start_ns"], s["id"]))
    names = [s["name"] for s in steps]
    ctx.check(sorted(names) == sorted(["gzip"] * 3 + ["sort", "wc", "md5sum"]),
              f"show --json: one step per command that did work, named by its tool: {names}")
    ctx.check("seq" not in names, f"no step is named after a loop's seq: {names}")
    # Ground truth for which step holds which work: the pid measure ran it as.
    work = {}
    for f in sorted(os.listdir(t)):
        truth = load_json(os.path.join(t, f))
        step = ctx.one("SELECT step_id FROM processes WHERE run_id = ? AND pid = ? ORDER BY id DESC LIMIT 1",
                       run, truth["pid"])
        work.setdefault(step, []).append((f, truth["utime_ns"] + truth["stime_ns"]))
    by_id = {s["id"]: s for s in steps}
    ctx.check(None not in work, f"every measured tool is in a step: {work.get(None)}")
    ctx.check(sorted(len(v) for v in work.values()) == [1, 1, 1, 2, 3, 3],
              f"each gzip its own step, the loops' iterations in their loop's step: "
              f"{ {by_id.get(k, {}).get('name'): [f for f, _ in v] for k, v in work.items()} }")
    rows = step_rows_cpu(ctx, run)
    for sid, items in work.items():
        s = by_id.get(sid)
        if not s:
            ctx.check(False, f"step {sid} of the work is in show --json")
            continue
        tool = items[0][0].split("_")[0]
        expect = {"gzip": "gzip", "sort": "sort", "wc": "wc", "md5": "md5sum"}[tool]
        ctx.check(s["name"] == expect, f"step {sid} doing {[f for f, _ in items]} is named {s['name']}")
        ctx.close(s["cpu_ns"], rows.get(sid, 0), ROWS_TOL_NS,
                  f"step {s['name']} CPU (ns) is the sum of its processes' rows")
        ns = sum(c for _, c in items)
        ctx.close(s["cpu_ns"], ns, WORK_TOL_NS + ns * WORK_TOL_FRAC + WRAPPER_NS * (len(items) + 1),
                  f"step {s['name']} CPU (ns) against its work's wait4 plus measure and shells")
    outside = ctx.query("SELECT exe, state, cpu_user_ns + cpu_sys_ns FROM processes WHERE run_id = ? "
                        "AND step_id IS NULL", run)
    progs = sorted(os.path.basename(e or "?") for e, state, _ in outside if state != "exec")
    ctx.check(progs == sorted(["bash", "ls", "ls", "basename", "basename", "basename", "date"]),
              f"outside every step: the script and its command substitutions: {progs}")
    out_cpu = sum(c or 0 for _, _, c in outside)
    ctx.check(out_cpu < 60_000_000, f"CPU outside steps is the script's and its helpers', {out_cpu / 1e6:.1f} ms")
    total = ctx.one("SELECT cpu_ns FROM runs WHERE id = ?", run)
    ctx.close(sum(s["cpu_ns"] for s in steps) + out_cpu, total, ROWS_TOL_NS * 8,
              "the steps' CPU and the CPU outside them add up to the run's")


@test
def command_substitutions_with_pipes_are_the_scripts_own(ctx):
    """A QC script as people write them, under `set -euo pipefail`: it counts its samples
    with `n=$(ls *.fq | wc -l)`, each sample's reads with `$(cat $fq | wc -l)`, upper-cases
    a name with `$(basename ... | tr ...)` and counts its outputs with `$(ls | grep -c)`;
    the work is one gzip per sample. Three steps, each named gzip, each holding exactly
    the pid its wait4 ran (test/helpers/measure.c), CPU within 9 ms + 1% + 20 ms per
    wrapping process; every command substitution's processes (the subshell and its pipe)
    are outside every step, and their count is what the script forked for them."""
    m = ctx.helper("measure")
    reads = samples(ctx, 3)
    t, out = ctx.path("t"), ctx.path("out")
    os.makedirs(t)
    os.makedirs(out)
    run = run_script(ctx, "qc-samples.sh", f"""set -euo pipefail
cd {reads}
n=$(ls *.fq | wc -l)
for fq in *.fq; do
    lines=$(cat $fq | wc -l)
    name=$(basename $fq .fq | tr a-z A-Z)
    {m} {t}/gzip_$name.json -- gzip -c $fq > {out}/$name.fq.gz
done
made=$(ls {out} | grep -c gz)
test "$made" -eq "$n"
""")
    doc = show_json(ctx, run)
    names = sorted(s["name"] for s in doc["steps"])
    ctx.check(names == ["gzip"] * 3, f"one step per gzip, none for a command substitution: {names}")
    by_id = {s["id"]: s for s in doc["steps"]}
    for f in sorted(os.listdir(t)):
        truth = load_json(os.path.join(t, f))
        sid = ctx.one("SELECT step_id FROM processes WHERE run_id = ? AND pid = ? ORDER BY id DESC LIMIT 1",
                      run, truth["pid"])
        s = by_id.get(sid)
        ctx.check(s is not None and s["name"] == "gzip", f"{f}'s gzip (pid {truth['pid']}) is in a gzip step: {sid}")
        if s:
            ns = truth["utime_ns"] + truth["stime_ns"]
            ctx.close(s["cpu_ns"], ns, WORK_TOL_NS + ns * WORK_TOL_FRAC + WRAPPER_NS * 2,
                      f"step {sid} CPU (ns) against its gzip's wait4 plus measure and a shell")
    outside = ctx.query("SELECT exe FROM processes WHERE run_id = ? AND step_id IS NULL AND state != 'exec'",
                        run)
    progs = sorted(os.path.basename(e or "?") for (e,) in outside)
    # Per sample: cat, wc, basename, tr and the two subshells; once: ls, wc, ls, grep,
    # their two subshells, and the script. bash may run `test` as a builtin.
    want = sorted(["bash"] * (1 + 2 + 2 * 3) + ["ls", "wc", "ls", "grep"] +
                  ["cat", "wc", "basename", "tr"] * 3)
    ctx.check(progs == want, f"outside every step: the script and its command substitutions: {progs}")


@test
def script_steps_no_tool_dominates_are_named_by_their_command(ctx):
    """Three programs of equal work in one step (a third each, none more than half): a
    `bash -c` step is named by its command line, cut; a subshell (no command line of its
    own; its last command, which bash execs in place, does not give it one) by its two main
    tools. A step where one tool did 80% is named by that tool though
    another ran first (a short `cp` before `gzip`)."""
    burn = ctx.helper("cpuburn")
    spin, churn = ctx.path("spin"), ctx.path("churn")
    shutil.copy(burn, spin)
    shutil.copy(burn, churn)
    data = ctx.path("data.bin")
    with open(data, "wb") as f:
        f.write(os.urandom(6 << 20))
    run = run_script(ctx, "mixed.sh",
                     f"bash -c '{burn} 120 & {spin} 120 & {churn} 120 & wait'\n"
                     f"( {burn} 120; {spin} 120; {churn} 120 )\n"
                     f"( cp {data} {ctx.path('copy.bin')}; gzip -c {ctx.path('copy.bin')} > /dev/null )\n")
    steps = sorted(show_json(ctx, run)["steps"], key=lambda s: (s["start_ns"], s["id"]))
    names = [s["name"] for s in steps]
    ctx.check(len(steps) == 3, f"three steps: {names}")
    if len(steps) != 3:
        return
    first, second, third = names
    ctx.check(first.startswith(f"bash -c {burn} 120 & ") and first.endswith("...") and len(first) <= 72,
              f"no tool dominates the bash -c step: its command line, cut: {first!r}")
    tools = second.split(" + ")
    ctx.check(len(tools) == 2 and set(tools) <= {"cpuburn", "spin", "churn"},
              f"no tool dominates the subshell: its two main tools: {second!r}")
    ctx.check(third == "gzip", f"gzip did most of the work after a short cp: {third!r}")
    rows = step_rows_cpu(ctx, run)
    for s in steps:
        ctx.close(s["cpu_ns"], rows.get(s["id"], 0), ROWS_TOL_NS,
                  f"step {s['name']!r} CPU (ns) is the sum of its processes' rows")


@test
def script_step_of_a_forking_program_is_named_by_it(ctx):
    """A step whose program's work is done by forked workers that never exec (forkburn: two
    children of 150 ms, its own CPU about 1 ms) after a 60 ms cpuburn in the same subshell
    is named forkburn: a fork child's CPU is its parent program's. Ground truth: forkburn's
    wait4 of its children; the step's CPU the sum of its rows (1 ms)."""
    out = ctx.path("fork.json")
    run = run_script(ctx, "forking.sh",
                     f"( {ctx.helper('cpuburn')} 60; {ctx.helper('forkburn')} {out} 2 150 )\n")
    steps = show_json(ctx, run)["steps"]
    with open(out) as f:
        children = json.load(f)["children_cpu_ns"]
    ctx.check(len(steps) == 1 and steps[0]["name"] == "forkburn",
              f"one step, named by the program whose forks did {children / 1e6:.0f} ms: "
              f"{[s['name'] for s in steps]}")
    rows = step_rows_cpu(ctx, run)
    for s in steps:
        ctx.close(s["cpu_ns"], rows.get(s["id"], 0), ROWS_TOL_NS, f"step {s['name']!r} CPU is its rows' sum")
        ctx.check(s["cpu_ns"] >= children, f"step CPU {s['cpu_ns']} holds the forks' wait4 {children}")
