/*
 * tracer energy: the energy (Wh) and carbon (gCO2e) of a run's steps, or of
 * every run, pipeline, tool or user over a period (docs/energy.md), from the
 * CPU time and memory each process held: the figures tracer cost splits by.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/db/clidb.h"
#include "cli/render/clierror.h"
#include "cli/verbs/commands.h"
#include "cli/cost/costconf.h"
#include "cli/cost/energyrun.h"
#include "cli/render/export.h"
#include "cli/render/format.h"
#include "cli/render/jsonfield.h"
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

static void print_text(json_t *m, json_t *parts, json_t *total, const char *title)
{
	char cpu[32];
	size_t i;
	json_t *p;

	printf("%s: %.4g Wh, %.4g g CO2e\n", title, jnum(total, "energy_wh"),
	       jnum(total, "co2e_g"));
	printf("  CPU: %.4g W per core, %s\n", jnum(m, "cpu_watts_per_core"),
	       jstr(m, "cpu_source"));
	printf("  memory: %.4g W per GB held, %s\n", jnum(m, "memory_watts_per_gb"),
	       jstr(m, "memory_source"));
	printf("  PUE: %.3g, %s\n", jnum(m, "pue"), jstr(m, "pue_source"));
	printf("  grid: %.4g gCO2e/kWh, %s\n\n", jnum(m, "grid_gco2e_per_kwh"),
	       jstr(m, "grid_source"));
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

struct energy_args {
	const char *since, *by, *format, *conf, *region, *cost_conf;
};

static int report(sqlite3 *db, struct cli_query *q, const struct energy_args *a,
		  enum export_format fmt)
{
	const char *by = a->by ? a->by : (a->since ? "run" : "step");
	int64_t run = 0, from = 0, to = INT64_MAX / 2;
	struct cost_conf cc;
	char err[600];
	struct energy_options o = {.conf_path = a->conf, .region = a->region};

	if (a->since) {
		int64_t d = format_parse_duration(a->since);
		if (!d) {
			cli_error("energy", "--since is like 90m, 24h, 30d");
			return 2;
		}
		to = (int64_t)now_realtime_ns();
		from = to - d;
	} else if (!(run = cli_run(q, db))) {
		return 1;
	}
	if (cost_conf_load(&cc, a->cost_conf, err, sizeof(err)) == 0 && cc.region[0])
		o.cost_region = cc.region;
	o.cpu_is_this_host = energy_recorded_here(db, run);
	json_t *doc = energy_document(db, run, from, to, by, &o, err, sizeof(err));
	if (!doc) {
		cli_error("energy", "%s", err);
		return 1;
	}
	char title[300];
	if (run)
		snprintf(title, sizeof(title), "Energy of run %lld", (long long)run);
	else
		snprintf(title, sizeof(title), "Energy over the last %s", a->since);
	if (fmt != EXPORT_NONE) {
		export_rows(stdout, fmt, energy_columns, json_object_get(doc, "parts"));
	} else if (q->json) {
		if (run)
			json_object_set_new(doc, "run", cli_run_object(db, run));
		cli_print_json(doc);
	} else {
		print_text(json_object_get(doc, "model"), json_object_get(doc, "parts"),
			   json_object_get(doc, "total"), title);
	}
	json_decref(doc);
	return 0;
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
