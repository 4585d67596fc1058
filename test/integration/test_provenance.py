"""Provenance: `tracer export --ro-crate` on a real Snakemake pipeline, against what the
engine itself recorded (.snakemake/metadata: each output's rule and declared inputs), what
`strace -f` saw the same jobs open, stat() of every file, and dpkg's own answer for each
tool's package. The crate is parsed as JSON-LD by rdflib and checked against the structure
the RO-Crate 1.1 and Process/Workflow Run Crate 0.5 specifications require (the npm
`ro-crate` validator cannot be installed here: no network)."""
import base64
import datetime
import json
import os
import re
import shutil
import subprocess
import urllib.parse

from harness import Failure, Skip, plain_build_only, test

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
PROCESS_RUN = "https://w3id.org/ro/wfrun/process/0.5"
WORKFLOW_RUN = "https://w3id.org/ro/wfrun/workflow/0.5"
STATUSES = {"http://schema.org/CompletedActionStatus", "http://schema.org/FailedActionStatus",
            "http://schema.org/ActiveActionStatus", "http://schema.org/PotentialActionStatus"}
# The two contexts the crate names cannot be fetched offline: the terms it uses, mapped as
# the RO-Crate 1.1 context and the workflow-run terms map them (File is schema:MediaObject).
LOCAL_CONTEXT = {"@vocab": "http://schema.org/", "File": "http://schema.org/MediaObject",
                 "conformsTo": {"@id": "http://purl.org/dc/terms/conformsTo", "@type": "@id"},
                 "ComputationalWorkflow": "https://bioschemas.org/ComputationalWorkflow",
                 "ContainerImage": "https://w3id.org/ro/terms/workflow-run#ContainerImage",
                 "containerImage": "https://w3id.org/ro/terms/workflow-run#containerImage"}


def is_system(path):
    """The rule docs/provenance.md states, written again: system paths and shared libraries."""
    if any(path == d or path.startswith(d + "/") for d in
           ("/proc", "/sys", "/dev", "/usr/lib/locale", "/usr/share/locale")):
        return True
    name = os.path.basename(path)
    return name in ("ld.so.cache", "ld.so.preload") or re.search(r".\.so(\.\d+)*$", name) is not None


def strace_jobs(prefix, work):
    """Per Snakemake job (its `bash -c 'set -euo pipefail; ...'` shell and descendants, from
    strace -ff's per-pid files): {path: [first read ts, first write ts]} of successful opens."""
    calls, children, shells = {}, {}, []
    line_re = re.compile(r"^(\d+\.\d+) (\w+)\((.*)\) += (-?\d+)")
    for name in os.listdir(os.path.dirname(prefix)):
        if not name.startswith(os.path.basename(prefix) + "."):
            continue
        pid = int(name.rsplit(".", 1)[1])
        for line in open(os.path.join(os.path.dirname(prefix), name), errors="replace"):
            m = line_re.match(line)
            if not m:
                continue
            ts, call, args, ret = float(m[1]), m[2], m[3], int(m[4])
            if call in ("clone", "clone3", "fork", "vfork") and ret > 0:
                children.setdefault(pid, []).append(ret)
            elif call == "execve" and ret == 0 and "set -euo pipefail" in args:
                shells.append(pid)
            elif call == "chdir":
                calls.setdefault(pid, []).append((ts, "chdir", args, ret))
            elif call in ("openat", "open", "creat"):
                calls.setdefault(pid, []).append((ts, call, args, ret))
    jobs = []
    for shell in shells:
        uses, todo = {}, [shell]
        while todo:
            pid = todo.pop()
            todo.extend(children.get(pid, []))
            for ts, call, args, ret in calls.get(pid, []):
                if call == "chdir":
                    raise Failure(f"a job process changed directory ({args}): paths would need it")
                m = re.match(r'(?:AT_FDCWD, )?"((?:[^"\\]|\\.)*)"(?:, ([A-Z_|]+))?', args)
                if not m or ret < 0:
                    continue
                path = os.path.normpath(os.path.join(work, m[1]))  # jobs run in the work dir
                flags = m[2] or ("O_WRONLY" if call == "creat" else "O_RDONLY")
                u = uses.setdefault(path, [None, None])
                if "O_RDONLY" in flags or "O_RDWR" in flags:
                    u[0] = ts if u[0] is None else min(u[0], ts)
                if "O_WRONLY" in flags or "O_RDWR" in flags:
                    u[1] = ts if u[1] is None else min(u[1], ts)
                if "O_DIRECTORY" in flags:
                    u.append("dir")
        jobs.append(uses)
    return jobs


