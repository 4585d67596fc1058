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
#include "cli/cost/energyfleet.h"
#include "cli/cost/energyrun.h"
#include "cli/db/fleet.h"
#include "common/cloudmeta.h"
#include "cli/render/export.h"
#include "cli/render/format.h"
#include "cli/render/jsonfield.h"
#include "common/timeutil.h"

static const char usage_text[] =
    "usage: tracer energy [--db PATH] [--json] [RUN] [--since DURATION]\n"
    "                     [--by run|pipeline|step|tool|user] [--region R]\n"
    "                     [--energy-conf FILE] [--cost-conf FILE] [--format tsv|csv|json]\n"
    "                     [--instance-type T] [--no-detect] [--imds-endpoint URL]\n"
    "                     [--gcp-endpoint URL] [--no-rapl]\n"
    "  energy (Wh) and CO2e (g) of a run by step (default: the latest run), or --since 30d\n"
    "  by run. CPU energy: measured (RAPL) where the collector recorded it, else W per\n"
    "  core from /etc/tracer/energy.conf, the instance type's family (--instance-type, the\n"
    "  cloud's metadata service), the CPU model, or a default; the output says which\n"
    "  (docs/energy.md). --no-rapl: the estimate even where RAPL measured. With\n"
    "  tracer --fleet URL, --since covers every host of the fleet store\n";

static const char *const energy_columns[] = {
    "by",     "key",	   "processes", "cpu_ns", "memory_gib_hours",
    "cpu_wh", "memory_wh", "energy_wh", "co2e_g", NULL,
};

/* The runs RAPL measured: their packages' joules shared by the host's busy CPU-seconds. */
static void print_measured(json_t *measured)
{
	const char *id;
	json_t *r;

	json_object_foreach(measured, id, r)
	{
		printf("  CPU of run %s: measured (RAPL): %.4g J of %lld package(s) over %.3g s, "
		       "shared by %.4g busy CPU-s of the host: %.4g W per CPU-second\n",
		       id, jnum(r, "joules"), (long long)jint(r, "zones"),
		       (double)(jint(r, "to_ns") - jint(r, "from_ns")) / 1e9, jnum(r, "host_cpu_s"),
		       jnum(r, "watts_per_cpu_second"));
	}
}

static void print_text(json_t *m, json_t *parts, json_t *total, const char *title)
{
	char cpu[32];
	size_t i;
	json_t *p;

	printf("%s: %.4g Wh, %.4g g CO2e\n", title, jnum(total, "energy_wh"),
	       jnum(total, "co2e_g"));
	print_measured(json_object_get(m, "cpu_measured"));
	printf("  CPU%s: estimated (%s): %.4g W per core, %s\n",
	       json_object_size(json_object_get(m, "cpu_measured")) ? " elsewhere" : "",
	       jstr(m, "cpu_estimate"), jnum(m, "cpu_watts_per_core"), jstr(m, "cpu_source"));
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
	const char *instance_type, *no_detect, *imds, *gcp, *no_rapl;
};

/*
 * The instance type: --instance-type, cost.conf's, else the cloud's metadata
 * service where the firmware names a cloud (or an endpoint is given) and the runs
 * were recorded here. energy.conf's instance-type wins over all (energy.c).
 */
static void instance_of(const struct energy_args *a, const struct cost_conf *cc,
			struct energy_options *o, struct instance_facts *f)
{
	char err[512];

	if (a->instance_type || cc->instance_type[0]) {
		o->instance_type = a->instance_type ? a->instance_type : cc->instance_type;
		o->instance_source = a->instance_type ? "--instance-type" : cc->path;
		return;
	}
	if (a->no_detect || !o->cpu_is_this_host || cc->detect == DETECT_NO)
		return;
	if (!a->imds && !a->gcp && cc->detect != DETECT_YES && !cost_firmware_cloud(DMI_DIR))
		return;
	if (cloud_detect(a->imds ? a->imds : AWS_METADATA_ENDPOINT,
			 a->gcp ? a->gcp : GCP_METADATA_ENDPOINT, 1000, f, err, sizeof(err)) != 0) {
		fprintf(stderr, "tracer energy: instance unknown (%s)\n", err);
		return;
	}
	o->instance_type = f->instance_type;
	o->instance_source = !strcmp(f->provider, "aws") ? "IMDSv2" : "GCP metadata";
	o->cloud_region = f->region[0] ? f->region : NULL;
}

/* The document: of db's run or window, or of the fleet's window (db NULL). */
static json_t *document(sqlite3 *db, int64_t run, int64_t from, int64_t to, const char *by,
			const struct energy_args *a, struct energy_options *o, char *err,
			size_t err_size)
{
	struct cost_conf cc;
	struct instance_facts facts = {0};
	json_t *hosts = NULL;

	if (cost_conf_load(&cc, a->cost_conf, err, err_size) != 0)
		memset(&cc, 0, sizeof(cc));
	if (cc.region[0])
		o->cost_region = cc.region;
	if (db) {
		o->cpu_is_this_host = energy_recorded_here(db, run);
	} else if (!(hosts = energy_fleet_hosts(from, to, &o->cpu_is_this_host))) {
		err[0] = '\0'; /* said */
		return NULL;
	}
	instance_of(a, &cc, o, &facts);
	json_t *doc = db ? energy_document(db, run, from, to, by, o, err, err_size)
			 : energy_fleet_document(hosts, from, to, by, o, err, err_size);
	json_decref(hosts);
	return doc;
}

static int report(sqlite3 *db, struct cli_query *q, const struct energy_args *a,
		  enum export_format fmt)
{
	const char *by = a->by ? a->by : (a->since ? "run" : "step");
	int64_t run = 0, from = 0, to = INT64_MAX / 2;
	char err[600];
	struct energy_options o = {
	    .conf_path = a->conf, .region = a->region, .no_rapl = a->no_rapl != NULL};

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
	json_t *doc = document(db, run, from, to, by, a, &o, err, sizeof(err));
	if (!doc) {
		if (err[0])
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
	    {"since", true, &a.since},
	    {"by", true, &a.by},
	    {"format", true, &a.format},
	    {"energy-conf", true, &a.conf},
	    {"region", true, &a.region},
	    {"cost-conf", true, &a.cost_conf},
	    {"instance-type", true, &a.instance_type},
	    {"no-detect", false, &a.no_detect},
	    {"imds-endpoint", true, &a.imds},
	    {"gcp-endpoint", true, &a.gcp},
	    {"no-rapl", false, &a.no_rapl},
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
	if (fleet_active() && a.since)
		return report(NULL, &q, &a, fmt); /* every host's window, one at a time */
	sqlite3 *db = cli_open(&q);
	if (!db)
		return 1;
	rc = report(db, &q, &a, fmt);
	sqlite3_close(db);
	return rc;
}
