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

#include "cli/clidb.h"
#include "cli/commands.h"
#include "cli/format.h"
#include "cli/hostprice.h"
#include "cli/rightsize.h"
#include "cli/usage.h"

static const char usage_text[] =
    "usage: tracer recommend [--db PATH] [--json] [--pipeline P] [--headroom PCT] [RUN]\n"
    "                        [--rate USD_PER_HOUR | --instance-type T [--region R]\n"
    "                         [--lifecycle L]] [--prices FILE] [--no-detect]\n"
    "                        [--imds-endpoint URL]\n"
    "  right-sizing per step of a run (default: the latest) or of a pipeline's runs\n";

static double jnum(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
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
	bool done, priced;
	int rc = cli_parse(argc, argv, &q, usage_text, extra, &done);

	if (done)
		return rc;
	double headroom = headroom_arg ? strtod(headroom_arg, NULL) / 100.0 : 0.2;
	if (headroom < 0 || headroom > 5) {
		fprintf(stderr, "tracer recommend: --headroom is a percentage, 0 to 500\n");
		return 2;
	}
	sqlite3 *db = cli_open(&q);
	if (!db)
		return 1;
	int64_t run = 0;
	if (!pipeline && !(run = cli_run(&q, db))) {
		sqlite3_close(db);
		return 1;
	}
	priced = host_price_resolve("recommend", &po, &table, &hp) == 0;
	if (!priced)
		fprintf(stderr, "tracer recommend: no host price: sizes only, no instance types or "
				"savings\n");
	usage_capacity(db, &cap);
	int64_t scope = run;
	if (pipeline) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(db, "SELECT id FROM pipelines WHERE name = ?1", -1, &st,
				       NULL) == SQLITE_OK) {
			sqlite3_bind_text(st, 1, pipeline, -1, SQLITE_STATIC);
			if (sqlite3_step(st) == SQLITE_ROW)
				scope = sqlite3_column_int64(st, 0);
			sqlite3_finalize(st);
		}
		if (!scope) {
			fprintf(stderr, "tracer recommend: no pipeline '%s'\n", pipeline);
			prices_free(&table);
			sqlite3_close(db);
			return 1;
		}
	}
	json_t *steps = rightsize_steps(db, pipeline != NULL, scope);
	double total_now = 0, total_rec = 0;
	for (size_t i = 0; i < json_array_size(steps); i++) {
		json_t *s = json_array_get(steps, i);
		rightsize_step(s, headroom, &cap);
		double rec_gib = jnum(s, "memory_recommended_gib");
		int rec_cpus = (int)json_integer_value(json_object_get(s, "cpus_recommended"));
		if (!priced || !table.n)
			continue;
		const char *region =
		    hp.row ? hp.row->region : (po.region ? po.region : "us-east-1");
		const struct price *fit =
		    prices_cheapest_fit(&table, region, "on-demand", rec_cpus, rec_gib, NULL);
		const struct price *spot =
		    prices_cheapest_fit(&table, region, "spot", rec_cpus, rec_gib, NULL);
		double hours = jnum(s, "wall_ns") / 3.6e12;
		if (fit) {
			json_object_set_new(s, "instance",
					    json_pack("{s:s, s:s, s:i, s:f, s:f}", "type",
						      fit->type, "class", fit->cls, "vcpu",
						      fit->vcpu, "memory_gib", fit->memory_gib,
						      "usd_per_hour", fit->usd_per_hour));
			double now_cost = hours * hp.usd_per_hour,
			       rec_cost = hours * fit->usd_per_hour;
			total_now += now_cost;
			total_rec += rec_cost < now_cost ? rec_cost : now_cost;
			json_object_set_new(s, "usd_now", json_real(now_cost));
			json_object_set_new(s, "usd_recommended", json_real(rec_cost));
			json_object_set_new(
			    s, "usd_saving",
			    json_real(now_cost > rec_cost ? now_cost - rec_cost : 0));
		}
		if (spot)
			json_object_set_new(s, "spot",
					    json_pack("{s:s, s:f, s:f}", "type", spot->type,
						      "usd_per_hour", spot->usd_per_hour, "usd",
						      hours * spot->usd_per_hour));
	}
	if (q.json) {
		json_t *doc =
		    json_pack("{s:O, s:f, s:o, s:f, s:f}", "steps", steps, "headroom", headroom,
			      "price_source", priced ? json_string(hp.source) : json_null(),
			      "usd_now", total_now, "usd_recommended", total_rec);
		cli_print_json(doc);
		json_decref(doc);
	} else {
		printf("Right-sizing %s%s (headroom %.0f%%%s%s)\n", pipeline ? "pipeline " : "run ",
		       pipeline ? pipeline
		       : q.arg	? q.arg
				: "(latest)",
		       100 * headroom, priced ? "; now: " : "", priced ? hp.source : "");
		for (size_t i = 0; i < json_array_size(steps); i++) {
			json_t *s = json_array_get(steps, i);
			char peak[32], given[32], rec[32], wall[32];
			format_bytes((uint64_t)jnum(s, "peak_rss_kb") * 1024, peak, sizeof(peak));
			format_bytes((uint64_t)(jnum(s, "memory_given_gib") * 1073741824.0), given,
				     sizeof(given));
			format_bytes((uint64_t)(jnum(s, "memory_recommended_gib") * 1073741824.0),
				     rec, sizeof(rec));
			format_duration((int64_t)jnum(s, "wall_ns"), wall, sizeof(wall));
			printf("\n  %s  (%lld run%s, %s, %s)\n",
			       json_string_value(json_object_get(s, "name")),
			       (long long)json_integer_value(json_object_get(s, "instances")),
			       json_integer_value(json_object_get(s, "instances")) == 1 ? "" : "s",
			       wall,
			       json_string_value(json_object_get(s, "character"))
				   ? json_string_value(json_object_get(s, "character"))
				   : "-");
			printf("    memory: used %s of %s (%s, %.0f%%): %s -> give it %s\n", peak,
			       given, json_string_value(json_object_get(s, "memory_given_from")),
			       jnum(s, "memory_given_gib") > 0
				   ? 100 * jnum(s, "peak_rss_kb") / 1048576.0 /
					 jnum(s, "memory_given_gib")
				   : 0,
			       json_string_value(json_object_get(s, "memory_verdict")), rec);
			printf(
			    "    CPU:    used %.2f cores at peak (%.2f on average) of %.1f: %s -> "
			    "give it %lld\n",
			    jnum(s, "peak_cores"), jnum(s, "avg_cores"), jnum(s, "cpus_given"),
			    json_string_value(json_object_get(s, "cpu_verdict")),
			    (long long)json_integer_value(json_object_get(s, "cpus_recommended")));
			json_t *inst = json_object_get(s, "instance");
			if (inst)
				printf("    fits:   %s (%s, %lld vCPU, %.0f GiB, $%.4g/h): $%.4f "
				       "instead of "
				       "$%.4f for its wall time\n",
				       json_string_value(json_object_get(inst, "type")),
				       json_string_value(json_object_get(inst, "class")),
				       (long long)json_integer_value(json_object_get(inst, "vcpu")),
				       jnum(inst, "memory_gib"), jnum(inst, "usd_per_hour"),
				       jnum(s, "usd_recommended"), jnum(s, "usd_now"));
			json_t *spot = json_object_get(s, "spot");
			if (spot)
				printf("    spot:   %s at $%.4g/h ($%.4f), if the step can be "
				       "restarted\n",
				       json_string_value(json_object_get(spot, "type")),
				       jnum(spot, "usd_per_hour"), jnum(spot, "usd"));
		}
		if (!json_array_size(steps))
			printf("\n  no finished steps to size\n");
		else if (priced && total_now > 0)
			printf("\nAll steps: $%.4f on the current instance, $%.4f right-sized "
			       "(%.0f%% less)\n",
			       total_now, total_rec, 100 * (1 - total_rec / total_now));
	}
	json_decref(steps);
	prices_free(&table);
	sqlite3_close(db);
	return 0;
}
