"""tracer report --html: rendered in headless Chromium, the page shows what the
database holds, needs no network, and treats recorded text as text."""
import json
import os
import shutil
import subprocess
from html.parser import HTMLParser

from harness import Failure, plain_build_only, test, write_script


class Dom(HTMLParser):
    """Elements of the rendered page: (tag, attrs, text inside)."""

    def __init__(self):
        super().__init__()
        self.elements, self.stack = [], []

    def handle_starttag(self, tag, attrs):
        e = {"tag": tag, "attrs": dict(attrs), "text": ""}
        self.elements.append(e)
        if tag not in ("meta", "link", "br", "img", "input", "path", "line", "rect"):
            self.stack.append(e)

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()["tag"] == tag:
                break

    def handle_data(self, data):
        for e in self.stack:
            e["text"] += data

    def by_class(self, cls):
        return [e for e in self.elements if cls in e["attrs"].get("class", "").split()]


def render(ctx, html):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        raise Failure("chromium is not installed (deploy/install-deps.sh tests)")
    p = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                        "file://" + html], capture_output=True, text=True, timeout=120)
    if p.returncode != 0 or "<html" not in p.stdout:
        raise Failure(f"chromium failed: {p.returncode} {p.stderr[-800:]}")
    dom = Dom()
    dom.feed(p.stdout)
    body = [e for e in dom.elements if e["tag"] == "body"]
    attrs = body[0]["attrs"] if body else {}
    if "data-script-error" in attrs or attrs.get("data-ready") != "1":
        raise Failure(f"the page's script did not finish: {attrs.get('data-script-error')!r} {p.stderr[-500:]}")
    return dom


def write_report(ctx, run):
    """tracer report --html of the run named run, into the test's directory; its path."""
    html = ctx.path(run + ".html")
    p = subprocess.run([ctx.bin("tracer"), "report", "--db", ctx.db, "--html", html, run],
                       capture_output=True, text=True, timeout=60)
    ctx.check(p.returncode == 0, f"tracer report: {p.returncode} {p.stderr}")
    return html


@test
def html_report_renders_the_run(ctx):
    script = ctx.path("report-demo.sh")
    with open(script, "w") as f:
        f.write("#!/bin/bash\n"
                f"{ctx.helper('cpuburn')} 2500 &\n"
                f"{ctx.helper('cpuburn')} 1500 '</script><img src=x onerror=alert(1)>'\n"
                "gzip -c /no/such/file\n"
                "wait\n")
    os.chmod(script, 0o755)
    ctx.tracer_run([script], "--run", "report-demo", expect=0)
    html = write_report(ctx, "report-demo")
    raw = open(html).read()
    ctx.check("<img" not in raw.split('id="tracer-data">')[1].split("</script>")[0],
              "recorded text cannot open elements inside the data")
    dom = render(ctx, html)
    run_id = ctx.one("SELECT id FROM runs WHERE name = 'report-demo'")
    steps = ctx.query("SELECT id FROM steps WHERE run_id = ? ORDER BY id", run_id)
    title = [e for e in dom.elements if e["attrs"].get("id") == "title"]
    ctx.check(title and "report-demo" in title[0]["text"], f"title: {title and title[0]['text']}")
    # The header: the command as it ran, and the CPU-hours the run's rows add up to.
    command = [e["text"] for e in dom.elements if e["attrs"].get("id") == "command"]
    argv = json.loads(ctx.one("SELECT p.argv FROM runs r JOIN processes p ON p.id = r.command_process_id "
                              "WHERE r.name = 'report-demo'"))
    ctx.check(argv[-1] == script and command == ["$ " + " ".join(argv)],
              f"the command line in the header, as it ran ({argv}): {command}")
    cpu = ctx.one("SELECT sum(cpu_user_ns + cpu_sys_ns) FROM processes WHERE run_id = "
                  "(SELECT id FROM runs WHERE name = 'report-demo')")
    subtitle = [e["text"] for e in dom.elements if e["attrs"].get("id") == "subtitle"]
    ctx.check(subtitle and f"{cpu / 3.6e12:.4f} CPU-hours" in subtitle[0], f"CPU-hours ({cpu} ns): {subtitle}")
    bars = dom.by_class("step-bar")
    ctx.check(sorted(int(b["attrs"]["data-step"]) for b in bars) == [s[0] for s in steps],
              f"a timeline bar per step: {len(bars)} vs {len(steps)}")
    cards = {e["attrs"]["data-key"]: e["text"] for e in dom.by_class("card")}
    processes = ctx.one("SELECT processes FROM runs WHERE id = ?", run_id)
    ctx.check(cards.get("processes", "").startswith(str(processes)), f"process count card: {cards}")
    signals = ctx.query("SELECT message FROM signals WHERE run_id = ?", run_id)
    rows = dom.by_class("signals-row")
    ctx.check(len(rows) == len(signals) and signals, f"a row per signal: {len(rows)} vs {len(signals)}")
    ctx.check(all(any(m[0] in r["text"] for r in rows) for m in signals), "signal messages shown")
    # Steps sampled in at least two passes get a CPU and memory chart.
    sampled = ctx.query("SELECT p.step_id FROM samples m JOIN processes p ON p.id = m.process_id "
                        "WHERE p.run_id = ? AND p.step_id IS NOT NULL GROUP BY p.step_id "
                        "HAVING count(DISTINCT m.ts_ns) >= 3", run_id)
    charts = {int(c["attrs"]["data-step"]) for c in dom.by_class("usage-chart")}
    ctx.check({s[0] for s in sampled} <= charts and charts, f"charts for sampled steps: {charts} vs {sampled}")
    ctx.check(len(dom.by_class("cpu-line")) == len(charts), "a CPU line per chart")
    rec_rows = dom.by_class("recommendations-row")
    ctx.check(len(rec_rows) >= 2, f"right-sizing rows: {len(rec_rows)}")
    # Self-contained and safe: nothing loaded from elsewhere, the hostile argv is text.
    external = [e for e in dom.elements for k in ("src", "href") if k in e["attrs"]
                and not e["attrs"][k].startswith("#")]
    ctx.check(not external, f"no external resources: {external}")
    ctx.check(not [e for e in dom.elements if e["tag"] == "img"], "the argv's <img> did not become an element")
    data = json.loads(raw.split('id="tracer-data">')[1].split("</script>")[0])
    ctx.check(len(data["steps"]) == len(steps), "embedded data matches the database")
    ctx.check(len(data["procs"]) == processes, f"a compact row per process image: {len(data['procs'])} vs {processes}")
    cost_section_prices_the_run(ctx, run_id)


