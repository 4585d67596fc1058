"""Energy and carbon (docs/energy.md): `tracer energy --json` against the documented model
computed independently in Python from the database's own rows, on a recorded run, with the
default coefficients and with an energy.conf of other ones."""
import json
import os
import subprocess

from harness import Failure, plain_build_only, test

GIB_KB = 1024.0 * 1024.0
GB_PER_GIB = 1.073741824


def usage_by_process(ctx, run_id, ids=False):
    """Per process: (step key, CPU seconds, GiB-seconds held), by the rule docs/cost.md states:
    each sample's RSS held until the next (the first's from the start), the last to the end; a
    process never sampled holds its peak for its whole life."""
    rows = ctx.query("SELECT p.id, p.step_id, s.name, p.start_ns, coalesce(p.end_ns, (SELECT max(ts_ns) "
                     "FROM samples x WHERE x.process_id = p.id), p.start_ns), p.cpu_user_ns + p.cpu_sys_ns, "
                     "coalesce(p.max_rss_kb, 0) FROM processes p LEFT JOIN steps s ON s.id = p.step_id "
                     "WHERE p.run_id = ?", run_id)
    out = []
    for pid, step_id, step, start, end, cpu_ns, peak_kb in rows:
        samples = ctx.query("SELECT ts_ns, rss_kb FROM samples WHERE process_id = ? ORDER BY ts_ns", pid)
        if cpu_ns is None:
            cpu_ns = max((c for c, in ctx.query("SELECT cpu_user_ns + cpu_sys_ns FROM samples WHERE "
                                                "process_id = ?", pid)), default=0)
        if not samples:
            gib_s = peak_kb / GIB_KB * (end - start) / 1e9
        else:
            edges = [start] + [t for t, _ in samples] + [end]
            rss = [samples[0][1]] + [r for _, r in samples]
            gib_s = sum(max(0, min(edges[i + 1], end) - max(edges[i], start)) / 1e9 * rss[i] / GIB_KB
                        for i in range(len(rss)))
        key = f"{step} (step {step_id})" if step_id else "(outside steps)"
        out.append((pid if ids else key, cpu_s_of(cpu_ns), gib_s))
    return out


def cpu_s_of(cpu_ns):
    return cpu_ns / 1e9


def expected(parts_usage, w_core, w_gb, pue, grid):
    by = {}
    for key, cpu_s, gib_s in parts_usage:
        b = by.setdefault(key, [0.0, 0.0, 0])
        b[0] += cpu_s
        b[1] += gib_s
        b[2] += 1
    out = {}
    for key, (cpu_s, gib_s, n) in by.items():
        wh = (cpu_s * w_core + gib_s * GB_PER_GIB * w_gb) / 3600 * pue
        out[key] = (n, wh, wh / 1000 * grid)
    return out