def job_files(uses, written_anywhere):
    """Inputs and outputs of one job by the documented rule, from strace's opens."""
    ins, outs = set(), set()
    for path, u in uses.items():
        if is_system(path) or "dir" in u or os.path.isdir(path):
            continue
        if not os.path.exists(path) and path in written_anywhere:
            continue  # a temporary
        read, wrote = u[0], u[1]
        if read is not None and (wrote is None or read < wrote):
            ins.add(path)
        if wrote is not None:
            outs.add(path)
    return ins, outs


def uri_path(uri):
    if not uri.startswith("file://"):
        raise Failure(f"a file is not named by a file: URI: {uri}")
    return urllib.parse.unquote(uri[len("file://"):])


def check_structure(ctx, doc):
    """RO-Crate 1.1 and Process/Workflow Run Crate 0.5, as their texts state them."""
    graph = {e["@id"]: e for e in doc["@graph"]}
    ctx.check(len(graph) == len(doc["@graph"]), "every entity has its own @id")
    meta = graph.get("ro-crate-metadata.json", {})
    ctx.check(meta.get("@type") == "CreativeWork" and meta.get("about") == {"@id": "./"} and
              meta.get("conformsTo") == {"@id": "https://w3id.org/ro/crate/1.1"},
              f"metadata descriptor: {meta}")
    root = graph.get("./", {})
    ctx.check(root.get("@type") == "Dataset" and root.get("name") and root.get("description"),
              "root dataset with name and description")
    datetime.datetime.fromisoformat(root["datePublished"].replace("Z", "+00:00"))
    conforms = {c["@id"] for c in root.get("conformsTo", [])}
    ctx.check(PROCESS_RUN in conforms and graph.get(PROCESS_RUN, {}).get("@type") == "CreativeWork",
              f"root conforms to the Process Run Crate profile, described: {conforms}")

    def types(e):
        t = e.get("@type", [])
        return set(t if isinstance(t, list) else [t])

    files = {i for i, e in graph.items() if "File" in types(e)}
    ctx.check(files <= {p["@id"] for p in root.get("hasPart", [])}, "every File is in the root's hasPart")
    refs = []
    for e in doc["@graph"]:
        for k, v in e.items():
            for x in (v if isinstance(v, list) else [v]):
                if isinstance(x, dict) and "@id" in x:
                    refs.append((e["@id"], k, x["@id"]))
    dangling = [r for r in refs if r[2] not in graph and not r[2].startswith("http")]
    ctx.check(not dangling, f"every local reference resolves: {dangling[:5]}")
    actions = [e for e in doc["@graph"] if "CreateAction" in types(e)]
    mentions = {m["@id"] for m in root.get("mentions", [])}
    ctx.check({a["@id"] for a in actions} == mentions, "the root mentions every action")
    for a in actions:
        tool = graph.get(a.get("instrument", {}).get("@id"), {})
        ctx.check(types(tool) & {"SoftwareApplication", "SoftwareSourceCode", "ComputationalWorkflow"},
                  f"{a['@id']}: instrument is an application: {tool}")
        for k in ("startTime", "endTime"):
            datetime.datetime.fromisoformat(a[k].replace("Z", "+00:00"))
        ctx.check(a.get("actionStatus") in STATUSES, f"{a['@id']}: actionStatus {a.get('actionStatus')}")
        ctx.check((a["actionStatus"].endswith("FailedActionStatus")) == ("error" in a), f"{a['@id']}: error iff failed")
        ctx.check("Person" in types(graph.get(a.get("agent", {}).get("@id"), {})), f"{a['@id']}: agent is a Person")
        for x in a.get("object", []) + a.get("result", []):
            ctx.check("File" in types(graph[x["@id"]]), f"{a['@id']}: {x['@id']} is a File")
    main = graph.get(root.get("mainEntity", {}).get("@id"), {})
    if WORKFLOW_RUN in conforms:
        ctx.check({"File", "SoftwareSourceCode", "ComputationalWorkflow"} <= types(main),
                  f"Workflow Run Crate: mainEntity is the workflow: {main}")
        ctx.check(any(a["instrument"]["@id"] == main["@id"] for a in actions), "an action ran the workflow")
        lang = graph.get(main.get("programmingLanguage", {}).get("@id"), {})
        ctx.check(lang.get("@type") == "ComputerLanguage", f"the workflow's language: {lang}")
    return graph, actions