def cost_section_prices_the_run(ctx, run_id):
    """The cost section at a given rate: the host's price over the run's span (rate x span,
    computed here from the run's times), split by step name with each name's CPU time as
    its processes' own sum, parts and idle adding up to the total, a row per part; with no
    price known, shares only and it says how to set one."""
    rate = 3.6  # USD an hour: a dollar per 1000 s
    html = ctx.path("report-cost.html")
    p = subprocess.run([ctx.bin("tracer"), "report", "--db", ctx.db, "--html", html, "--rate", str(rate),
                        str(run_id)], capture_output=True, text=True, timeout=60)
    ctx.check(p.returncode == 0, f"tracer report --rate: {p.returncode} {p.stderr}")
    dom = render(ctx, html)
    raw = open(html).read()
    cost = json.loads(raw.split('id="tracer-data">')[1].split("</script>")[0])["cost"]
    start, end = ctx.one("SELECT start_ns, end_ns FROM runs WHERE id = ?", run_id)
    want_total = rate * (end - start) / 1e9 / 3600
    ctx.close(cost["total_usd"], want_total, 1e-9, "the run's cost is rate x span (USD)")
    parts = sum(b["usd"] for b in cost["breakdown"]) + cost["idle_usd"]
    ctx.close(parts, cost["total_usd"], 1e-9, "parts and idle add up to the total (USD)")
    by_name = dict(ctx.query("SELECT coalesce(s.name, '(outside steps)'), sum(p.cpu_user_ns + p.cpu_sys_ns) "
                             "FROM processes p LEFT JOIN steps s ON s.id = p.step_id WHERE p.run_id = ? "
                             "GROUP BY 1", run_id))
    got = {b["key"]: b["cpu_ns"] for b in cost["breakdown"]}
    ctx.check(set(got) == set(by_name), f"a part per step name: {sorted(got)} vs {sorted(by_name)}")
    for name, cpu in by_name.items():
        ctx.close(got.get(name, 0) / 1e6, cpu / 1e6, 1, f"step {name}: CPU ms in the cost vs its processes'")
    rows = [r["text"] for r in dom.by_class("cost-row")]
    ctx.check(len(rows) == len(by_name) and all(any(r.startswith(n) for r in rows) for n in by_name),
              f"a row per step name: {rows}")
    summary = [e["text"] for e in dom.elements if e["attrs"].get("id") == "cost-summary"]
    ctx.check(summary and "$3.60 an hour" in summary[0], f"the price is said: {summary}")
    empty = ctx.path("empty-cost.conf")
    open(empty, "w").close()
    html = ctx.path("report-unpriced.html")
    p = subprocess.run([ctx.bin("tracer"), "report", "--db", ctx.db, "--html", html, "--cost-conf", empty,
                        "--no-detect", str(run_id)], capture_output=True, text=True, timeout=60)
    ctx.check(p.returncode == 0, f"tracer report unpriced: {p.returncode} {p.stderr}")
    dom = render(ctx, html)
    summary = [e["text"] for e in dom.elements if e["attrs"].get("id") == "cost-summary"]
    ctx.check(summary and "No price known" in summary[0] and "--rate" in summary[0], f"unpriced: {summary}")
    ctx.check(not any("$" in r["text"] for r in dom.by_class("cost-row")), "no dollars without a price")


def report_of(ctx, name):
    html = ctx.path(f"{name}.html")
    p = subprocess.run([ctx.bin("tracer"), "report", "--db", ctx.db, "--html", html, name],
                       capture_output=True, text=True, timeout=120)
    ctx.check(p.returncode == 0, f"tracer report: {p.returncode} {p.stderr}")
    return html


@test
@plain_build_only("CI time: the report's data is built by the same code as the other report tests")
def usage_chart_says_how_much_of_the_cpu_its_line_holds(ctx):
    """A step of 40 short processes (30 ms of CPU each, a loop in a subshell) is sampled
    every second, and most of its processes live between two samples: its chart says what
    share of the step's CPU its line holds, and that share is the one the samples give
    (sum of their CPU deltas over the step's CPU as its process rows sum it, within 2
    points). Every chart whose line holds under 90% says so, and no other does."""
    burn = ctx.helper("cpuburn")
    script = ctx.path("short-and-long.sh")
    with open(script, "w") as f:
        f.write(f"#!/bin/bash\n( for i in $(seq 40); do {burn} 30; sleep 0.03; done )\n{burn} 2500\n")
    os.chmod(script, 0o755)
    ctx.tracer_run([script], "--run", "coverage", expect=0)
    run_id = ctx.one("SELECT id FROM runs WHERE name = 'coverage'")
    dom = render(ctx, write_report(ctx, "coverage"))
    notes = {}
    for chart in dom.by_class("usage-chart"):
        notes[int(chart["attrs"]["data-step"])] = None
    for e in dom.by_class("usage-coverage"):
        notes.setdefault("texts", []).append(e["text"])
    by_step = {}
    for step, cpu in ctx.query("SELECT step_id, sum(cpu_user_ns + cpu_sys_ns) FROM processes "
                               "WHERE run_id = ? AND step_id IS NOT NULL GROUP BY step_id", run_id):
        drawn = ctx.one("WITH d AS (SELECT (m.cpu_user_ns + m.cpu_sys_ns) - lag(m.cpu_user_ns + m.cpu_sys_ns) "
                        "OVER (PARTITION BY m.process_id ORDER BY m.ts_ns) AS dcpu FROM samples m JOIN processes p "
                        "ON p.id = m.process_id WHERE p.step_id = ?) SELECT coalesce(sum(dcpu), 0) FROM d", step)
        by_step[step] = (cpu, drawn)
    texts = notes.get("texts", [])
    charted = {s for s in notes if s != "texts"}
    # A chart whose line holds under 90% of its step's CPU says so, with that share.
    short = sorted(100 * drawn / cpu for s, (cpu, drawn) in by_step.items() if s in charted and cpu
                   and drawn < 0.9 * cpu)
    said = sorted(int(t.split("the line holds ")[1].split("%")[0]) for t in texts)
    ctx.check(len(short) == len(said) and short, f"a note per chart whose line misses CPU: {by_step} / {texts}")
    for want, got in zip(short, said):
        ctx.close(got, want, 2, "the share the note gives vs the samples' (%)")
    loop = [s for s, (cpu, drawn) in by_step.items() if cpu and drawn < 0.5 * cpu]
    ctx.check(loop, f"the loop of short processes is mostly between the samples: {by_step}")


