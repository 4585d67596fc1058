"""A corpus of ordinary scripts and workflows, each with the verdicts a user must and
must not read about it (docs/insight.md states the rules).

Clean scripts use the idioms shells and engines use on purpose (a producer ended by
`| head`, `grep -q` in `if`, `|| true`, fallbacks, loops, `timeout ... ||`, a retry
that succeeds): exit 0, status ok, no critical signal, no "Why it failed", no
`retried` unless an engine re-ran a job. Failing scripts each have one known first
cause: `tracer explain` must say why it failed and list that cause first, with its
evidence. Scripts that are slow for a known reason (a stalled tool, CPU contention,
synchronous writes) get their warning and no critical signal.

Ground truth: the expected exit status of each script is what bash gives it (checked
against the run's exit code and `tracer run`'s own), each cause is what the script
was written to do, and the process table is checked for the process named.
"""
import json
import os
import subprocess
import time

from harness import Failure, start_daemons, test, write_script
from test_telemetry import MemoryCgroup


class Case:
    def __init__(self, name, body, exit=0, cause=None, evidence=(), must=(), must_not=(), argv=None,
                 not_evidence=(), went_on_past=(), own_status=False):
        self.name, self.body, self.exit, self.cause = name, body, exit, cause
        self.evidence, self.must, self.must_not = evidence, set(must), set(must_not)
        self.argv, self.not_evidence, self.went_on_past = argv, not_evidence, went_on_past
        self.own_status = own_status  # the script's own status is the cause: no step holds it


def data_files(ctx):
    """Inputs the scripts work on: text, a gzip, two samples, a Makefile tree."""
    d = ctx.path("data")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "reads.txt"), "w") as f:
        for i in range(200000):
            f.write(f"read{i}\tchr{i % 23}\t{(i * 7919) % 100000}\n")
    for s in "abcd":
        with open(os.path.join(d, f"sample_{s}.tsv"), "w") as f:
            for i in range(20000):
                f.write(f"{s}{i % 997}\t{(i * 31) % 1000}\n")
    subprocess.run(["gzip", "-k", "-f", os.path.join(d, "reads.txt")], check=True)
    return d