def check_rdf(ctx, doc, n_actions):
    import rdflib
    local = dict(doc, **{"@context": LOCAL_CONTEXT})
    g = rdflib.Graph()
    g.parse(data=json.dumps(local), format="json-ld", base="https://crate.invalid/")
    S = rdflib.Namespace("http://schema.org/")
    actions = set(g.subjects(rdflib.RDF.type, S.CreateAction))
    ctx.check(len(actions) == n_actions, f"rdflib reads {len(actions)} CreateActions, the document has {n_actions}")
    for a in actions:
        ctx.check(g.value(a, S.instrument) is not None, f"{a}: instrument in RDF")
        for f in list(g.objects(a, S.object)) + list(g.objects(a, S.result)):
            ctx.check((f, rdflib.RDF.type, S.MediaObject) in g, f"{f}: a MediaObject (File) in RDF")


def engine_declared(work):
    """Each output's rule and declared inputs, from Snakemake's own .snakemake/metadata."""
    rules = {}
    meta = os.path.join(work, ".snakemake", "metadata")
    for name in os.listdir(meta):
        out = base64.b64decode(name.replace("@", "/")).decode()
        rec = json.load(open(os.path.join(meta, name)))
        r = rules.setdefault(rec["rule"], {"inputs": set(), "outputs": set()})
        r["outputs"].add(os.path.join(work, out))
        r["inputs"] |= {os.path.join(work, i) for i in rec["input"]}
    return rules