@test
def html_report_of_a_failing_run_says_what_failed(ctx):
    """A script that fails on a missing input (cat exits 1 after a sort that worked and a
    gzip | head whose SIGPIPE is no failure): the page says failed, names cat with its
    exit status as the shell saw it, and lists the critical signal."""
    script = ctx.path("failing.sh")
    with open(script, "w") as f:
        f.write("#!/bin/bash\nset -e\nsort /etc/services > /dev/null\n"
                "gzip -c /etc/services | head -c 100 > /dev/null\ncat /no/such/sample.fq\n")
    os.chmod(script, 0o755)
    shell = subprocess.run(["bash", "-c", "cat /no/such/sample.fq"], capture_output=True)
    ctx.tracer_run([script], "--run", "failing", expect=shell.returncode)
    dom = render(ctx, report_of(ctx, "failing"))
    cards = {e["attrs"]["data-key"]: e["text"] for e in dom.by_class("card")}
    ctx.check(cards.get("status", "").startswith("failed"), f"status card: {cards.get('status')}")
    failures = [e["text"] for e in dom.by_class("failure")]
    ctx.check(len(failures) == 1 and "cat /no/such/sample.fq" in failures[0] and str(shell.returncode) in failures[0],
              f"what failed names cat and its exit {shell.returncode}: {failures}")
    ctx.check(not any("gzip" in f or "head" in f for f in failures), f"SIGPIPE is not a failure: {failures}")
    critical = ctx.query("SELECT message FROM signals WHERE run_id = (SELECT id FROM runs WHERE name = 'failing') "
                         "AND severity = 'critical'")
    rows = [r["text"] for r in dom.by_class("signals-row")]
    ctx.check(critical and all(any(c[0] in r for r in rows) for c in critical), f"critical signals shown: {critical}")
    # Every step took milliseconds (the database says so): right-sizing gives no advice.
    longest = ctx.one("SELECT max(end_ns - start_ns) FROM steps WHERE run_id = (SELECT id FROM runs "
                      "WHERE name = 'failing')")
    recs = [r["text"] for r in dom.by_class("recommendations-row")]
    ctx.check(longest < 10e9 and recs and all("too short" in r and "over-provisioned" not in r for r in recs),
              f"no advice for steps of at most {longest} ns: {recs}")


@test
def html_report_of_a_run_that_handled_a_failure_says_handled(ctx):
    """A script whose `ls /missing || true` fails and which then goes on and succeeds: the
    run is ok, so the page has no "What failed" (nothing failed the run); it lists the ls
    among the failures handled, with its exit as the shell saw it, and the failed-processes
    card says handled."""
    script = ctx.path("handles.sh")
    with open(script, "w") as f:
        f.write("#!/bin/bash\nls /missing-input-dir > /dev/null 2>&1 || true\nsort /etc/services > /dev/null\n")
    os.chmod(script, 0o755)
    ls = subprocess.run(["ls", "/missing-input-dir"], capture_output=True)
    ctx.tracer_run([script], "--run", "handles", expect=0)
    dom = render(ctx, report_of(ctx, "handles"))
    cards = {e["attrs"]["data-key"]: e["text"] for e in dom.by_class("card")}
    ctx.check(cards.get("status", "").startswith("ok"), f"status card: {cards.get('status')}")
    ctx.check(not dom.by_class("failure") and not any(e["text"].startswith("What failed") for e in dom.elements),
              f"nothing failed the run: {[e['text'] for e in dom.by_class('failure')]}")
    handled = [e["text"] for e in dom.by_class("handled-failure")]
    ctx.check(len(handled) == 1 and "ls /missing-input-dir" in handled[0] and str(ls.returncode) in handled[0],
              f"the ls is a handled failure with its exit {ls.returncode}: {handled}")
    ctx.check(cards.get("failed processes", "").startswith("1") and "handled" in cards.get("failed processes", ""),
              f"failed processes card: {cards.get('failed processes')}")