def cases(ctx, d, flaky_ok, flaky_never):
    reads = os.path.join(d, "reads.txt")
    make_ok = os.path.join(d, "mk_ok")
    make_bad = os.path.join(d, "mk_bad")
    for path, recipe in ((make_ok, "sha256sum $< > $@"), (make_bad, "sort -k 9z $< > $@")):
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "Makefile"), "w") as f:
            f.write("all: " + " ".join(f"{s}.sum" for s in "abcd") + "\n"
                    f"%.sum: {d}/sample_%.tsv\n\t{recipe}\n")
    smk_ok, smk_bad = os.path.join(d, "smk_ok"), os.path.join(d, "smk_bad")
    for path, job in ((smk_ok, flaky_ok), (smk_bad, flaky_never)):
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "Snakefile"), "w") as f:
            f.write("rule count_reads:\n    output: 'counts.txt'\n"
                    f"    shell: 'python3 {job} {path}/attempt && wc -l {reads} > {{output}}'\n")
    # A job whose tools all succeed and whose own shell then exits 3: no tool is the cause.
    smk_exit = os.path.join(d, "smk_exit")
    os.makedirs(smk_exit, exist_ok=True)
    with open(os.path.join(smk_exit, "Snakefile"), "w") as f:
        f.write("rule sorted_c:\n    output: 'sorted_c.txt'\n"
                f"    shell: 'sort -k2,2n {d}/sample_c.tsv > {{output}}; exit 3'\n")
    burn = "head -c 300M /dev/zero | sha256sum > /dev/null"
    # Like pyenv's and conda's shims: a lookup that fails (handled), then exec of the tool.
    shim = os.path.join(d, "python3-shim")
    with open(shim, "w") as f:
        f.write("#!/bin/bash\nreadlink /no/such/version-file > /dev/null\nexec python3 \"$@\"\n")
    os.chmod(shim, 0o755)
    qc = os.path.join(d, "qc_gate.py")
    with open(qc, "w") as f:
        f.write("import sys\nprint(sum(1 for _ in open(sys.argv[1])), 'reads')\nsys.exit(3)\n")
    n = 2 * os.cpu_count()
    return [
        # --- clean: idioms that end processes "badly" on purpose --------------------------
        Case("gzip_into_head", f"zcat {reads}.gz | head -n 5 > /dev/null\n"
                               f"seq 1 10000000 | gzip -1 | head -c 1000 > /dev/null\n"),
        Case("grep_q_in_if", f"if grep -q NEEDLE_NOT_THERE {reads}; then echo found; else echo absent; fi\n"),
        Case("timeout_handled", "timeout 0.3 python3 -c 'import time; time.sleep(5)' || echo 'timed out, going on'\n",
             must_not={"retried"}),
        Case("loop_over_samples", "set -e\n" + "".join(
            f"sort -k2,2n {d}/sample_{s}.tsv | uniq -c > {ctx.path(s + '.out')}\n" for s in "abcd")),
        Case("fallback_tool", f"pigz -c {reads} > {ctx.path('r.gz')} 2>/dev/null || gzip -c {reads} > {ctx.path('r.gz')}\n"),
        Case("diff_or_true", f"diff {d}/sample_a.tsv {d}/sample_b.tsv > {ctx.path('ab.patch')} || true\n"),
        Case("make_parallel", f"make -s -j2 -C {make_ok}\n"),
        Case("xargs_parallel", f"ls {d}/sample_*.tsv | xargs -P2 -n1 md5sum > {ctx.path('sums')}\n"),
        Case("python_checks_returncode",
             "python3 - <<'EOF'\nimport subprocess\n"
             f"r = subprocess.run(['grep', '-c', 'chr22', '{reads}'], capture_output=True)\n"
             "probe = subprocess.run(['ls', '/no/such/optional/config'], capture_output=True)\n"
             "print('optional config', 'absent' if probe.returncode else 'present', r.stdout.decode().strip())\n"
             "EOF\n"),
        Case("test_for_optional_file", "set -e\n/usr/bin/test -f /no/such/site.cfg || echo 'default config'\necho ok\n"),
        Case("while_read_loop", f"set -o pipefail\nls {d}/sample_*.tsv | while read f; do wc -l \"$f\"; done > {ctx.path('wc')}\n"),
        Case("trap_cleanup", f"set -e\ntmp=$(mktemp -d)\ntrap 'rm -rf \"$tmp\"' EXIT\ncp {d}/sample_a.tsv \"$tmp\"/\n"
                             f"tar czf {ctx.path('a.tgz')} -C \"$tmp\" .\n"),
        Case("snakemake_retry_succeeds", None, argv=["snakemake", "--cores", "1", "-q", "--restart-times", "1",
                                                     "-s", os.path.join(smk_ok, "Snakefile"), "-d", smk_ok],
             must={"retried"}),
        # --- slow for a known reason: a warning, never critical ---------------------------
        Case("stalled_tool", "python3 -c 'import time; time.sleep(5)'\n", must={"stalled"}),
        Case("cpu_contention", " & ".join([f"( {burn} )"] * n) + " & wait\n", must={"cpu_contention"}),
        # --- failing: one known first cause each ------------------------------------------
        Case("missing_input", f"set -e\nsamtools view -b {d}/no_such_sample.bam > {ctx.path('o.bam')}\necho never\n",
             exit=1, cause="samtools", evidence=("no_such_sample.bam", "No such file or directory")),
        Case("bad_option_after_sigpipe", "set -e\nseq 1 1000000 | head -n 1 > /dev/null\n"
                                         f"cut --no-such-flag {reads}\n",
             exit=1, cause="cut", evidence=("exit code 1",)),
        Case("command_not_found", "set -e\necho start\nfastqc_is_not_installed reads.fq\necho never\n",
             exit=127, cause="127", evidence=("not found",)),
        Case("pipefail_in_middle", f"set -eo pipefail\ncat {reads} | grep --no-such-option x | wc -l\n",
             exit=2, cause="grep"),
        Case("python_exception", f"set -e\nwc -l {reads} > /dev/null\n"
                                 "python3 -c \"raise ValueError('sample sheet has no header')\"\necho never\n",
             exit=1, cause="python3", not_evidence=PYTHON_PROBES),
        Case("segfault", "set -e\necho loading\npython3 -c 'import ctypes; ctypes.string_at(0)'\necho never\n",
             exit=139, cause="python3", evidence=("SIGSEGV",), not_evidence=PYTHON_PROBES),
        Case("shim_then_crash", "set -e\n" + shim + " -c 'import ctypes; ctypes.string_at(0)'\necho never\n",
             exit=139, cause="python3", evidence=("SIGSEGV",)),
        Case("make_recipe_fails", f"make -s -j2 -C {make_bad}\n", exit=2, cause="sort"),
        Case("killed_by_kill", "sleep 30 &\npid=$!\nsleep 0.2\nkill -9 $pid\nwait $pid\n",
             exit=137, cause="sleep", evidence=("SIGKILL",)),
        Case("oom_in_cgroup", None, exit=137, cause="python3", evidence=("OOM",), must={"oom_kill"}),
        # Failures the script handled or ignored, then the one it ends with: bash's status is
        # the last command's, so that is the cause; the earlier ones are listed apart.
        Case("went_on_past_failures_then_fails",
             "sleep 30 &\nbg=$!\nsleep 0.2\nkill -TERM $bg\nwait $bg || echo 'stopped the background job'\n"
             "timeout -s INT 0.3 python3 -c 'import time; time.sleep(5)' || true\n"
             f"gzip -t {d}/sample_a.tsv 2>/dev/null || echo 'not compressed: read as text'\n"
             f"sort -k2,2n {d}/sample_a.tsv > {ctx.path('sorted_a')}\n"
             f"join {ctx.path('sorted_a')} {d}/no_such_index.tsv > {ctx.path('joined')}\n",
             exit=1, cause="join", evidence=("no_such_index.tsv",), went_on_past=("sleep", "gzip")),
        # A script that hands its process to its last tool: that tool is a step of its own.
        Case("script_execs_its_tool", f"set -e\nsort -k2,2n {d}/sample_b.tsv > {ctx.path('sorted_b')}\n"
                                      "exec python3 -c 'import sys; sys.exit(5)'\n",
             exit=5, cause="python3", evidence=("exit code 5",)),
        # A Python program that fails is named as the program, not as the interpreter (nor
        # as the version manager's shim that started it, where python3 is pyenv's).
        Case("python_program_fails", f"set -e\nwc -l {reads} > /dev/null\npython3 {qc} {reads}\necho never\n",
             exit=3, cause="qc_gate.py exited with 3 and failed step 'qc_gate.py'", not_evidence=PYTHON_PROBES),
        # The shim's failed lookup was handled (it went on to exec the tool), so the first
        # failure of this shell string, which then exits with a status of its own, is cut's.
        Case("shim_then_own_status", None, argv=["bash", "-c", f"{shim} -c 'pass'; cut --no-such-flag {reads} "
                                                               "2>/dev/null; echo done; exit 4"],
             exit=4, cause="cut exited with 1"),
        # A tool fails and the script exits with a status of its own right after (`|| exit 4`):
        # that tool is the cause. Ran on past it first (another tool after), the script's
        # own `exit 4` is, and the failure is one the run went on past.
        Case("tool_fails_then_own_exit", f"sort -k2,2n {d}/sample_d.tsv > {ctx.path('sorted_d1')}\n"
                                         "ls /no/such/results 2>/dev/null || exit 4\necho never\n",
             exit=4, cause="ls exited with 2"),
        Case("went_on_then_own_exit", "ls /no/such/results 2>/dev/null\n"
                                      f"sort -k2,2n {d}/sample_d.tsv > {ctx.path('sorted_d2')}\nexit 4\n",
             exit=4, cause="went_on_then_own_exit.sh exited with 4 and failed run",
             evidence=("set by the shell script itself",), went_on_past=("ls",), own_status=True),
        # pipefail makes a producer's SIGPIPE the pipeline's failure: the one SIGPIPE cause.
        Case("pipefail_into_head", "set -euo pipefail\nls /no/such/cache 2>/dev/null || echo 'no cache'\n"
                                   f"sort -k2,2 {reads} | head -n 3\necho never\n",
             exit=141, cause="sort", evidence=("SIGPIPE", "pipefail"), went_on_past=("ls",)),
        Case("snakemake_job_exits_after_its_tools", None,
             argv=["snakemake", "--cores", "1", "-q", "-s", os.path.join(smk_exit, "Snakefile"), "-d", smk_exit],
             exit=1, cause="which no tool in it returned", evidence=("set by the shell script itself",)),
        Case("snakemake_retry_fails", None, argv=["snakemake", "--cores", "1", "-q", "--restart-times", "1",
                                                  "-s", os.path.join(smk_bad, "Snakefile"), "-d", smk_bad],
             exit=1, cause="never.py exited with 3", must={"retried"}),
    ]


