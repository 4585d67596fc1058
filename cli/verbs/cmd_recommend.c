/*
 * tracer recommend [RUN | --pipeline P]: per step, what it used versus what it
 * was given, and what to give it instead (docs/cost.md has the rule):
 *   memory  = peak x (1 + headroom), rounded up to 64 MiB   (headroom 20%)
 *   CPUs    = ceil(peak cores x (1 + headroom)); 1 if it never used more than one
 * Given: the step's cgroup limits (a container's or a Slurm job's allocation),
 * else the whole host. The instance that fits is the cheapest in the price
 * table with that many vCPUs and that much memory (GPU and burstable types
 * excluded); the saving assumes the step runs alone on it (Batch-style).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "cli/cost/hostprice.h"
#include "cli/cost/prices.h"
#include "cli/cost/rightsize.h"
#include "cli/cost/usage.h"
#include "cli/db/clidb.h"
#include "cli/db/fleet.h"
#include "cli/render/clierror.h"
#include "cli/render/format.h"
#include "cli/render/jsonfield.h"
#include "cli/verbs/commands.h"

static const char usage_text[] =
    "usage: tracer recommend [--db PATH] [--json] [--pipeline P] [--headroom PCT] "
    "[RUN]\n" PRICE_USAGE(
	"                        ") "  right-sizing per step of a run (default: "
				    "the latest) or of a pipeline's runs\n  (with tracer --fleet "
				    "URL, its runs on every host)\n";

/* The pipeline's id, or 0 (said why). */
static int64_t pipeline_scope(sqlite3 *db, const char *pipeline)
{
	sqlite3_stmt *st;
	int64_t id = 0;

	if (sqlite3_prepare_v2(db, "SELECT id FROM pipelines WHERE name = ?1", -1, &st, NULL) ==
	    SQLITE_OK) {
		sqlite3_bind_text(st, 1, pipeline, -1, SQLITE_STATIC);
		id = cli_first_id(st);
	}
	if (!id)
		cli_error("recommend", "no pipeline '%s'\n", pipeline);
	return id;
}

static void print_step(json_t *s)
{
	char peak[32], given[32], rec[32], wall[32];
	const char *character = json_string_value(json_object_get(s, "character"));
	json_int_t instances = json_integer_value(json_object_get(s, "instances"));
	double given_gib = jnum(s, "memory_given_gib");

	format_bytes((uint64_t)jnum(s, "peak_rss_kb") * 1024, peak, sizeof(peak));
	format_bytes((uint64_t)(given_gib * 1073741824.0), given, sizeof(given));
	format_bytes((uint64_t)(jnum(s, "memory_recommended_gib") * 1073741824.0), rec,
		     sizeof(rec));
	format_duration((int64_t)jnum(s, "wall_ns"), wall, sizeof(wall));
	printf("\n  %s  (%lld run%s, %s, %s)\n", json_string_value(json_object_get(s, "name")),
	       (long long)instances, instances == 1 ? "" : "s", wall, character ? character : "-");
	if (json_is_true(json_object_get(s, "too_short"))) {
		printf("    too short to size: %s of wall time in all (advice starts at %lld s)\n",
		       wall, RIGHTSIZE_MIN_WALL_NS / 1000000000LL);
		return;
	}
	printf("    memory: used %s of %s (%s, %.0f%%): %s -> give it %s\n", peak, given,
	       json_string_value(json_object_get(s, "memory_given_from")),
	       given_gib > 0 ? 100 * jnum(s, "peak_rss_kb") / 1048576.0 / given_gib : 0,
	       json_string_value(json_object_get(s, "memory_verdict")), rec);
	printf(
	    "    CPU:    used %.2f cores at peak (%.2f on average) of %.1f: %s -> give it %lld\n",
	    jnum(s, "peak_cores"), jnum(s, "avg_cores"), jnum(s, "cpus_given"),
	    json_string_value(json_object_get(s, "cpu_verdict")),
	    (long long)json_integer_value(json_object_get(s, "cpus_recommended")));
	json_t *inst = json_object_get(s, "instance");
	if (inst)
		printf("    fits:   %s (%s, %lld vCPU, %.0f GiB, $%.4g/h): $%.4f instead of $%.4f "
		       "for its wall time\n",
		       json_string_value(json_object_get(inst, "type")),
		       json_string_value(json_object_get(inst, "class")),
		       (long long)json_integer_value(json_object_get(inst, "vcpu")),
		       jnum(inst, "memory_gib"), jnum(inst, "usd_per_hour"),
		       jnum(s, "usd_recommended"), jnum(s, "usd_now"));
	json_t *spot = json_object_get(s, "spot");
	if (spot)
		printf("    spot:   %s at $%.4g/h ($%.4f), if the step can be restarted\n",
		       json_string_value(json_object_get(spot, "type")), jnum(spot, "usd_per_hour"),
		       jnum(spot, "usd"));
	json_t *other = json_object_get(s, "other_arch");
	if (other)
		printf("    option: %s (%s) at $%.4g/h ($%.4f), only with %s builds of its tools\n",
		       json_string_value(json_object_get(other, "type")),
		       json_string_value(json_object_get(other, "arch")),
		       jnum(other, "usd_per_hour"), jnum(other, "usd"),
		       json_string_value(json_object_get(other, "arch")));
}