@test
def html_report_of_a_failed_run_keeps_what_it_went_past_apart(ctx):
    """A `set -e` script whose `ls /missing || true` fails, which then goes on (a gzip loop
    of 300) and fails on a sort of a missing input: the page's "What failed" and `tracer
    run`'s summary name the sort alone, with its
    exit as the shell saw it; the ls, which the script went on past, is a handled failure.
    Ground truth: the exits of the same commands run by bash here."""
    script = ctx.path("went-past.sh")
    with open(script, "w") as f:
        f.write("#!/bin/bash\nset -e\nls /missing-dir-58 > /dev/null 2>&1 || true\n"
                "for i in $(seq 300); do gzip -c /etc/hostname > /dev/null; done\n"
                "sort /missing-dir-58/input.txt > /dev/null\n")
    os.chmod(script, 0o755)
    ls = subprocess.run(["ls", "/missing-dir-58"], capture_output=True)
    sort = subprocess.run(["sort", "/missing-dir-58/input.txt"], capture_output=True)
    said = ctx.tracer_run([script], "--run", "went-past", expect=sort.returncode)
    # 300 processes: `tracer run` prints its summary, which keeps them apart too.
    text = said.stdout + said.stderr
    failed_part = text.split("\nFailed (", 1)[1].split("\n\n", 1)[0] if "\nFailed (" in text else ""
    handled_part = text.split("\nFailed and handled (", 1)[1].split("\n\n", 1)[0] if "Failed and handled (" in text else ""
    ctx.check("sort /missing-dir-58" in failed_part and "ls /missing-dir-58" not in failed_part
              and "ls /missing-dir-58" in handled_part and "the script went on past it" in handled_part,
              f"tracer run's summary: failed {failed_part!r}, handled {handled_part!r}")
    dom = render(ctx, report_of(ctx, "went-past"))
    failures = [e["text"] for e in dom.by_class("failure")]
    handled = [e["text"] for e in dom.by_class("handled-failure")]
    ctx.check(len(failures) == 1 and "sort /missing-dir-58/input.txt" in failures[0]
              and str(sort.returncode) in failures[0], f"what failed is the sort (exit {sort.returncode}): {failures}")
    ctx.check(len(handled) == 1 and "ls /missing-dir-58" in handled[0] and str(ls.returncode) in handled[0],
              f"the ls the script went past is handled (exit {ls.returncode}): {handled}")


@test
def html_report_headline_judges_the_run_as_its_steps_are_judged(ctx):
    """Six CPU-bound loops at once on a host of fewer CPUs wait for a CPU more than they run:
    the run's headline says so (contended, as its steps say), not "compute-bound" with a
    small share on a CPU. Ground truth: the run's own time parts, under docs/insight.md's
    rule (30% of the time runnable but waiting is contention), and os.cpu_count()."""
    workers = 3 * (os.cpu_count() or 1)
    script = ctx.path("contended.sh")
    with open(script, "w") as f:
        f.write(f"#!/bin/bash\nfor k in $(seq {workers}); do (for i in 1 2 3; do "
                "head -c 4000000 /dev/urandom | gzip -6 > /dev/null; done) & done\nwait\n")
    os.chmod(script, 0o755)
    ctx.tracer_run([script], "--run", "contended", expect=0)
    cpu, runq, total = ctx.query("SELECT cpu_ns, runq_ns, cpu_ns + iowait_ns + runq_ns + reclaim_ns + sleep_ns + "
                                 "net_wait_ns FROM runs WHERE name = 'contended'")[0]
    dom = render(ctx, report_of(ctx, "contended"))
    headline = " ".join(e["text"] for e in dom.elements if e["attrs"].get("id") == "run-explanation")
    if runq >= 0.3 * total:
        ctx.check("competed for CPUs" in headline and "compute-bound" not in headline,
                  f"runq {runq / total:.0%} of the time: the headline says contended: {headline!r}")
    else:
        ctx.check(cpu < 0.4 * total or "compute-bound" in headline, f"headline {headline!r} for cpu {cpu / total:.0%}")
    ctx.check(runq >= 0.3 * total, f"{workers} loops on {os.cpu_count()} CPUs waited for a CPU "
              f"{runq / total:.0%} of the time (the workload must contend for the test to mean anything)")


@test
@plain_build_only("CI time: the page's data comes from the code html_report_renders_the_run runs "
                  "under ASan; the rest is Chromium drawing 2,000 steps")
def html_report_of_2000_steps_stays_small_and_summarised(ctx):
    """2,000 steps (a script's direct children) of 10,000 processes: the page is at
    most 600 bytes a step (issue 58; steps are rows of one column list) and loads in Chromium without script errors; the timeline draws one group per
    step name, closed (more than 20 members), so no step bar of them is drawn; the task
    table shows its first 50 of the 2,000 steps; a box plot row per tool; every process
    is in the page's data. Load time is measured by make bench-report, not here."""
    script = ctx.path("big.sh")
    with open(script, "w") as f:
        f.write("#!/bin/bash\ntools=(/bin/true \"/bin/echo x\" \"/bin/cat /dev/null\" \"/usr/bin/expr 1 + 1\" \"/usr/bin/printf y\")\n"
                "for i in $(seq 0 1999); do t=${tools[$((i % 5))]}; sh -c \"$t; $t; $t; /bin/true\" > /dev/null; done\n")
    os.chmod(script, 0o755)
    ctx.tracer_run([script], "--run", "big", expect=0)
    run = ctx.one("SELECT id FROM runs WHERE name = 'big'")
    n_steps, n_procs = ctx.one("SELECT count(*) FROM steps WHERE run_id = ?", run), \
        ctx.one("SELECT count(*) FROM processes WHERE run_id = ?", run)
    ctx.check(n_steps >= 2000 and n_procs >= 10000, f"the workload: {n_steps} steps, {n_procs} processes")
    html = report_of(ctx, "big")
    size = os.path.getsize(html)
    ctx.check(size <= 600 * n_steps, f"page size {size} bytes, {size / n_steps:.0f} a step (at most 600)")
    dom = render(ctx, html)
    groups = ctx.query("SELECT coalesce(name, key), count(*) FROM steps WHERE run_id = ? GROUP BY 1", run)
    ctx.check(len(dom.by_class("group-bar")) == len(groups), f"a group per step name: {len(dom.by_class('group-bar'))} "
                                                            f"vs {len(groups)}")
    drawn = sum(n for _, n in groups if n <= 20)
    ctx.check(len(dom.by_class("step-bar")) == drawn, f"step bars only in open groups: {len(dom.by_class('step-bar'))}")
    rows = dom.by_class("tasks-row")
    count = [e["text"] for e in dom.elements if e["attrs"].get("id") == "tasks-count"]
    ctx.check(len(rows) == 50 and count and count[0].endswith(f"of {n_steps}"), f"first page of tasks: {len(rows)}, {count}")
    tools = ctx.one("SELECT count(DISTINCT coalesce(t.name, p.comm)) FROM processes p LEFT JOIN tools t ON "
                    "t.id = p.tool_id WHERE p.run_id = ? AND p.helper = 0", run)
    ctx.check(len(dom.by_class("box-row")) == min(30, tools), f"a box plot row per tool: {len(dom.by_class('box-row'))} "
                                                             f"vs {tools}")
    raw = open(html).read()
    data = json.loads(raw.split('id="tracer-data">')[1].split("</script>")[0])
    ctx.check(len(data["procs"]) == n_procs, f"every process in the data: {len(data['procs'])} vs {n_procs}")


