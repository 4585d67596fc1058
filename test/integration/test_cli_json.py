"""One JSON vocabulary across the CLI's verbs (docs/export.md): what a program
reading `tracer VERB --json` can rely on, checked on every verb against the
database's own rows, and errors as one JSON object with a non-zero exit."""
import json
import os
import signal
import subprocess
import time

from harness import Failure, start_daemons, test, write_script
from test_report import render

FLAGS = {"helper", "oom_killed", "core_dumped", "argv_truncated", "from_snapshot", "path_truncated",
         "active", "watched", "final", "failed"}
JSON_TEXT = {"argv", "details", "signature", "probes"}


def tracer(ctx, *args):
    p = subprocess.run([ctx.bin("tracer"), *args], capture_output=True, text=True, timeout=120)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        raise Failure(f"tracer {' '.join(args)}: stdout is not one JSON document (rc {p.returncode}): "
                      f"{p.stdout[:300]!r} {p.stderr[-300:]}")
    return p.returncode, doc, p.stderr


def vocabulary_problems(node, path="$"):
    """Keys and values that break the rules: durations in ns (no *_seconds),
    flags true/false, JSON-text columns as JSON, not as a string of it."""
    out = []
    if isinstance(node, dict):
        for key, value in node.items():
            where = f"{path}.{key}"
            if key.endswith("_seconds") or key == "seconds":
                out.append(f"{where}: a duration in seconds")
            if key in FLAGS and value is not None and not isinstance(value, bool):
                out.append(f"{where}: flag {value!r} is not true/false")
            if key in JSON_TEXT and isinstance(value, str):
                out.append(f"{where}: JSON inside a string")
            out += vocabulary_problems(value, where)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += vocabulary_problems(value, f"{path}[{i}]")
    return out


@test
def every_verb_speaks_one_json_vocabulary(ctx):
    """A run whose command fails after a handled failure, a killed helper and a
    step of its own; each verb's --json: "run" is the run's row (id and name as
    the database has them), CPU in ns, flags true/false, argv a list."""
    script = ctx.path("vocab.sh")
    with open(script, "w") as f:
        f.write("#!/bin/bash\n"
                f"{ctx.helper('cpuburn')} 300 {ctx.path('burn.json')} --token=abc\n"
                "grep -q nothing /no/such/input || echo handled\n"
                "sleep 5 & sleep 0.2; kill -9 $!\n"
                "wait\n"
                "exit 3\n")
    os.chmod(script, 0o755)
    ctx.tracer_run([script], "--run", "vocab", expect=3)
    run_id, name, cpu = ctx.query("SELECT id, name, cpu_ns FROM runs WHERE name = 'vocab'")[0]
    db = ("--db", ctx.db)
    docs = {}
    for verb in (("show",), ("explain",), ("signals",), ("timeline",), ("cost", "--rate", "0.5"),
                 ("recommend", "--rate", "0.5"), ("runs",), ("idle", "--rate", "0.5"), ("status",),
                 ("top", "--once"), ("energy",)):
        rc, doc, err = tracer(ctx, *verb, *db, "--json")
        # status says unhealthy (no daemons here) with exit 1, still as one document
        ctx.check(rc == 0 or verb[0] == "status", f"{verb[0]} --json: rc {rc} {err[-300:]}")
        docs[verb[0]] = doc
        problems = vocabulary_problems(doc)
        ctx.check(not problems, f"{verb[0]}: " + "; ".join(problems[:5]))
    for verb in ("show", "explain", "signals", "timeline", "cost", "recommend", "energy"):
        run = docs[verb].get("run")
        ctx.check(isinstance(run, dict) and run.get("id") == run_id and run.get("name") == name,
                  f"{verb}: \"run\" is the run's object: {str(run)[:200]}")
    ctx.check(docs["show"]["run"]["cpu_ns"] == cpu, "show's run holds the database's cpu_ns")
    breakdown = docs["cost"]["breakdown"]
    ctx.check(sum(b["cpu_ns"] for b in breakdown) == cpu and all(isinstance(b["cpu_ns"], int) for b in breakdown),
              f"cost's CPU in integer ns adds up to the run's {cpu}: {[b['cpu_ns'] for b in breakdown]}")
    energy = docs["energy"]["parts"]
    ctx.check(sum(b["cpu_ns"] for b in energy) in range(cpu - len(energy), cpu + len(energy) + 1),
              f"energy's CPU in ns adds up to the run's {cpu} (each part rounded): {[b['cpu_ns'] for b in energy]}")
    flat = []

    def walk(p):
        flat.append(p)
        for c in p.get("children", []):
            walk(c)
    for root in docs["show"]["processes"]:
        walk(root)
    want = ctx.one("SELECT count(*) FROM processes WHERE run_id = ?", run_id)
    ctx.check(len(flat) == want and all(isinstance(p["argv"], list) for p in flat),
              f"show: {len(flat)} processes (database {want}), each argv a list")
    killed = [p for p in flat if p.get("signal") == 9]
    ctx.check(len(killed) == 1 and killed[0]["argv"][0] == "sleep", f"the killed sleep: {killed}")
    tools = [t for s in docs["show"]["steps"] + [docs["show"]["outside_steps"]] for t in s["tools"]]
    ctx.check(tools and all(isinstance(t["helper"], bool) for t in tools), "a tool's helper flag is true/false")
    ctx.check(all(isinstance(s["active"], bool) for s in docs["signals"]["signals"]),
              "signal's active is true/false")
    listed = [r for r in docs["runs"]["runs"] if r["id"] == run_id]
    ctx.check(listed and listed[0]["name"] == name and listed[0]["cpu_ns"] == cpu, f"runs: {listed}")