def energy_json(ctx, *args):
    p = subprocess.run([ctx.bin("tracer"), "energy", "--db", ctx.db, "--json", *args],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise Failure(f"tracer energy failed ({p.returncode}): {p.stderr}")
    return json.loads(p.stdout)


def compare(ctx, doc, want, what):
    got = {p["key"]: p for p in doc["parts"]}
    ctx.check(set(got) == set(want), f"{what}: parts {sorted(got)} vs {sorted(want)}")
    for key, (n, wh, g) in want.items():
        p = got.get(key)
        if not p:
            continue
        ctx.check(p["processes"] == n, f"{what} {key}: {p['processes']} processes vs {n}")
        ctx.close(p["energy_wh"], wh, 1e-9 * wh + 1e-15, f"{what} {key}: Wh")
        ctx.close(p["co2e_g"], g, 1e-9 * g + 1e-15, f"{what} {key}: g CO2e")
    total_wh = sum(w for _, w, _ in want.values())
    ctx.close(doc["total"]["energy_wh"], total_wh, 1e-9 * total_wh, f"{what}: total Wh")


@test
@plain_build_only("arithmetic over recorded rows in the CLI; the recording itself runs under ASan elsewhere")
def energy_matches_the_documented_model(ctx):
    burn = ctx.helper("cpuburn")
    ctx.tracer_run(["sh", "-c", f"{burn} 700 & /usr/bin/python3 -c 'import time; b = bytearray(160 << 20); "
                    "time.sleep(1.6)'; wait"], "--run", "energy", expect=0)
    run_id = ctx.one("SELECT id FROM runs WHERE name = 'energy'")
    usage = usage_by_process(ctx, run_id)
    held = sum(g for _, _, g in usage)
    ctx.check(held > 0.15, f"the 160 MiB held for 1.6 s shows in the rows: {held:.3f} GiB-s")
    ctx.check(sum(c for _, c, _ in usage) > 0.6, "the 0.7 s burner's CPU is in the rows")

    # Defaults: 12 W per core (this VM's CPU model is in no table), 0.3725 W/GB, PUE 1.67,
    # the world's 475 gCO2e/kWh (no region anywhere: an empty cost.conf is given).
    empty = ctx.path("empty.conf")
    open(empty, "w").close()
    doc = energy_json(ctx, "energy", "--energy-conf", empty, "--cost-conf", empty)
    m = doc["model"]
    ctx.check((m["memory_watts_per_gb"], m["pue"], m["grid_gco2e_per_kwh"]) == (0.3725, 1.67, 475.0),
              f"default coefficients: {m}")
    compare(ctx, doc, expected(usage, m["cpu_watts_per_core"], 0.3725, 1.67, 475.0), "defaults")

    # A configuration: every coefficient changes, and the region names the grid (eu-west-1 is
    # Ireland: 335.99 gCO2e/kWh in the documented table).
    conf = ctx.path("energy.conf")
    with open(conf, "w") as f:
        f.write("[energy]\ncpu-watts-per-core = 20\nmemory-watts-per-gb = 0.5\npue = 1.2\nregion = eu-west-1\n")
    doc = energy_json(ctx, "energy", "--energy-conf", conf, "--cost-conf", empty)
    m = doc["model"]
    ctx.check(m["cpu_watts_per_core"] == 20 and conf in m["cpu_source"] and m["grid_gco2e_per_kwh"] == 335.99
              and "IE" in m["grid_source"], f"configured model: {m}")
    compare(ctx, doc, expected(usage, 20, 0.5, 1.2, 335.99), "configured")

    # A bad line is refused, naming it.
    with open(conf, "a") as f:
        f.write("pue = 0.5\n")
    p = subprocess.run([ctx.bin("tracer"), "energy", "--db", ctx.db, "--energy-conf", conf, "energy"],
                       capture_output=True, text=True, timeout=60)
    ctx.check(p.returncode == 1 and "pue" in p.stderr, f"a PUE under 1 is refused: {p.returncode} {p.stderr}")

    # show --json carries the same figures (the default files: /etc/tracer's, if any).
    show = json.loads(subprocess.run([ctx.bin("tracer"), "show", "--db", ctx.db, "--json", "energy"],
                                     capture_output=True, text=True, timeout=60).stdout)
    e = show.get("energy", {})
    ctx.check("total" in e and e["total"]["cpu_ns"] == round(sum(c for _, c, _ in usage) * 1e9),
              f"show --json has the run's energy: {e.get('total')}")

    # And the trace export: each process image's Wh as the model gives it with the site's
    # coefficients (the ones `tracer energy` names without options).
    site = energy_json(ctx, "energy")["model"]
    rows = json.loads(subprocess.run([ctx.bin("tracer"), "show", "--db", ctx.db, "--format", "json", "energy"],
                                     capture_output=True, text=True, timeout=60).stdout)
    want = expected(usage_by_process(ctx, run_id, ids=True), site["cpu_watts_per_core"],
                    site["memory_watts_per_gb"], site["pue"], site["grid_gco2e_per_kwh"])
    ctx.check(len(rows) == len(want), f"{len(rows)} trace rows, {len(want)} processes")
    for r in rows:
        _, wh, g = want.get(r["process_id"], (0, None, None))
        ctx.close(r["energy_wh"], wh, 1e-9 * (wh or 0) + 1e-15, f"process {r['process_id']}: Wh in the trace")