# Test code, not the page's: after the page has drawn itself, it uses the page as a reader
# would (types, picks, clicks) and writes what each action left on screen to the body.
READER_SCRIPT = """<script>
(function () {
  const out = {};
  const rows = () => document.querySelectorAll("tr.tasks-row");
  const count = () => document.getElementById("tasks-count").textContent;
  const firstCells = () => Array.from(rows()).map(r => r.cells[1].textContent);
  const click = node => node.dispatchEvent(new MouseEvent("click", {bubbles: true}));
  const button = (parent, text) => Array.from(document.getElementById(parent).querySelectorAll("button"))
    .find(b => b.textContent === text);
  try {
    out.first = {rows: rows().length, count: count()};
    click(button("tasks-pager", "next"));
    out.next = {rows: rows().length, count: count()};
    const search = document.getElementById("tasks-search");
    search.value = "MD5"; search.dispatchEvent(new Event("input"));
    out.search = {rows: rows().length, count: count(), names: Array.from(rows()).map(r => r.cells[0].textContent)};
    search.value = ""; search.dispatchEvent(new Event("input"));
    const status = document.getElementById("tasks-status");
    status.value = "failed"; status.dispatchEvent(new Event("change"));
    out.failed = {rows: rows().length, keys: firstCells()};
    status.value = "all"; status.dispatchEvent(new Event("change"));
    const cpu = Array.from(document.querySelectorAll("#tasks-table th")).find(th => th.textContent === "CPU");
    click(cpu);
    out.cpu_desc = firstCells().slice(0, 3);
    click(cpu);
    out.cpu_asc_first = firstCells()[0];
    const bars = () => document.querySelectorAll("#timeline-svg .step-bar").length;
    const width = () => Number(document.querySelector('#timeline-svg g.tl-group[data-group="gzip"] .group-bar')
                                 .getAttribute("width"));
    out.bars_before = bars();
    const group = document.querySelector('#timeline-svg g.tl-group[data-group="gzip"]');
    click(group);
    out.bars_gzip_open = bars();
    click(button("timeline-controls", "close all"));
    out.bars_closed = bars();
    const w = width();
    click(button("timeline-controls", "zoom in"));
    out.zoom = width() / w;
  } catch (e) {
    out.error = String(e && e.stack || e);
  }
  document.body.setAttribute("data-reader", JSON.stringify(out));
})();
</script>
"""


@test
@plain_build_only("CI time: what it checks is the page's script in Chromium, not our C code")
def a_reader_can_page_search_filter_sort_and_open_groups(ctx):
    """The report used as a reader uses it, in Chromium: a script of 61 steps (30 gzip,
    24 md5sum, 6 grep that find nothing and are handled with `|| true`, one CPU-heavy
    python3). The task table pages by 50, a search finds the md5sum steps whatever the
    case, the status filter keeps the failed grep steps, a click on CPU sorts the heaviest
    step first (and a second click the lightest), the gzip group (30 > 20 steps) opens on
    a click to show its 30 bars, "close all" hides every bar and "zoom in" doubles the
    length of a bar. What to expect comes from the database and the script itself."""
    script = ctx.path("reader.sh")
    # Inputs large enough that each gzip and md5sum is a step, not a helper of a few ms.
    small, large = ctx.path("in.txt"), ctx.path("in.bin")
    with open(small, "w") as f:
        f.write("\n".join(os.urandom(24).hex() for _ in range(60000)))
    with open(large, "wb") as f:
        f.write(os.urandom(96 << 20))
    with open(script, "w") as f:
        f.write(f"#!/bin/bash\nfor i in $(seq 30); do gzip -c {small} > /dev/null; done\n"
                f"for i in $(seq 24); do md5sum {large} > /dev/null; done\n"
                "for i in $(seq 6); do grep -q no-such-word-here /etc/hostname || true; done\n"
                "python3 -c 'import time; t = time.process_time()\nwhile time.process_time() - t < 0.3: pass'\n")
    os.chmod(script, 0o755)
    ctx.tracer_run([script], "--run", "reader", expect=0)
    run = ctx.one("SELECT id FROM runs WHERE name = 'reader'")
    steps = ctx.query("SELECT key, name, status, cpu_ns FROM steps WHERE run_id = ?", run)
    names = [s[1] for s in steps]
    ctx.check(names.count("gzip") == 30 and names.count("md5sum") == 24 and names.count("grep") == 6,
              f"the script's steps: {sorted(set(names))}")
    html = report_of(ctx, "reader")
    page = open(html).read()
    with open(html, "w") as f:
        f.write(page.replace("</body>", READER_SCRIPT + "</body>"))
    dom = render(ctx, html)
    body = [e for e in dom.elements if e["tag"] == "body"][0]
    got = json.loads(body["attrs"].get("data-reader", "{}"))
    ctx.check("error" not in got and got, f"the reader's actions ran: {got.get('error')}")
    if "error" in got or not got:
        return
    n = len(steps)
    ctx.check(got["first"]["rows"] == 50 and got["first"]["count"] == f"rows 1\u2013050 of {n}".replace("050", "50"),
              f"first page: {got['first']}")
    ctx.check(got["next"]["rows"] == n - 50 and got["next"]["count"].endswith(f"{n} of {n}"), f"next page: {got['next']}")
    ctx.check(got["search"]["rows"] == 24 and set(got["search"]["names"]) == {"md5sum"}, f"search 'MD5': {got['search']}")
    failed = sorted(s[0] for s in steps if s[2] == "failed")
    ctx.check(len(failed) == 6 and sorted(got["failed"]["keys"]) == failed, f"failed filter: {got['failed']} vs {failed}")
    by_cpu = sorted(steps, key=lambda s: -(s[3] or 0))
    ctx.check(got["cpu_desc"][0] == by_cpu[0][0] and by_cpu[0][1].startswith("python3"),
              f"CPU sort, heaviest first: {got['cpu_desc']} vs {by_cpu[0]}")
    ctx.check(got["cpu_asc_first"] == by_cpu[-1][0] or
              (by_cpu[-1][3] == [s[3] for s in steps if s[0] == got["cpu_asc_first"]][0]),
              f"second click, lightest first: {got['cpu_asc_first']} vs {by_cpu[-1]}")
    open_at_start = sum(c for c in (names.count(x) for x in set(names)) if c <= 20)
    ctx.check(got["bars_before"] == open_at_start, f"bars of the groups open at start: {got['bars_before']} vs "
                                                   f"{open_at_start}")
    ctx.check(got["bars_gzip_open"] == open_at_start + 30, f"gzip opened: {got['bars_gzip_open']}")
    ctx.check(got["bars_closed"] == 0, f"close all: {got['bars_closed']}")
    ctx.close(got["zoom"], 2.0, 0.01, "zoom in doubles the gzip group's bar (ratio)")