struct recommendation {
	const char *what; /* "pipeline NAME" or "run NAME" */
	const char *arch; /* the price table's name for where the binaries ran; NULL unknown */
	char arch_from[64];
	double headroom;
	const struct host_price *price; /* NULL: not priced */
	json_t *steps;
	json_t *run; /* the run sized, as every document's "run"; null for a pipeline */
	const char *pipeline;
	struct rightsize_totals totals;
};

static void print_text(const struct recommendation *r)
{
	printf("Right-sizing %s (headroom %.0f%%%s%s)\n", r->what, 100 * r->headroom,
	       r->price ? "; now: " : "", r->price ? r->price->source : "");
	if (r->price && r->arch)
		printf("Instance types for %s binaries (%s)\n", r->arch, r->arch_from);
	for (size_t i = 0; i < json_array_size(r->steps); i++)
		print_step(json_array_get(r->steps, i));
	if (!json_array_size(r->steps))
		printf("\n  no finished steps to size\n");
	else if (r->price && r->totals.usd_now > 0)
		printf("\nAll steps: $%.4f on the current instance, $%.4f right-sized (%.0f%% "
		       "less)\n",
		       r->totals.usd_now, r->totals.usd_recommended,
		       100 * (1 - r->totals.usd_recommended / r->totals.usd_now));
}

static void print_json(const struct recommendation *r)
{
	json_t *doc =
	    json_pack("{s:O, s:s?, s:O, s:f, s:o, s:f, s:f, s:o}", "run", r->run, "pipeline",
		      r->pipeline, "steps", r->steps, "headroom", r->headroom, "price_source",
		      r->price ? json_string(r->price->source) : json_null(), "usd_now",
		      r->totals.usd_now, "usd_recommended", r->totals.usd_recommended, "arch",
		      r->arch ? json_string(r->arch) : json_null());
	cli_print_json(doc);
	json_decref(doc);
}

/* Sizes every step, and prices it when the host's price and a table are known. */
static void size_steps(struct recommendation *r, const struct host_capacity *cap,
		       const struct price_table *table, const char *region)
{
	for (size_t i = 0; i < json_array_size(r->steps); i++) {
		json_t *s = json_array_get(r->steps, i);
		rightsize_step(s, r->headroom, cap);
		if (r->price && table->n && !json_is_true(json_object_get(s, "too_short")))
			rightsize_price(s, table, region, r->arch, r->price->usd_per_hour,
					&r->totals);
	}
}

/*
 * The architecture the scope's programs ran on, as the runs recorded it (the
 * most common one of a pipeline's runs); for runs recorded before schema v11,
 * this host's, said so.
 */