# What every Python probes for at start and usually does not find: never evidence.
PYTHON_PROBES = ("pyvenv.cfg", "._pth", "pybuilddir.txt")
FLAKY = ("import os, sys\nmark = sys.argv[1]\n"
         "if not os.path.exists(mark):\n    open(mark, 'w').close()\n    sys.exit(3)\n")
NEVER = "import sys\nsys.exit(3)\n"


def explain_json(ctx, db, run):
    p = subprocess.run([ctx.bin("tracer"), "explain", "--db", db, "--json", str(run)], capture_output=True,
                       text=True, timeout=60)
    if p.returncode != 0:
        raise Failure(f"tracer explain --json {run}: {p.returncode} {p.stderr}")
    return json.loads(p.stdout)


def explain_text(ctx, db, run):
    p = subprocess.run([ctx.bin("tracer"), "explain", "--db", db, str(run)], capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        raise Failure(f"tracer explain {run}: {p.returncode} {p.stderr}")
    return p.stdout


@test
def corpus_of_scripts_gets_the_right_verdicts(ctx):
    """34 scripts and workflows, run one after another under one set of daemons; for
    each, the verdicts it must and must not produce (module docstring)."""
    sock, db = ctx.path("s.sock"), ctx.path("verdicts.db")
    d = data_files(ctx)
    flaky_ok, flaky_never = ctx.path("flaky.py"), ctx.path("never.py")
    for path, text in ((flaky_ok, FLAKY), (flaky_never, NEVER)):
        with open(path, "w") as f:
            f.write(text)
    os.chmod(d, 0o777)
    corpus = cases(ctx, d, flaky_ok, flaky_never)
    agg, col = start_daemons(ctx, sock, db, extra_agg=(
        "--signal", "stall-seconds=2", "--signal", "runq-seconds=0.3", "--signal", "runq-share=0.25"))
    cg = MemoryCgroup(f"tracer-it-verdict-{os.getpid()}", "64M")
    ran = {}
    try:
        for c in corpus:
            if c.name == "oom_in_cgroup":
                argv = cg.enter_cmd(["python3", "-c", "x = bytearray(300 << 20)"])
            else:
                argv = c.argv or [write_script(ctx, c.name + ".sh", c.body)]
            p = subprocess.run([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", c.name, "--",
                                *argv], capture_output=True, text=True, timeout=180, cwd=d)
            ran[c.name] = p
    finally:
        cg.remove()
    time.sleep(1.5)  # the last run's signals are written at its end
    ctx.stop(col)
    ctx.stop(agg)

    runs = {r["name"]: r for r in json.loads(subprocess.run(
        [ctx.bin("tracer"), "runs", "--db", db, "--json", "--limit", "100"], capture_output=True, text=True,
        timeout=60, check=True).stdout)["runs"]}
    false_critical = []
    for c in corpus:
        p = ran[c.name]
        what = f"{c.name}:"
        ctx.check(p.returncode == c.exit, f"{what} exits {c.exit} (bash's status), tracer run gave {p.returncode}: "
                                          f"{p.stderr[-300:]}")
        row = runs.get(c.name)
        if not row:
            ctx.check(False, f"{what} no run recorded")
            continue
        run_id = row["id"]
        exit_code = ctx.one("SELECT coalesce(exit_code, 128 + signal) FROM runs WHERE id = ?", run_id, db=db)
        ctx.check(exit_code == c.exit, f"{what} the run's exit code {exit_code} vs {c.exit}")
        sigs = ctx.query("SELECT kind, severity, message FROM signals WHERE run_id = ? "
                         "ORDER BY coalesce(at_ns, detected_ns), id", run_id, db=db)
        kinds = {s[0] for s in sigs}
        critical = [s for s in sigs if s[1] == "critical"]
        unnamed = ctx.query("SELECT key, kind FROM steps WHERE run_id = ? AND (name IS NULL OR trim(name) = '' "
                            "OR name GLOB '[0-9]*' OR name = '?')", run_id, db=db)
        ctx.check(not unnamed, f"{what} every step has a name a person recognises: {unnamed}")
        doc = explain_json(ctx, db, run_id)
        text = explain_text(ctx, db, run_id)
        for k in c.must:
            ctx.check(k in kinds, f"{what} must raise {k}: {sigs}")
        for k in c.must_not:
            ctx.check(k not in kinds, f"{what} must not raise {k}: {sigs}")
        if c.exit == 0:
            ctx.check(row["status"] == "ok", f"{what} status ok: {row['status']}")
            if critical:
                false_critical.append((c.name, critical))
            ctx.check("retried" in c.must or "retried" not in kinds, f"{what} no retry without an engine: {sigs}")
            ctx.check("Why it failed" not in text and not doc.get("failure"),
                      f"{what} no 'Why it failed' for a run that succeeded: {text[:300]}")
            continue
        ctx.check(row["status"] in ("failed", "killed"), f"{what} status failed: {row['status']}")
        ctx.check("Why it failed" in text and "nothing stood out" not in text,
                  f"{what} explain says why it failed: {text[:400]}")
        failure = doc.get("failure") or []
        first = failure[0]["message"] if failure else ""
        ctx.check(c.cause in first, f"{what} the first cause names {c.cause}: {[f['message'] for f in failure]}")
        if c.own_status:
            ctx.check(failure and failure[0].get("process_id") ==
                      ctx.one("SELECT command_process_id FROM runs WHERE id = ?", run_id, db=db),
                      f"{what} the first cause is the script itself: {failure[:1]}")
        elif failure and ctx.one("SELECT count(*) FROM steps WHERE run_id = ?", run_id, db=db):
            ctx.check(ctx.one("SELECT step_id FROM processes WHERE id = ?", failure[0].get("process_id"), db=db),
                      f"{what} the first cause is in a step, where its work is read: {failure[0]}")
        named = [f["process_id"] for f in failure if f.get("process_id")]
        ctx.check(len(named) == len(set(named)),
                  f"{what} each failed process is listed once: {[f['message'] for f in failure]}")
        ctx.check(critical and c.cause in critical[0][2],
                  f"{what} the earliest critical signal is the cause: {critical}")
        ctx.check(c.exit == 128 + 13 or not [m for (_, _, m) in critical if "signal 13" in m or "SIGPIPE" in m],
                  f"{what} SIGPIPE is never a cause (but under pipefail): {critical}")
        why = text.split("Why it failed", 1)[-1]
        for e in c.evidence:
            ctx.check(e in why, f"{what} evidence '{e}' in the explanation: {why[:600]}")
        for e in c.not_evidence:
            ctx.check(e not in why, f"{what} '{e}' is no evidence: {why[:600]}")
        past = [g["message"] for g in doc.get("went_on_past") or []]
        for tool in c.went_on_past:
            ctx.check(not [m for (_, _, m) in critical if m.startswith(tool)],
                      f"{what} {tool} failed earlier and the script went on: not critical: {critical}")
            ctx.check([m for m in past if m.startswith(tool) and "went on past" in m],
                      f"{what} {tool}'s failure is listed as one the run went on past: {past}")
        ctx.check(bool(past) == bool(c.went_on_past) and ("went on past" in why) == bool(c.went_on_past),
                  f"{what} failures the run went on past listed only where there are some: {past}")
    # The OOM-killed step is short (killed within a second) but gets its advice, above the
    # 64 MiB limit the test gave its cgroup and never below the peak it reached.
    if "oom_in_cgroup" in runs:
        rec = json.loads(subprocess.run([ctx.bin("tracer"), "recommend", "--db", db, "--json",
                                         str(runs["oom_in_cgroup"]["id"])], capture_output=True, text=True,
                                        timeout=60, check=True).stdout)
        killed = [s for s in rec["steps"] if s.get("oom_killed")]
        ctx.check(len(killed) == 1, f"oom_in_cgroup: one OOM-killed step to size: {rec['steps']}")
        for s in killed:
            advice_mib = s["memory_recommended_gib"] * 1024
            ctx.check(not s.get("too_short") and s["memory_verdict"] == "under-provisioned"
                      and advice_mib > 64 and advice_mib * 1024 >= s["peak_rss_kb"],
                      f"oom_in_cgroup: advice above the 64 MiB limit and the peak, however short: {s}")
    ctx.check(not false_critical, f"0 false critical signals on the clean scripts: {false_critical}")
    if len(corpus) < 20:
        raise Failure("the corpus holds fewer than 20 scripts")