@test
def schema_examples_run_and_answer(ctx):
    """Every SQL example in docs/schema.md runs on a recorded database, read-only as the
    docs say to open it, and the examples about processes, steps, tools and samples
    return rows for a pipeline run named as the README's demo is (the ground truth
    is simply that the workload ran: two steps, files read, a second of CPU)."""
    import re
    import sqlite3
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    data = ctx.path("in.txt")
    with open(data, "w") as f:
        f.write("ACGT\n" * 200000)
    script = ctx.path("pipeline.sh")
    with open(script, "w") as f:
        f.write(f"gzip -c {data} > {data}.gz\n"
                f"python3 -c 'import time; t = time.time()\nwhile time.time() - t < 1.2: pass'\n"
                f"sort {data} | uniq -c > {data}.counts\n")
    ctx.tracer_run(["bash", script], "--pipeline", "demo-variant-calling", expect=0)
    text = open(os.path.join(repo, "docs", "schema.md")).read()
    blocks = re.findall(r"```sql\n(.*?)```", text, re.S)
    db = sqlite3.connect(f"file:{ctx.db}?mode=ro", uri=True)
    answered = {}
    for block in blocks:
        for stmt in (s.strip() for s in block.split(";")):
            if not stmt or stmt.startswith("--"):
                continue
            try:
                answered[stmt] = len(db.execute(stmt).fetchall())
            except sqlite3.Error as e:
                ctx.check(False, f"docs/schema.md example fails: {e}\n{stmt}")
    ctx.check(len(answered) >= 10, f"found the examples: {len(answered)}")
    for stmt, rows in answered.items():
        about = re.search(r"FROM (processes|steps s|tool_usage|samples)\b", stmt)
        if about and "exit_code != 0" not in stmt:
            ctx.check(rows > 0, f"no rows from a docs example:\n{stmt}")


