/*
 * tracer energy: the energy (Wh) and carbon (gCO2e) of a run's steps, or of
 * every run, pipeline, tool or user over a period (docs/energy.md), from the
 * CPU time and memory each process held: the figures tracer cost splits by.
 */
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/clidb.h"
#include "cli/clierror.h"
#include "cli/commands.h"
#include "cli/costconf.h"
#include "cli/costsplit.h"
#include "cli/energy.h"
#include "cli/export.h"
#include "cli/format.h"
#include "cli/jsonfield.h"
#include "cli/usage.h"
#include "common/timeutil.h"

static const char usage_text[] =
    "usage: tracer energy [--db PATH] [--json] [RUN] [--since DURATION]\n"
    "                     [--by run|pipeline|step|tool|user] [--region R]\n"
    "                     [--energy-conf FILE] [--cost-conf FILE] [--format tsv|csv|json]\n"
    "  energy (Wh) and CO2e (g) of a run by step (default: the latest run), or --since 30d\n"
    "  by run; coefficients from /etc/tracer/energy.conf, else documented defaults\n";

static const char *const energy_columns[] = {
    "by",     "key",	   "processes", "cpu_ns", "memory_gib_hours",
    "cpu_wh", "memory_wh", "energy_wh", "co2e_g", NULL,
};

struct energy_query {
	const char *by;
	struct cost_tally tally;
};

static void bucket_key(const char *by, const struct process_usage *u, char *key, size_t size)
{
	if (!strcmp(by, "run"))
		snprintf(key, size, "%s", u->run_id ? u->run : "(not in a run)");
	else if (!strcmp(by, "pipeline"))
		snprintf(key, size, "%s",
			 !u->run_id	  ? "(not in a run)"
			 : u->pipeline[0] ? u->pipeline
					  : "(no pipeline)");
	else if (!strcmp(by, "step") && u->step_id)
		snprintf(key, size, "%s (step %lld)", u->step, (long long)u->step_id);
	else if (!strcmp(by, "step"))
		snprintf(key, size, "%s", u->run_id ? "(outside steps)" : "(not in a run)");
	else if (!strcmp(by, "tool"))
		snprintf(key, size, "%s", u->tool[0] ? u->tool : "(unknown)");
	else {
		struct passwd *pw = getpwuid(u->uid);
		if (pw)
			snprintf(key, size, "%s", pw->pw_name);
		else
			snprintf(key, size, "uid %u", u->uid);
	}
}

static void add(const struct process_usage *u, void *ctx)
{
	struct energy_query *eq = ctx;
	char key[256];

	bucket_key(eq->by, u, key, sizeof(key));
	cost_tally_add(&eq->tally, key, u->cpu_s, u->mem_gib_s);
}

static json_t *part_json(const struct energy_model *m, const char *by, const char *key,
			 unsigned processes, double cpu_s, double mem_gib_s)
{
	struct energy_figures f;
	json_t *o = json_pack("{s:s, s:s, s:i, s:I, s:f}", "by", by, "key", key, "processes",
			      (int)processes, "cpu_ns", (json_int_t)(cpu_s * 1e9 + 0.5),
			      "memory_gib_hours", mem_gib_s / 3600.0);

	energy_of(m, cpu_s, mem_gib_s, &f);
	energy_set_json(o, &f);
	return o;
}

static void print_text(const struct energy_model *m, json_t *parts, json_t *total,
		       const char *title)
{
	char cpu[32];
	size_t i;
	json_t *p;

	printf("%s: %.4g Wh, %.4g g CO2e\n", title, jnum(total, "energy_wh"),
	       jnum(total, "co2e_g"));
	printf("  CPU: %.4g W per core, %s\n", m->cpu_w_per_core, m->cpu_source);
	printf("  memory: %.4g W per GB held, %s\n", m->mem_w_per_gb, m->mem_source);
	printf("  PUE: %.3g, %s\n", m->pue, m->pue_source);
	printf("  grid: %.4g gCO2e/kWh, %s\n\n", m->grid_g_per_kwh, m->grid_source);
	printf("%-40s %9s %10s %10s %10s %10s\n", "WHO", "PROCESSES", "CPU", "MEM GiB-h", "Wh",
	       "g CO2e");
	json_array_foreach(parts, i, p)
	{
		char who[256];
		format_duration(jint(p, "cpu_ns"), cpu, sizeof(cpu));
		format_column(jstr(p, "key"), 40, who, sizeof(who));
		printf("%s %9lld %10s %10.4g %10.4g %10.4g\n", who, (long long)jint(p, "processes"),
		       cpu, jnum(p, "memory_gib_hours"), jnum(p, "energy_wh"), jnum(p, "co2e_g"));
	}
}

static int64_t parse_duration(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	double unit = !*end || !strcmp(end, "s") ? 1
		      : !strcmp(end, "m")	 ? 60
		      : !strcmp(end, "h")	 ? 3600
		      : !strcmp(end, "d")	 ? 86400
						 : 0;
	return v > 0 && unit > 0 ? (int64_t)(v * unit * 1e9) : 0;
}