@test
@plain_build_only("the crate is built by the unprivileged CLI from the database; ASan adds nothing the plain run misses")
def ro_crate_of_a_snakemake_run_matches_the_engine_and_strace(ctx):
    if not shutil.which("snakemake") or not shutil.which("strace"):
        raise Skip("snakemake or strace not installed")
    work = ctx.path("words")
    shutil.copytree(os.path.join(FIXTURES, "provenance"), work)
    subprocess.run(["chmod", "-R", "a+rwX", work], check=True)
    prefix = ctx.path("strace/trace")
    os.makedirs(os.path.dirname(prefix))
    ctx.tracer_run(["strace", "-f", "-ff", "-ttt", "-qq", "-s", "4096", "-o", prefix, "-e",
                    "trace=openat,open,creat,execve,clone,clone3,fork,vfork,chdir", "snakemake",
                    "--cores", "1", "-q", "-s", os.path.join(work, "Snakefile"), "-d", work],
                   "--run", "words", expect=0)
    run_id = ctx.one("SELECT id FROM runs WHERE name = 'words'")
    crate = ctx.path("crate")
    p = subprocess.run([ctx.bin("tracer"), "export", "--db", ctx.db, "--json", "--ro-crate", "words", crate],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise Failure(f"export failed ({p.returncode}): {p.stderr}")
    summary = json.loads(p.stdout)
    doc = json.load(open(os.path.join(crate, "ro-crate-metadata.json")))
    # The report writes the same crate beside its page (only the publication time differs).
    beside = ctx.path("report-crate")
    p = subprocess.run([ctx.bin("tracer"), "report", "--db", ctx.db, "--html", ctx.path("r.html"),
                        "--ro-crate", beside, "words"], capture_output=True, text=True, timeout=120)
    again = json.load(open(os.path.join(beside, "ro-crate-metadata.json"))) if p.returncode == 0 else None

    def undated(d):
        return [e for e in d["@graph"] if e["@id"] != "./"] if d else None
    ctx.check(undated(again) == undated(doc), f"report --ro-crate writes export's crate ({p.returncode} {p.stderr[-300:]})")
    graph, actions = check_structure(ctx, doc)
    check_rdf(ctx, doc, len(actions))
    ctx.check(summary["profile"] == WORKFLOW_RUN and summary["run_id"] == run_id,
              f"a Workflow Run Crate of run {run_id}: {summary}")
    ctx.check(summary["files"]["left_out"].get("temporary", 0) >= 1, f"the temporary is counted: {summary}")

    # Against the engine: one action per job, whose work-dir inputs and outputs are its rule's.
    steps = [a for a in actions if a["@id"].startswith("#step/")]
    declared = engine_declared(work)
    ctx.check(len(steps) == len(declared) == 3, f"3 jobs: {len(steps)} actions, {len(declared)} rules")

    def in_work(refs):
        return {p for p in map(uri_path, (r["@id"] for r in refs)) if p.startswith(work + "/")}

    by_rule = {}
    for a in steps:
        outs = in_work(a["result"])
        rule = next((r for r, d in declared.items() if d["outputs"] == outs), None)
        ctx.check(rule is not None, f"{a['@id']}: outputs {sorted(outs)} are no rule's")
        if rule:
            by_rule[rule] = a
            ctx.check(in_work(a["object"]) == declared[rule]["inputs"],
                      f"{rule}: inputs {sorted(in_work(a['object']))} vs declared {sorted(declared[rule]['inputs'])}")
    ctx.check(not any("scratch.tmp" in i for i in graph), "the temporary is named nowhere")

    # Against strace: the same jobs' opens, by the same rule, every path (not only the work dir).
    jobs = strace_jobs(prefix, work)
    written = {p for uses in jobs for p, u in uses.items() if u[1] is not None}
    ctx.check(len(jobs) == 3, f"strace saw {len(jobs)} job shells")
    for uses in jobs:
        ins, outs = job_files(uses, written)
        a = next((a for a in steps if {uri_path(r["@id"]) for r in a["result"]} == outs), None)
        if a is None:
            ctx.failures.append(f"strace job with outputs {sorted(outs)} has no action with the same")
            continue
        got = {uri_path(r["@id"]) for r in a["object"]}
        ctx.check(got == ins, f"{a['@id']}: inputs {sorted(got)} vs strace {sorted(ins)}")

    # Every file as stat() has it now: size, and modification time to the millisecond.
    for e in graph.values():
        if e.get("@type") == "File" and "contentSize" in e:
            st = os.stat(uri_path(e["@id"]))
            when = datetime.datetime.fromisoformat(e["dateModified"].replace("Z", "+00:00")).timestamp()
            ctx.check(int(e["contentSize"]) == st.st_size and abs(when - st.st_mtime) < 0.0015,
                      f"{e['@id']}: size {e['contentSize']} mtime {e['dateModified']} vs stat {st.st_size} {st.st_mtime}")

    # Tool versions against dpkg itself.
    for e in graph.values():
        if e.get("@type") == "SoftwareApplication" and e.get("softwareVersion") and e["@id"].startswith("#tool/"):
            q = subprocess.run(["dpkg", "-S", e["description"]], capture_output=True, text=True)
            if q.returncode != 0:  # merged /usr: dpkg lists /bin/X
                q = subprocess.run(["dpkg", "-S", e["description"].replace("/usr/bin/", "/bin/")],
                                   capture_output=True, text=True)
            pkg = q.stdout.split(":")[0]
            ver = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True).stdout
            ctx.check(e["softwareVersion"] == ver, f"{e['name']}: version {e['softwareVersion']} vs dpkg {pkg} {ver}")
    ctx.check(all(graph.get(by_rule[r]["instrument"]["@id"], {}).get("softwareVersion")
                  for r in by_rule), "every job's tool has its package's version")
