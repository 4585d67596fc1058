/*
 * tracer idle [--since 24h] [--cpu-below PCT] [--min DURATION]: periods the
 * host ran no tracked work (no run active) and its CPU stayed under the
 * threshold, with what they cost; and gaps inside runs where no step ran
 * (a worker waiting between tasks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/clidb.h"
#include "cli/commands.h"
#include "cli/format.h"
#include "cli/hostprice.h"
#include "common/timeutil.h"

static const char usage_text[] =
    "usage: tracer idle [--db PATH] [--json] [--since DURATION] [--cpu-below PCT] [--min "
    "DURATION]\n"
    "                   [--rate USD_PER_HOUR | --instance-type T [--region R]] [--prices FILE]\n"
    "                   [--no-detect] [--imds-endpoint URL]\n"
    "  idle periods of the host (default: the last 24h, CPU under 5%, at least 5m)\n";

static int64_t duration_ns(const char *s, int64_t fallback)
{
	if (!s)
		return fallback;
	char *end;
	double v = strtod(s, &end);
	double unit = !*end || !strcmp(end, "s") ? 1
		      : !strcmp(end, "m")	 ? 60
		      : !strcmp(end, "h")	 ? 3600
		      : !strcmp(end, "d")	 ? 86400
						 : 0;
	return v > 0 && unit > 0 ? (int64_t)(v * unit * 1e9) : -1;
}

static json_t *period(int64_t a, int64_t b, double usd_per_hour, const char *what)
{
	double hours = (double)(b - a) / 3.6e12;
	json_t *p = json_pack("{s:I, s:I, s:f, s:s}", "from_ns", (json_int_t)a, "to_ns",
			      (json_int_t)b, "seconds", (double)(b - a) / 1e9, "what", what);
	if (usd_per_hour > 0)
		json_object_set_new(p, "usd", json_real(hours * usd_per_hour));
	return p;
}

int cmd_idle(int argc, char **argv)
{
	struct cli_query q = {.verb = "idle"};
	struct price_options po = {0};
	const char *since = NULL, *below = NULL, *min_arg = NULL;
	const struct cli_extra_option extra[] = {
	    {"since", true, &since}, {"cpu-below", true, &below}, {"min", true, &min_arg},
	    PRICE_EXTRA_OPTIONS(po), {NULL, false, NULL},
	};
	struct price_table table = {0};
	struct host_price hp = {0};
	bool done;
	int rc = cli_parse(argc, argv, &q, usage_text, extra, &done);

	if (done)
		return rc;
	int64_t window = duration_ns(since, 86400LL * 1000000000LL);
	int64_t min_ns = duration_ns(min_arg, 300LL * 1000000000LL);
	double threshold = below ? strtod(below, NULL) : 5.0;
	if (window < 0 || min_ns < 0 || threshold <= 0 || threshold > 100) {
		fputs(usage_text, stderr);
		return 2;
	}
	sqlite3 *db = cli_open(&q);
	if (!db)
		return 1;
	if (host_price_resolve("idle", &po, &table, &hp) != 0)
		fprintf(stderr, "tracer idle: periods only, no cost\n");
	/* The window ends at the last host sample (the database may be a copy). */
	json_t *last = cli_rows_json(db, "SELECT max(ts_ns) AS t FROM host_samples", 0);
	int64_t to = json_integer_value(json_object_get(json_array_get(last, 0), "t"));
	json_decref(last);
	if (!to)
		to = (int64_t)now_realtime_ns();
	int64_t from = to - window;

	/* Host idle: each sample under the CPU threshold with no run active at its time. */
	sqlite3_stmt *st;
	const char *sql =
	    "SELECT h.ts_ns, h.interval_ns, h.cpu_busy_pct, EXISTS (SELECT 1 FROM runs r WHERE"
	    " r.start_ns < h.ts_ns AND coalesce(r.end_ns, ?2) > h.ts_ns - h.interval_ns) AS busy"
	    " FROM host_samples h WHERE h.ts_ns > ?1 AND h.ts_ns <= ?2 ORDER BY h.ts_ns";
	json_t *host = json_array(), *gaps = json_array();
	double host_s = 0, gap_s = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, from);
		sqlite3_bind_int64(st, 2, to);
		int64_t a = 0, b = 0;
		while (true) {
			bool row = sqlite3_step(st) == SQLITE_ROW;
			int64_t ts = row ? sqlite3_column_int64(st, 0) : 0;
			int64_t iv = row ? sqlite3_column_int64(st, 1) : 0;
			bool idle = row && sqlite3_column_type(st, 2) != SQLITE_NULL &&
				    sqlite3_column_double(st, 2) < threshold &&
				    !sqlite3_column_int(st, 3);
			/* A period ends at a busy sample or a hole in the samples. */
			if (a && (!idle || ts - iv > b + iv)) {
				if (b - a >= min_ns) {
					json_array_append_new(
					    host, period(a, b, hp.usd_per_hour, "host idle"));
					host_s += (double)(b - a) / 1e9;
				}
				a = 0;
			}
			if (!row)
				break;
			if (idle) {
				if (!a)
					a = ts - iv;
				b = ts;
			}
		}
		sqlite3_finalize(st);
	}
	/* Inside runs: stretches where none of the run's steps was running. */
	const char *steps_sql = "SELECT r.id, r.name, r.start_ns, coalesce(r.end_ns, ?2), "
				"s.start_ns, s.end_ns FROM runs r"
				" LEFT JOIN steps s ON s.run_id = r.id WHERE r.start_ns < ?2 AND "
				"coalesce(r.end_ns, ?2) >"
				" ?1 AND r.steps > 0 ORDER BY r.id, s.start_ns";
	if (sqlite3_prepare_v2(db, steps_sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, from);
		sqlite3_bind_int64(st, 2, to);
		int64_t cur = 0, covered = 0, run_end = 0;
		char name[256] = "";
		while (true) {
			bool row = sqlite3_step(st) == SQLITE_ROW;
			int64_t id = row ? sqlite3_column_int64(st, 0) : -1;
			if (id != cur) {
				if (cur && run_end - covered >= min_ns) {
					json_t *p = period(covered, run_end, hp.usd_per_hour,
							   "no step running");
					json_object_set_new(p, "run", json_string(name));
					json_array_append_new(gaps, p);
					gap_s += (double)(run_end - covered) / 1e9;
				}
				if (!row)
					break;
				cur = id;
				snprintf(name, sizeof(name), "%s", sqlite3_column_text(st, 1));
				covered = sqlite3_column_int64(st, 2);
				run_end = sqlite3_column_int64(st, 3);
			}
			int64_t s = sqlite3_column_int64(st, 4);
			int64_t e = sqlite3_column_type(st, 5) == SQLITE_NULL
					? run_end
					: sqlite3_column_int64(st, 5);
			if (s - covered >= min_ns) {
				json_t *p = period(covered, s, hp.usd_per_hour, "no step running");
				json_object_set_new(p, "run", json_string(name));
				json_array_append_new(gaps, p);
				gap_s += (double)(s - covered) / 1e9;
			}
			if (e > covered)
				covered = e;
		}
		sqlite3_finalize(st);
	}
	if (q.json) {
		json_t *doc = json_pack("{s:I, s:I, s:f, s:f, s:O, s:O, s:f, s:f}", "from_ns",
					(json_int_t)from, "to_ns", (json_int_t)to, "cpu_below_pct",
					threshold, "min_seconds", (double)min_ns / 1e9, "host_idle",
					host, "idle_in_runs", gaps, "host_idle_seconds", host_s,
					"idle_in_runs_seconds", gap_s);
		if (hp.usd_per_hour > 0)
			json_object_set_new(doc, "usd_per_hour", json_real(hp.usd_per_hour));
		cli_print_json(doc);
		json_decref(doc);
	} else {
		char d[32];
		format_duration((int64_t)(host_s * 1e9), d, sizeof(d));
		printf(
		    "Host idle (no run active, CPU under %.0f%%, at least %llds): %zu periods, %s",
		    threshold, (long long)(min_ns / 1000000000), json_array_size(host), d);
		if (hp.usd_per_hour > 0)
			printf(", $%.4f", host_s / 3600.0 * hp.usd_per_hour);
		printf("\n");
		for (int k = 0; k < 2; k++) {
			json_t *list = k ? gaps : host;
			if (k)
				printf("Inside runs, no step running: %zu periods\n",
				       json_array_size(gaps));
			for (size_t i = 0; i < json_array_size(list); i++) {
				json_t *p = json_array_get(list, i);
				char a[40];
				format_time(json_integer_value(json_object_get(p, "from_ns")), a,
					    sizeof(a));
				format_duration(
				    (int64_t)(json_real_value(json_object_get(p, "seconds")) * 1e9),
				    d, sizeof(d));
				printf("  %s  %9s", a, d);
				if (json_object_get(p, "usd"))
					printf("  $%.4f",
					       json_real_value(json_object_get(p, "usd")));
				if (json_object_get(p, "run"))
					printf("  run %s",
					       json_string_value(json_object_get(p, "run")));
				printf("\n");
			}
		}
	}
	json_decref(host);
	json_decref(gaps);
	prices_free(&table);
	sqlite3_close(db);
	return 0;
}