@test
def json_errors_are_one_object_and_a_failing_exit(ctx):
    """With --json or --format json, a failure prints {"error", "verb",
    "exit_code"} on stdout (a program piping into a parser reads why) and exits
    non-zero; the same reason is on stderr for people. Without JSON, stdout stays
    empty."""
    ctx.tracer_run(["/bin/true"], "--run", "only", expect=0)
    db = ("--db", ctx.db)
    cases = [
        (("show", *db, "--json", "no-such-run"), "no run 'no-such-run'"),
        (("show", *db, "--format", "json", "no-such-run"), "no run 'no-such-run'"),
        (("signals", *db, "--format=json", "no-such-run"), "no run 'no-such-run'"),
        (("explain", *db, "--json", "no-such-run"), "no run 'no-such-run'"),
        (("timeline", *db, "--json", "--width", "abc"), "--width abc"),
        (("runs", *db, "--json", "--limit", "-1"), "--limit -1"),
        (("cost", *db, "--json", "--rate", "free"), "--rate"),
        (("recommend", "--db", ctx.path("missing.db"), "--json"), "missing.db"),
        (("idle", "--db", "/", "--json"), "is a directory"),
        (("signals", *db, "--json", "--format", "xml"), "--format"),
        (("runs", *db, "--json", "no-such-pipeline"), "no runs of pipeline 'no-such-pipeline'"),
    ]
    for args, reason in cases:
        rc, doc, err = tracer(ctx, *args)
        ctx.check(rc != 0 and isinstance(doc, dict) and reason in doc.get("error", "")
                  and doc.get("verb") == args[0] and doc.get("exit_code") == rc,
                  f"{' '.join(args[:1] + args[3:])}: rc {rc}, {doc}")
        ctx.check(reason in err, f"{args[0]}: the reason on stderr too: {err[-200:]!r}")
    for args in (("show", *db, "no-such-run"), ("runs", *db, "no-such-pipeline")):
        plain = subprocess.run([ctx.bin("tracer"), *args], capture_output=True, text=True)
        ctx.check(plain.returncode == 1 and plain.stdout == "" and "no run" in plain.stderr,
                  f"{args[0]} without JSON: rc {plain.returncode}, stdout {plain.stdout!r}")