def exported(ctx, *args):
    p = subprocess.run([ctx.bin("tracer"), *args, "--db", ctx.db], capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 0:
        raise Failure(f"tracer {' '.join(args)}: {p.returncode} {p.stderr}")
    return p.stdout


def tsv_rows(text):
    """Parsed by the rules docs/export.md states, not by our code: tab-separated, a field
    with a tab, quote or line end quoted as in CSV."""
    import csv
    import io
    rows = list(csv.reader(io.StringIO(text), delimiter="\t", quotechar='"'))
    return [dict(zip(rows[0], r)) for r in rows[1:] if r]


@test
def exports_parse_and_match_what_the_processes_did(ctx):
    """show/runs/signals/cost --format tsv|csv|json: Python's csv module and the TSV rules
    of docs/export.md read them back; an argv holding a tab, a comma, quotes and a newline
    comes back exactly; each process's CPU matches what wait4() gave its parent; the
    per-process rows sum to the run's totals; cost's usd column adds up to the bill."""
    import csv
    import io
    hostile = 'a,b "c"\td\ne\\f'
    script = ctx.path("export.sh")
    with open(script, "w") as f:
        f.write("#!/bin/bash\n"
                f"{ctx.helper('measure')} {ctx.path('burn.json')} -- {ctx.helper('cpuburn')} 300\n"
                "/bin/echo $'a,b \"c\"\\td\\ne\\\\f' > /dev/null\n"
                "sh -c 'exit 3' || true\n")
    os.chmod(script, 0o755)
    ctx.tracer_run([script], expect=0)
    run = ctx.latest_run()
    tsv = tsv_rows(exported(ctx, "show", "--format", "tsv", str(run)))
    csv_rows = list(csv.DictReader(io.StringIO(exported(ctx, "show", "--format", "csv", str(run)), newline="")))
    js = json.loads(exported(ctx, "show", "--format", "json", str(run)))
    n = ctx.one("SELECT count(*) FROM processes WHERE run_id = ?", run)
    ctx.check(len(tsv) == len(csv_rows) == len(js) == n, f"one row per image: tsv {len(tsv)} csv {len(csv_rows)} "
                                                         f"json {len(js)} db {n}")
    ctx.check(list(tsv[0].keys()) == list(csv_rows[0].keys()) == list(js[0].keys()),
              "the same columns in every format")
    echo = [r for r in js if r["exe"].endswith("/echo")]
    ctx.check(echo and echo[0]["argv"] == ["/bin/echo", hostile], f"argv round-trips in JSON: {echo[:1]}")
    for rows, name in ((tsv, "tsv"), (csv_rows, "csv")):
        e = [r for r in rows if r["exe"].endswith("/echo")]
        ctx.check(e and json.loads(e[0]["argv"]) == ["/bin/echo", hostile], f"argv round-trips in {name}: {e[:1]}")
    truth = json.load(open(ctx.path("burn.json")))
    burn = [r for r in js if r["exe"].endswith("/cpuburn")]
    if burn:
        ctx.close(burn[0]["cpu_ns"] / 1e6, (truth["utime_ns"] + truth["stime_ns"]) / 1e6, 5,
                  "cpuburn's cpu_ns (ms) vs wait4")
        ctx.check(burn[0]["status"] == "ok" and burn[0]["start"].endswith("Z"), f"status and time: {burn[0]}")
    else:
        ctx.check(False, "cpuburn exported")
    failed = [r for r in js if r["status"] == "failed"]
    ctx.check(any(r["exit_code"] == 3 for r in failed), f"the sh that exited 3 is failed: {failed}")
    cpu_total = ctx.one("SELECT cpu_ns FROM runs WHERE id = ?", run)
    ctx.close(sum(int(r["cpu_ns"]) for r in tsv), cpu_total, 0, "the rows' CPU sums to the run's")
    runs = list(csv.DictReader(io.StringIO(exported(ctx, "runs", "--format", "csv"), newline="")))
    mine = [r for r in runs if int(r["id"]) == run]
    ctx.check(mine and int(mine[0]["processes"]) >= 4 and int(mine[0]["cpu_ns"]) == cpu_total,
              f"runs row: {mine[:1]}")
    sigs = tsv_rows(exported(ctx, "signals", "--format", "tsv", str(run)))
    ctx.check(len(sigs) == ctx.one("SELECT count(*) FROM signals WHERE run_id = ?", run),
              f"one row per signal: {len(sigs)}")
    cost = list(csv.DictReader(io.StringIO(exported(ctx, "cost", "--format", "csv", "--rate", "1", str(run)),
                                           newline="")))
    doc = json.loads(exported(ctx, "cost", "--json", "--rate", "1", str(run)))
    ctx.check(cost and cost[-1]["key"] == "(idle capacity)", f"the idle row comes last: {cost[-1:]}")
    ctx.close(sum(float(r["usd"]) for r in cost), doc["total_usd"], 1e-9, "the usd column adds up to the bill")
    ctx.close(sum(float(r["share"]) for r in cost), 1.0, 1e-9, "shares add up to the host")
    bad = subprocess.run([ctx.bin("tracer"), "runs", "--db", ctx.db, "--format", "xml"], capture_output=True,
                         text=True, timeout=30)
    ctx.check(bad.returncode == 2 and "tsv, csv or json" in bad.stderr, f"a bad format is named: {bad.stderr}")


@test
def times_are_local_unless_utc(ctx):
    """The CLI prints times on the reader's clock (TZ), and in UTC with --utc (before or after the
    verb): `tracer runs` shows a run's start as Python's own zone conversion of runs.start_ns."""
    from datetime import datetime, timezone
    from zoneinfo import ZoneInfo
    ctx.tracer_run(["true"], "--run", "zoned", expect=0)
    start_ns = ctx.one("SELECT start_ns FROM runs WHERE name = 'zoned'")
    when = datetime.fromtimestamp(start_ns / 1e9, tz=timezone.utc)
    local = when.astimezone(ZoneInfo("Asia/Kolkata")).strftime("%Y-%m-%d %H:%M:%S")
    utc = when.strftime("%Y-%m-%d %H:%M:%S")
    env = dict(os.environ, TZ="Asia/Kolkata")
    for args, want in ((["runs", "--db", ctx.db], local), (["runs", "--db", ctx.db, "--utc"], utc),
                       (["--utc", "runs", "--db", ctx.db], utc)):
        out = subprocess.run([ctx.bin("tracer"), *args], capture_output=True, text=True, env=env,
                             timeout=30).stdout
        row = [line for line in out.splitlines() if "zoned" in line]
        ctx.check(row and want in row[0], f"tracer {' '.join(args)}: expected {want} in {row}")
    # CMD's own arguments are its own: a --utc after "--" reaches it.
    p = ctx.tracer_run(["echo", "--utc"], "--utc", expect=0)
    ctx.check(p.stdout.strip() == "--utc", f"the command got its --utc: {p.stdout!r}")


def on_a_terminal(args, cols):
    """Runs args with stdout on a pseudo-terminal of cols columns; returns what it printed."""
    import fcntl
    import pty
    import struct
    import termios
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    p = subprocess.Popen(args, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    p.wait(timeout=30)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


@test
def show_fits_an_80_column_terminal(ctx):
    """tracer show on an 80-column terminal: no line wider than 80 columns (counted in characters,
    as a terminal shows them), long command lines cut with an ellipsis; piped, the whole argv."""
    long_arg = "x" * 150
    ctx.tracer_run(["bash", "-c", f"bash -c 'sleep 0.1; echo {long_arg} > /dev/null'; /bin/true {long_arg}"],
                   expect=0)
    text = on_a_terminal([ctx.bin("tracer"), "show", "--db", ctx.db], 80)
    lines = [line for line in text.splitlines() if line.strip()]
    wide = [line for line in lines if len(line) > 80]
    ctx.check(lines and not wide, f"{len(wide)} of {len(lines)} lines wider than 80 columns: {wide[:3]}")
    ctx.check(any(line.endswith("…") and "true" in line for line in lines),
              f"the long command is cut with an ellipsis: {[l for l in lines if 'true' in l]}")
    piped = subprocess.run([ctx.bin("tracer"), "show", "--db", ctx.db], capture_output=True, text=True,
                           timeout=30).stdout
    ctx.check(long_arg in piped, "piped, the command line is whole (up to 200 columns)")


@test
def runs_fit_an_80_column_terminal(ctx):
    """tracer runs on an 80-column terminal (a long run name and pipeline, a run that
    failed): no line wider than 80 columns once colours are stripped, names cut with an
    ellipsis, each run's id and status on its line; piped, the wide table with every
    column and the names whole."""
    import re
    name, pipeline = "a-run-name-longer-than-any-column-" + "n" * 20, "a-pipeline-name-as-long-as-" + "p" * 20
    ctx.tracer_run(["/bin/true"], "--run", name, "--pipeline", pipeline, expect=0)
    ctx.tracer_run(["sh", "-c", "exit 3"], "--run", "short", expect=3)
    text = on_a_terminal([ctx.bin("tracer"), "runs", "--db", ctx.db], 80)
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in text.splitlines() if line.strip()]
    wide = [line for line in lines if len(line) > 80]
    ctx.check(lines and not wide, f"{len(wide)} of {len(lines)} lines wider than 80 columns: {wide[:3]}")
    runs = ctx.query("SELECT id, name, status FROM runs ORDER BY id DESC")
    for rid, rname, status in runs:
        row = [line for line in lines if line.split()[0] == str(rid)]
        ctx.check(row and status in row[0].split(), f"run {rid} ({status}) on its line: {row}")
    ctx.check(any("…" in line and line.split()[0] == str(runs[-1][0]) for line in lines),
              f"the long name cut with an ellipsis: {lines}")
    piped = subprocess.run([ctx.bin("tracer"), "runs", "--db", ctx.db], capture_output=True, text=True,
                           timeout=30).stdout
    ctx.check(name in piped and "PEAK MEM" in piped.splitlines()[0], "piped: the wide table, names whole")


@test
def cost_fits_an_80_column_terminal(ctx):
    """tracer cost of a run whose step names are long: on an 80-column terminal every line
    of the table fits, a long name is cut with an ellipsis and each part keeps its share;
    piped, the names are whole. The shares add up to 100% with idle (as printed)."""
    import re
    long_name = "a_tool_with_a_name_longer_than_forty_columns_" + "x" * 12
    tool = ctx.path(long_name)
    shutil.copy(ctx.helper("cpuburn"), tool)  # work enough to be a step, not a helper
    script = ctx.path("steps.sh")
    with open(script, "w") as f:
        f.write(f"#!/bin/bash\n{tool} 120\n{ctx.helper('cpuburn')} 80\n")
    os.chmod(script, 0o755)
    ctx.tracer_run([script], expect=0)
    text = on_a_terminal([ctx.bin("tracer"), "cost", "--db", ctx.db, "--rate", "1"], 80)
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in text.splitlines() if line.strip()]
    wide = [line for line in lines if len(line) > 80]
    ctx.check(lines and not wide, f"{len(wide)} of {len(lines)} lines wider than 80 columns: {wide[:3]}")
    parts = [line for line in lines if line.endswith("%") and not line.startswith("total")]
    ctx.check(any(line.startswith(long_name[:20]) and "…" in line for line in parts),
              f"the long name cut with an ellipsis: {parts}")
    shares = sum(float(line.split()[-1].rstrip("%")) for line in parts)
    ctx.close(shares, 100.0, 0.1 * len(parts), "the printed shares and idle add up (%)")
    piped = subprocess.run([ctx.bin("tracer"), "cost", "--db", ctx.db, "--rate", "1"], capture_output=True,
                           text=True, timeout=30).stdout
    ctx.check(long_name in piped, "piped: the long name whole")