static void scope_arch(sqlite3 *db, bool pipeline, int64_t scope, struct recommendation *r)
{
	sqlite3_stmt *st;
	char machine[65] = "";
	const char *sql = pipeline ? "SELECT arch FROM runs WHERE pipeline_id = ?1 AND arch IS NOT "
				     "NULL GROUP BY arch ORDER BY count(*) DESC LIMIT 1"
				   : "SELECT arch FROM runs WHERE id = ?1 AND arch IS NOT NULL";

	/* A database older than v11 has no such column: prepare fails, fall through. */
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, scope);
		if (sqlite3_step(st) == SQLITE_ROW)
			snprintf(machine, sizeof(machine), "%s",
				 (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	if (machine[0]) {
		snprintf(r->arch_from, sizeof(r->arch_from), "as recorded: %s", machine);
	} else {
		struct utsname uts;
		if (uname(&uts) == 0)
			snprintf(machine, sizeof(machine), "%s", uts.machine);
		snprintf(r->arch_from, sizeof(r->arch_from), "not recorded; this host's: %s",
			 machine);
	}
	r->arch = prices_arch(machine);
}

int cmd_recommend(int argc, char **argv)
{
	struct cli_query q = {.verb = "recommend"};
	struct price_options po = {0};
	const char *pipeline = NULL, *headroom_arg = NULL;
	const struct cli_extra_option extra[] = {
	    {"pipeline", true, &pipeline},
	    {"headroom", true, &headroom_arg},
	    PRICE_EXTRA_OPTIONS(po),
	    {NULL, false, NULL},
	};
	struct price_table table = {0};
	struct host_price hp;
	struct host_capacity cap;
	struct recommendation r = {0};
	char what[300];
	bool done;
	int rc = cli_parse(argc, argv, &q, usage_text, extra, &done);

	if (done)
		return rc;
	double headroom_pct = 20;
	if (cli_number("recommend", "headroom", headroom_arg, 0, 500, &headroom_pct) != 0)
		return 2;
	r.headroom = headroom_pct / 100.0;
	if (fleet_active())
		po.no_detect = "fleet"; /* this machine's cloud is not the run's host's */
	/* Over the fleet, a pipeline's runs on every host, as one host's database holds them. */
	sqlite3 *db =
	    fleet_active() && pipeline ? fleet_open_pipeline("recommend", pipeline) : cli_open(&q);
	if (!db)
		return 1;
	int64_t scope = pipeline ? 0 : cli_run(&q, db);
	if (!pipeline && !scope) {
		sqlite3_close(db);
		return 1;
	}
	int priced = host_price_resolve("recommend", &po, &table, &hp);
	if (priced == HOST_PRICE_ERROR) {
		prices_free(&table);
		sqlite3_close(db);
		return 1;
	}
	if (priced == 0)
		r.price = &hp;
	else
		fprintf(stderr, "tracer recommend: sizes only, no instance types or savings\n");
	usage_capacity(db, &cap);
	if (pipeline && !(scope = pipeline_scope(db, pipeline))) {
		prices_free(&table);
		sqlite3_close(db);
		return 1;
	}
	snprintf(what, sizeof(what), "%s%s", pipeline ? "pipeline " : "run ",
		 pipeline ? pipeline
		 : q.arg  ? q.arg
			  : "(latest)");
	r.what = what;
	r.pipeline = pipeline;
	r.run = pipeline ? json_null() : cli_run_object(db, scope);
	r.steps = rightsize_steps(db, pipeline != NULL, scope);
	scope_arch(db, pipeline != NULL, scope, &r);
	size_steps(&r, &cap, &table,
		   r.price && hp.row ? hp.row->region : (po.region ? po.region : "us-east-1"));
	if (q.json)
		print_json(&r);
	else
		print_text(&r);
	json_decref(r.steps);
	json_decref(r.run);
	prices_free(&table);
	sqlite3_close(db);
	return 0;
}