@test
def tracer_db_names_the_database_for_every_verb(ctx):
    """TRACER_DB in the environment stands for --db in every verb, tracer run included
    (a private database needs no --db each time); --db still wins. tracer report --json
    says where the page went, with its size as the file system has it."""
    env = dict(os.environ, TRACER_DB=ctx.db)
    p = subprocess.run([ctx.bin("tracer"), "run", "--run", "by-env", "--", "/bin/true"], env=env,
                       capture_output=True, text=True, timeout=120)
    ctx.check(p.returncode == 0, f"tracer run with TRACER_DB: {p.returncode} {p.stderr[-400:]}")
    ctx.check(ctx.one("SELECT count(*) FROM runs WHERE name = 'by-env'") == 1, "the run went to $TRACER_DB")
    for verb in (("runs",), ("show", "by-env"), ("signals", "by-env"), ("status",)):
        q = subprocess.run([ctx.bin("tracer"), *verb, "--json"], env=env, capture_output=True, text=True,
                           timeout=60)
        doc = json.loads(q.stdout or "{}")
        ctx.check(("error" not in doc) and (q.returncode == 0 or verb[0] == "status")
                  and (verb[0] != "status" or doc.get("db") == ctx.db),
                  f"tracer {verb[0]} reads $TRACER_DB: rc {q.returncode} {q.stdout[:200]} {q.stderr[-200:]}")
    other = subprocess.run([ctx.bin("tracer"), "runs", "--db", ctx.path("nothing.db"), "--json"], env=env,
                           capture_output=True, text=True, timeout=60)
    ctx.check(other.returncode != 0 and "nothing.db" in json.loads(other.stdout).get("error", ""),
              f"--db wins over TRACER_DB: {other.stdout[:200]}")
    html = ctx.path("page.html")
    r = subprocess.run([ctx.bin("tracer"), "report", "--json", "--html", html, "by-env"], env=env,
                       capture_output=True, text=True, timeout=60)
    doc = json.loads(r.stdout or "{}")
    ctx.check(r.returncode == 0 and doc.get("html") == html and doc.get("bytes") == os.path.getsize(html)
              and doc.get("run") == ctx.one("SELECT id FROM runs WHERE name = 'by-env'"),
              f"report --json: {r.stdout[:200]} {r.stderr[-200:]}")


@test
def tracer_help_verb_is_the_verbs_help(ctx):
    """`tracer help` prints the usage `tracer --help` prints, and `tracer help VERB` the
    verb's own --help, exit 0 (git's and most CLIs' form; it was an unknown verb)."""
    def out(*args):
        p = subprocess.run([ctx.bin("tracer"), *args], capture_output=True, text=True, timeout=30)
        return p.returncode, p.stdout
    ctx.check(out("help") == out("--help") and out("help")[1].startswith("usage: tracer VERB"),
              f"tracer help: {out('help')}")
    for verb in ("run", "show", "explain", "cost"):
        ctx.check(out("help", verb) == out(verb, "--help") and out("help", verb)[0] == 0,
                  f"tracer help {verb}: {out('help', verb)[1][:200]}")
    # help's own help is the usage too, not "unknown verb '--help'" (it was).
    for form in (("help", "--help"), ("help", "-h"), ("help", "help")):
        ctx.check(out(*form) == out("--help"), f"tracer {' '.join(form)}: {out(*form)}")


def explained(ctx, db):
    rc, doc, err = tracer(ctx, "explain", "--db", db, "--json", "long")
    ctx.check(rc == 0, f"explain --json: rc {rc} {err[-300:]}")
    return doc["run"], {s["name"] or s["key"]: s for s in doc["steps"]}


def html_report_of(ctx, db, run, name):
    """tracer report --html of a run, rendered: its summary cards, the story's
    paragraph on a run not ended, and the status of each row of the task table."""
    html = ctx.path(name + ".html")
    p = subprocess.run([ctx.bin("tracer"), "report", "--db", db, "--html", html, run],
                       capture_output=True, text=True, timeout=60)
    ctx.check(p.returncode == 0, f"tracer report --html: {p.returncode} {p.stderr}")
    dom = render(ctx, html)
    cards = {e["attrs"]["data-key"]: e["text"] for e in dom.by_class("card")}
    story = next((e["text"] for e in dom.elements if e["attrs"].get("id") == "run-open"), "")
    statuses = {e["text"] for e in dom.elements if e["tag"] == "td" and
                any(c.startswith("status-") for c in e["attrs"].get("class", "").split())}
    return cards, story, statuses