/* The runs were recorded here: the CPU model of this machine is theirs. */
static bool recorded_here(sqlite3 *db, int64_t run)
{
	char host[256] = "";
	json_t *rows = cli_rows_json(db,
				     "SELECT hostname FROM runs WHERE ?1 = 0 OR id = ?1"
				     " GROUP BY hostname",
				     run);
	bool here = gethostname(host, sizeof(host) - 1) == 0 && json_array_size(rows) == 1 &&
		    !strcmp(jstr(json_array_get(rows, 0), "hostname"), host);

	json_decref(rows);
	return here;
}

struct energy_args {
	const char *since, *by, *format, *conf, *region, *cost_conf;
};

static int resolve_model(sqlite3 *db, int64_t run, const struct energy_args *a,
			 struct energy_model *m)
{
	struct cost_conf cc;
	char err[600];
	struct energy_options o = {.conf_path = a->conf, .region = a->region};

	if (cost_conf_load(&cc, a->cost_conf, err, sizeof(err)) == 0 && cc.region[0])
		o.cost_region = cc.region;
	o.cpu_is_this_host = recorded_here(db, run);
	if (energy_model_resolve(&o, m, err, sizeof(err)) != 0) {
		cli_error("energy", "%s", err);
		return -1;
	}
	return 0;
}

static int report(sqlite3 *db, struct cli_query *q, const struct energy_args *a,
		  enum export_format fmt)
{
	struct energy_query eq = {.by = a->by ? a->by : (a->since ? "run" : "step")};
	int64_t run = 0, from = 0, to = INT64_MAX / 2;
	struct energy_model m;
	int rc = 1;

	if (a->since) {
		int64_t d = parse_duration(a->since);
		if (!d) {
			cli_error("energy", "--since is like 90m, 24h, 30d");
			return 2;
		}
		to = (int64_t)now_realtime_ns();
		from = to - d;
	} else if (!(run = cli_run(q, db))) {
		return 1;
	}
	if (resolve_model(db, run, a, &m) != 0)
		return 1;
	if (usage_scan(db, from, to, run, add, &eq) != 0) {
		cli_error("energy", "%s: %s", q->db_path, sqlite3_errmsg(db));
		goto out;
	}
	json_t *parts = json_array();
	for (size_t i = 0; i < eq.tally.n; i++) {
		const struct cost_bucket *b = &eq.tally.items[i];
		json_array_append_new(
		    parts, part_json(&m, eq.by, b->key, b->processes, b->cpu_s, b->mem_gib_s));
	}
	unsigned n = 0;
	for (size_t i = 0; i < eq.tally.n; i++)
		n += eq.tally.items[i].processes;
	json_t *total = part_json(&m, eq.by, "total", n, eq.tally.cpu_s, eq.tally.mem_gib_s);
	char title[300];
	if (run)
		snprintf(title, sizeof(title), "Energy of run %lld", (long long)run);
	else
		snprintf(title, sizeof(title), "Energy over the last %s", a->since);
	if (fmt != EXPORT_NONE) {
		export_rows(stdout, fmt, energy_columns, parts);
	} else if (q->json) {
		json_t *doc = json_pack("{s:o, s:s, s:O, s:O}", "model", energy_model_json(&m),
					"by", eq.by, "parts", parts, "total", total);
		if (run)
			json_object_set_new(doc, "run", cli_run_object(db, run));
		cli_print_json(doc);
		json_decref(doc);
	} else {
		print_text(&m, parts, total, title);
	}
	json_decref(parts);
	json_decref(total);
	rc = 0;
out:
	cost_tally_free(&eq.tally);
	return rc;
}

static bool known_by(const char *by)
{
	static const char *const bys[] = {"run", "pipeline", "step", "tool", "user"};

	for (size_t i = 0; i < sizeof(bys) / sizeof(bys[0]); i++)
		if (!strcmp(by, bys[i]))
			return true;
	return false;
}

int cmd_energy(int argc, char **argv)
{
	struct cli_query q = {.verb = "energy"};
	struct energy_args a = {0};
	const struct cli_extra_option extra[] = {
	    {"since", true, &a.since},	 {"by", true, &a.by},
	    {"format", true, &a.format}, {"energy-conf", true, &a.conf},
	    {"region", true, &a.region}, {"cost-conf", true, &a.cost_conf},
	    {NULL, false, NULL},
	};
	enum export_format fmt;
	bool done;
	int rc = cli_parse(argc, argv, &q, usage_text, extra, &done);

	if (done)
		return rc;
	if (export_format_parse("energy", a.format, &fmt) != 0)
		return 2;
	if (a.by && !known_by(a.by)) {
		cli_error("energy", "--by is run, pipeline, step, tool or user");
		return 2;
	}
	sqlite3 *db = cli_open(&q);
	if (!db)
		return 1;
	rc = report(db, &q, &a, fmt);
	sqlite3_close(db);
	return rc;
}