@test
def sentences_wrap_at_words_on_a_narrow_terminal(ctx):
    """signals and explain on a 60-column terminal: no line wider than 60 once colours are
    stripped, and every signal message the database holds is there whole, word for word
    (wrapped at spaces, never inside a word); piped, each message is one line as before."""
    import re
    script = ctx.path("handled.sh")
    with open(script, "w") as f:
        f.write("#!/bin/bash\nfor i in 1 2; do grep -q no-such-word-anywhere /etc/hostname || true; done\n"
                "sleep 30 & kill -TERM $!; wait $! || true\n")
    os.chmod(script, 0o755)
    ctx.tracer_run([script], expect=0)
    run = ctx.latest_run()
    messages = [m for (m,) in ctx.query("SELECT message FROM signals WHERE run_id = ?", run)]
    ctx.check(len(messages) >= 3 and any(len(m) > 60 for m in messages), f"long messages to wrap: {messages}")
    for verb in ("signals", "explain"):
        text = on_a_terminal([ctx.bin("tracer"), verb, "--db", ctx.db, str(run)], 60)
        lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in text.splitlines()]
        wide = [line for line in lines if len(line) > 60]
        ctx.check(lines and not wide, f"{verb}: {len(wide)} lines wider than 60: {wide[:2]}")
        flat = " ".join(" ".join(lines).split())
        if verb == "signals":
            for m in messages:
                ctx.check(" ".join(m.split()) in flat, f"{verb}: the message whole, word for word: {m}")
    piped = subprocess.run([ctx.bin("tracer"), "signals", "--db", ctx.db, str(run)], capture_output=True,
                           text=True, timeout=30).stdout
    ctx.check(all(any(m in line for line in piped.splitlines()) for m in messages),
              "piped: each message on one line")


@test
def html_report_says_what_its_numbers_leave_out(ctx):
    """A run whose command left a burner running (tracer run's own daemons stop with the
    command): the page's summary says one process is not counted, and its CPU card is the
    command's own, not the burner's."""
    script = write_script(ctx, "leaves-one.sh", f"setsid {ctx.helper('cpuburn')} 600 </dev/null >/dev/null 2>&1 &\n"
                                                f"{ctx.helper('cpuburn')} 100\n")
    ctx.tracer_run([script], "--run", "leaves-one", expect=0)
    html = write_report(ctx, "leaves-one")
    dom = render(ctx, html)
    note = [e["text"] for e in dom.elements if e["attrs"].get("id") == "run-unfinished"]
    ctx.check(note and note[0].startswith("Not counted: 1 process outlived the command"),
              f"the summary names what is not counted: {note}")
    data = json.loads(open(html).read().split('id="tracer-data">')[1].split("</script>")[0])
    # The burner is still running (600 ms of CPU to go): the run's CPU is the script's
    # and its 100 ms burner's, well under the sum with the orphan's 600.
    ctx.check(data["run"]["cpu_ns"] < 400_000_000,
              f"the run's CPU holds no part of the orphan: {data['run']['cpu_ns']} ns")