@test
def a_run_not_ended_reads_running_so_far_then_unknown_when_no_collector_watches(ctx):
    """A script under tracer run beside running daemons, in its second step (a
    sleep): runs, show and explain say it is running, for as long as the test's
    own clock says since it launched the run (within the launch's own delay,
    3 s at most). Then its collector stops while the command goes on: no verb
    may still call it running; each says unknown, with its time up to the
    collector's last word (at most the test's clock at the stop)."""
    sock, db = ctx.path("s.sock"), ctx.path("live.db")
    agg, col = start_daemons(ctx, sock, db)
    script = write_script(ctx, "long.sh", f"{ctx.helper('cpuburn')} 300\nsleep 60\n")
    t0 = time.time()
    run = subprocess.Popen([ctx.bin("tracer"), "run", "--socket", sock, "--db", db, "--run", "long", "--", script],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        end = time.time() + 40
        while time.time() < end and not ctx.query(
                "SELECT count(*) FROM processes p JOIN runs r ON r.id = p.run_id WHERE r.name = 'long' "
                "AND p.comm = 'sleep' AND p.state = 'running'", db=db)[0][0]:
            time.sleep(0.1)
        time.sleep(1.0)
        before = time.time() - t0
        r, steps = explained(ctx, db)
        after = time.time() - t0
        ctx.check(r["end_ns"] is None and r.get("watched") is True, f"explain: the run is watched: {r}")
        so_far = r.get("so_far_ns", 0) / 1e9
        ctx.check(before - 3.0 <= so_far <= after + 0.05,
                  f"explain: running {so_far:.2f} s so far; the test's clock says {before:.2f} .. {after:.2f}")
        sleeping = steps.get("sleep", {})
        ctx.check(sleeping.get("end_ns") is None and 0.9 <= sleeping.get("so_far_ns", 0) / 1e9 <= so_far,
                  f"explain: the sleep step is open, at least 1 s so far: {sleeping}")
        ctx.check(sleeping.get("explanation", "").startswith("not ended"),
                  f"explain: nothing of the running sleep is counted yet, and it says so: {sleeping}")
        text = subprocess.run([ctx.bin("tracer"), "explain", "--db", db, "long"], capture_output=True,
                              text=True, timeout=60).stdout
        ctx.check("running for" in text.splitlines()[0] and "so far" in text,
                  f"explain says running for so long: {text[:400]}")
        rc, doc, err = tracer(ctx, "runs", "--db", db, "--json")
        listed = [x for x in doc["runs"] if x["name"] == "long"]
        ctx.check(listed and listed[0]["watched"] is True, f"runs --json: watched: {listed}")
        show = subprocess.run([ctx.bin("tracer"), "show", "--db", db, "long"], capture_output=True,
                              text=True, timeout=60).stdout
        ctx.check("running, wall" in show and "so far" in show.splitlines()[2], f"show: {show[:400]}")
        cards, story, statuses = html_report_of(ctx, db, "long", "watched")
        ctx.check(cards.get("status", "").startswith("running") and "so far" in cards.get("wall time", "")
                  and story.startswith("Still running") and "running" in statuses and "unknown" not in statuses,
                  f"the HTML report says running, so far: {cards} {story!r} {statuses}")

        ctx.stop(col)
        stopped = time.time() - t0
        time.sleep(0.5)
        r, steps = explained(ctx, db)
        ctx.check(r.get("watched") is False, f"explain: no collector watches the run now: {r}")
        until = r.get("so_far_ns", 0) / 1e9
        ctx.check(so_far - 0.05 <= until <= stopped + 0.05,
                  f"explain: {until:.2f} s up to the collector's last word; it ran {so_far:.2f} s "
                  f"when watched and the collector stopped at {stopped:.2f} s")
        for verb in ("runs", "show", "explain"):
            out = subprocess.run([ctx.bin("tracer"), verb, "--db", db] + ([] if verb == "runs" else ["long"]),
                                 capture_output=True, text=True, timeout=60).stdout
            line = next((x for x in out.splitlines() if "long" in x or x.startswith("  unknown")), "")
            if verb == "show":
                line = out.splitlines()[2] if len(out.splitlines()) > 2 else ""
            ctx.check("unknown" in line and "running" not in line,
                      f"{verb}: the run reads unknown, not running: {line!r}\n{out[:500]}")
        cards, story, statuses = html_report_of(ctx, db, "long", "unwatched")
        ctx.check(cards.get("status", "").startswith("unknown") and "until last heard" in cards.get("wall time", "")
                  and story.startswith("Its state is unknown") and "unknown" in statuses
                  and "running" not in statuses,
                  f"the HTML report says unknown, not running: {cards} {story!r} {statuses}")
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.communicate(timeout=30)
    ctx.stop(agg)


@test
def trace_exports_round_trip_through_pandas_and_r(ctx):
    """`tracer show --format tsv|csv` of a run whose argv holds a tab, quotes, a backslash
    and a newline: Debian's pandas (read_csv, sep="\\t" for TSV) and R's read.delim and
    read.csv read back every row, and each argv column parses as the JSON of the argv
    SQLite stores; trace.txt's names are there (%cpu, %mem, syscr, vol_ctxt, attempt,
    native_id) with the database's values (%cpu = 100 x CPU / wall); --fields picks
    columns in its order and refuses an unknown one."""
    tricky = 'a\tb "quoted" back\\slash\nnext line'
    ctx.tracer_run(["bash", "-c", 'gzip -c /etc/services > /dev/null; printf "%s" "$1" > /dev/null', "x", tricky],
                   "--run", "exports", expect=0)
    run = ctx.one("SELECT id FROM runs WHERE name = 'exports'")
    rows = ctx.query("SELECT id, argv, cpu_user_ns + cpu_sys_ns, end_ns - start_ns, syscr, vol_ctxsw "
                     "FROM processes WHERE run_id = ? ORDER BY start_ns, id", run)
    files = {}
    for fmt in ("tsv", "csv"):
        p = subprocess.run([ctx.bin("tracer"), "show", "--db", ctx.db, "--format", fmt, str(run)],
                           capture_output=True, text=True, timeout=60)
        ctx.check(p.returncode == 0, f"--format {fmt}: {p.returncode} {p.stderr}")
        files[fmt] = ctx.path(f"trace.{fmt}")
        with open(files[fmt], "w") as f:
            f.write(p.stdout)
    script = ctx.path("read.py")
    with open(script, "w") as f:
        f.write("import json, sys, pandas\n"
                "out = {}\n"
                "for fmt, path in (('tsv', sys.argv[1]), ('csv', sys.argv[2])):\n"
                "    d = pandas.read_csv(path, sep='\\t' if fmt == 'tsv' else ',', keep_default_na=False)\n"
                "    out[fmt] = {'process_id': [int(x) for x in d['process_id']], 'argv': [json.loads(a) for a in d['argv']],\n"
                "                'cpu': [float(x) if x != '' else None for x in d['%cpu']],\n"
                "                'syscr': [int(x) for x in d['syscr']], 'vol': [int(x) for x in d['vol_ctxt']],\n"
                "                'columns': list(d.columns)}\n"
                "print(json.dumps(out))\n")
    p = subprocess.run(["/usr/bin/python3", script, files["tsv"], files["csv"]], capture_output=True, text=True,
                       timeout=120)
    ctx.check(p.returncode == 0, f"pandas read the exports: {p.stderr[-800:]}")
    got = json.loads(p.stdout or "{}")
    for fmt in ("tsv", "csv"):
        g = got.get(fmt, {})
        ctx.check(g.get("process_id") == [r[0] for r in rows], f"{fmt}: every row, in order: {g.get('process_id')}")
        ctx.check(g.get("argv") == [json.loads(r[1]) for r in rows], f"{fmt}: argv as stored: {g.get('argv')}")
        ctx.check(any(tricky in a for a in (g.get("argv") or []) for a in [a]) or
                  any(tricky in x for a in (g.get("argv") or []) for x in a),
                  f"{fmt}: the tricky argument whole: {g.get('argv')}")
        ctx.check(g.get("syscr") == [r[4] for r in rows] and g.get("vol") == [r[5] for r in rows],
                  f"{fmt}: syscr and vol_ctxt as stored")
        for (_, _, cpu, wall, _, _), pct in zip(rows, g.get("cpu") or []):
            if wall:
                ctx.close(pct, round(100.0 * cpu / wall, 1), 0.051, f"{fmt}: %cpu")
        ctx.check({"%cpu", "%mem", "attempt", "native_id", "hash", "submit"} <= set(g.get("columns", [])),
                  f"{fmt}: trace.txt's names: {g.get('columns')}")
    r = subprocess.run(["Rscript", "-e", f"d <- read.delim('{files['tsv']}', check.names=FALSE); "
                        f"c <- read.csv('{files['csv']}', check.names=FALSE); "
                        "cat(nrow(d), nrow(c), sum(grepl('back\\\\\\\\slash', d$argv, fixed=FALSE)), "
                        "sum(d$process_id == c$process_id), '\\n')"], capture_output=True, text=True, timeout=120)
    ctx.check(r.returncode == 0, f"R read the exports: {r.stderr[-600:]}")
    nums = r.stdout.split()
    ctx.check(nums[:2] == [str(len(rows))] * 2 and nums[3] == str(len(rows)),
              f"R: {len(rows)} rows in both, the same processes: {r.stdout!r}")
    picked = subprocess.run([ctx.bin("tracer"), "show", "--db", ctx.db, "--format", "tsv", "--fields",
                             "pid,%cpu,step_name", str(run)], capture_output=True, text=True, timeout=60)
    ctx.check(picked.stdout.splitlines()[0] == "pid\t%cpu\tstep_name", f"--fields: {picked.stdout[:200]!r}")
    bad = subprocess.run([ctx.bin("tracer"), "show", "--db", ctx.db, "--format", "tsv", "--fields", "pid,nope",
                          str(run)], capture_output=True, text=True, timeout=60)
    ctx.check(bad.returncode == 2 and "nope" in bad.stderr, f"an unknown field is refused: {bad.stderr}")
