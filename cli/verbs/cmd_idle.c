/*
 * tracer idle [--since 24h] [--cpu-below PCT] [--min DURATION]: periods the
 * host ran no tracked work (no run active) and its CPU stayed under the
 * threshold, with what they cost; and gaps inside runs where no step ran
 * (a worker waiting between tasks).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cost/hostprice.h"
#include "cli/cost/idle.h"
#include "cli/db/clidb.h"
#include "cli/db/fleet.h"
#include "cli/render/clierror.h"
#include "cli/render/format.h"
#include "cli/verbs/commands.h"
#include "cli/verbs/fleet_idle.h"
#include "common/timeutil.h"
#include "common/vec.h"

/* clang-format off */
static const char usage_text[] =
    "usage: tracer idle [--db PATH] [--json] [--since DURATION] [--cpu-below PCT] [--min DURATION]\n"
    PRICE_USAGE("                   ")
    "  idle periods of the host (default: the last 24h, CPU under 5%, at least 5m);\n"
    "  tracer --fleet idle [--sweep | HOST]: which hosts stopped reporting (--sweep: then\n"
    "  every host's idle periods; HOST: that host's), read from the fleet store\n";
/* clang-format on */

/* --since and --min: fallback when not given, -1 when unreadable. */
static int64_t duration_ns(const char *s, int64_t fallback)
{
	if (!s)
		return fallback;
	int64_t ns = format_parse_duration(s);
	return ns > 0 ? ns : -1;
}

struct idle_window {
	int64_t from_epoch_ns, to_epoch_ns, min_ns;
	double threshold_pct;
};

struct busy_span {
	int64_t start, end;
};

/* The runs that started before the window's end, as the union of their spans (start
 * order; merged where they overlap, not where they only touch): a tick is busy when a
 * run has start < ts and end > ts - interval, the same test against a merged span. */
static int load_busy_spans(sqlite3 *db, const struct idle_window *w, struct busy_span **out,
			   size_t *n)
{
	VEC(struct busy_span) v = {0};
	sqlite3_stmt *st;
	int rc = 0;

	if (sqlite3_prepare_v2(
		db,
		"SELECT start_ns, coalesce(end_ns, ?1) FROM runs WHERE start_ns < ?1 "
		"AND start_ns IS NOT NULL ORDER BY start_ns",
		-1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, w->to_epoch_ns);
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		struct busy_span b = {sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1)};
		if (v.n && b.start < v.items[v.n - 1].end) {
			if (b.end > v.items[v.n - 1].end)
				v.items[v.n - 1].end = b.end;
		} else if (!vec_push(&v, b)) {
			rc = -1;
		}
	}
	sqlite3_finalize(st);
	*out = v.items;
	*n = v.n;
	return rc;
}

/* Whether a merged span has start < ts and end > after: the first span ending after
 * `after` (ends grow with starts) is the only one that can. */
static bool busy_at(const struct busy_span *b, size_t n, int64_t ts, int64_t after)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b[mid].end > after)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < n && b[lo].start < ts;
}

/* The host's samples in the window, each with whether some run was active in it (a
 * sweep over the runs' spans: a query per sample took minutes on a day of 1 Hz samples
 * and 10,000 runs). */
static int load_host_ticks(sqlite3 *db, const struct idle_window *w, struct host_tick **out,
			   size_t *n)
{
	VEC(struct host_tick) v = {0};
	struct busy_span *spans = NULL;
	size_t n_spans = 0;
	sqlite3_stmt *st;
	const char *sql = "SELECT ts_ns, interval_ns, cpu_busy_pct FROM host_samples WHERE ts_ns > "
			  "?1 AND ts_ns <= ?2 ORDER BY ts_ns";
	int rc = load_busy_spans(db, w, &spans, &n_spans);

	if (rc == 0 && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, w->from_epoch_ns);
		sqlite3_bind_int64(st, 2, w->to_epoch_ns);
		while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
			int64_t ts = sqlite3_column_int64(st, 0);
			/* No interval (NULL): never busy, as the SQL's NULL comparison said. */
			bool has_iv = sqlite3_column_type(st, 1) != SQLITE_NULL;
			struct host_tick t = {
			    .ts_epoch_ns = ts,
			    .interval_ns = sqlite3_column_int64(st, 1),
			    .has_cpu = sqlite3_column_type(st, 2) != SQLITE_NULL,
			    .cpu_busy_pct = sqlite3_column_double(st, 2),
			    .run_active = has_iv && busy_at(spans, n_spans, ts,
							    ts - sqlite3_column_int64(st, 1)),
			};
			if (!vec_push(&v, t))
				rc = -1;
		}
		sqlite3_finalize(st);
	}
	free(spans);
	*out = v.items;
	*n = v.n;
	return rc;
}

/* Runs overlapping the window with their steps, in run order then step start. The
 * names are copies the caller frees. */
static int load_run_steps(sqlite3 *db, const struct idle_window *w, struct run_step_span **out,
			  size_t *n)
{
	VEC(struct run_step_span) v = {0};
	sqlite3_stmt *st;
	const char *sql = "SELECT r.id, r.name, r.start_ns, coalesce(r.end_ns, ?2), "
			  "s.start_ns, s.end_ns FROM runs r"
			  " LEFT JOIN steps s ON s.run_id = r.id WHERE r.start_ns < ?2 AND "
			  "coalesce(r.end_ns, ?2) > ?1 AND r.steps > 0 ORDER BY r.id, s.start_ns";
	int rc = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, w->from_epoch_ns);
		sqlite3_bind_int64(st, 2, w->to_epoch_ns);
		while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
			const unsigned char *name = sqlite3_column_text(st, 1);
			struct run_step_span s = {
			    .run_id = sqlite3_column_int64(st, 0),
			    .run_name = strdup(name ? (const char *)name : ""),
			    .run_start_epoch_ns = sqlite3_column_int64(st, 2),
			    .run_end_epoch_ns = sqlite3_column_int64(st, 3),
			    .step_start_epoch_ns = sqlite3_column_int64(st, 4),
			    .step_running = sqlite3_column_type(st, 5) == SQLITE_NULL,
			    .step_end_epoch_ns = sqlite3_column_int64(st, 5),
			};
			if (!s.run_name || !vec_push(&v, s)) {
				free((char *)s.run_name);
				rc = -1;
			}
		}
		sqlite3_finalize(st);
	}
	*out = v.items;
	*n = v.n;
	return rc;
}

static json_t *period_json(const struct idle_period *p, double usd_per_hour)
{
	int64_t a = p->from_epoch_ns, b = p->to_epoch_ns;
	json_t *j = json_pack("{s:I, s:I, s:I, s:s}", "from_ns", (json_int_t)a, "to_ns",
			      (json_int_t)b, "wall_ns", (json_int_t)(b - a), "what",
			      p->run_name ? "no step running" : "host idle");
	if (usd_per_hour > 0)
		json_object_set_new(j, "usd", json_real((double)(b - a) / 3.6e12 * usd_per_hour));
	if (p->run_name)
		json_object_set_new(j, "run", json_string(p->run_name));
	return j;
}

static json_t *periods_json(const struct idle_periods *ps, double usd_per_hour)
{
	json_t *a = json_array();

	for (size_t i = 0; i < ps->n; i++)
		json_array_append_new(a, period_json(&ps->items[i], usd_per_hour));
	return a;
}

static json_t *idle_json(const struct idle_window *w, const struct idle_periods *host,
			 const struct idle_periods *gaps, double usd_per_hour, json_int_t samples,
			 double covered_s)
{
	json_t *doc = json_pack(
	    "{s:I, s:I, s:f, s:I, s:o, s:o, s:I, s:I}", "from_ns", (json_int_t)w->from_epoch_ns,
	    "to_ns", (json_int_t)w->to_epoch_ns, "cpu_below_pct", w->threshold_pct, "min_ns",
	    (json_int_t)w->min_ns, "host_idle", periods_json(host, usd_per_hour), "idle_in_runs",
	    periods_json(gaps, usd_per_hour), "host_idle_ns", (json_int_t)idle_total_ns(host),
	    "idle_in_runs_ns", (json_int_t)idle_total_ns(gaps));
	if (usd_per_hour > 0)
		json_object_set_new(doc, "usd_per_hour", json_real(usd_per_hour));
	/* 0 samples: no data, which 0 periods alone cannot tell from a busy host. */
	json_object_set_new(doc, "host_samples", json_integer(samples));
	json_object_set_new(doc, "sampled_ns", json_integer((json_int_t)llround(covered_s * 1e9)));
	return doc;
}

static void print_periods(const struct idle_periods *ps, double usd_per_hour)
{
	char a[40], d[32];

	for (size_t i = 0; i < ps->n; i++) {
		const struct idle_period *p = &ps->items[i];
		int64_t ns = p->to_epoch_ns - p->from_epoch_ns;
		format_time(p->from_epoch_ns, a, sizeof(a));
		format_duration(ns, d, sizeof(d));
		printf("  %s  %9s", a, d);
		if (usd_per_hour > 0)
			printf("  $%.4f", (double)ns / 3.6e12 * usd_per_hour);
		if (p->run_name)
			printf("  run %s", p->run_name);
		printf("\n");
	}
}

static void print_text(const struct idle_window *w, const struct idle_periods *host,
		       const struct idle_periods *gaps, double usd_per_hour)
{
	char d[32];
	double host_s = idle_total_seconds(host);

	format_duration((int64_t)(host_s * 1e9), d, sizeof(d));
	printf("Host idle (no run active, CPU under %.0f%%, at least %llds): %zu periods, %s",
	       w->threshold_pct, (long long)(w->min_ns / 1000000000), host->n, d);
	if (usd_per_hour > 0)
		printf(", $%.4f", host_s / 3600.0 * usd_per_hour);
	printf("\n");
	print_periods(host, usd_per_hour);
	printf("Inside runs, no step running: %zu periods\n", gaps->n);
	print_periods(gaps, usd_per_hour);
}

/* The window ends at the last host sample (the database may be a copy). */
static int64_t window_end(sqlite3 *db)
{
	json_t *last = cli_rows_json(db, "SELECT max(ts_ns) AS t FROM host_samples", 0);
	int64_t to = json_integer_value(json_object_get(json_array_get(last, 0), "t"));

	json_decref(last);
	return to ? to : (int64_t)now_realtime_ns();
}

struct idle_result {
	struct idle_periods host, gaps;
	struct run_step_span *spans; /* own the run names the gaps point to */
	size_t n_spans;
};

static void idle_result_free(struct idle_result *r)
{
	for (size_t i = 0; i < r->n_spans; i++)
		free((char *)r->spans[i].run_name);
	free(r->spans);
	free(r->host.items);
	free(r->gaps.items);
}

/* Host idle periods and gaps in runs; 0, or -1 if memory ran out. */
static int find_idle(sqlite3 *db, const struct idle_window *w, struct idle_result *r)
{
	struct host_tick *ticks = NULL;
	size_t n_ticks = 0;
	int rc = load_host_ticks(db, w, &ticks, &n_ticks);

	if (rc == 0)
		rc = idle_host_periods(ticks, n_ticks, w->threshold_pct, w->min_ns, &r->host);
	free(ticks);
	if (rc == 0)
		rc = load_run_steps(db, w, &r->spans, &r->n_spans);
	if (rc == 0)
		rc = idle_run_gaps(r->spans, r->n_spans, w->min_ns, &r->gaps);
	return rc;
}

static void print_doc(json_t *doc)
{
	cli_print_json(doc);
	json_decref(doc);
}

/* How many host samples the window holds and the time they cover. */
static void sample_cover(sqlite3 *db, int64_t window, json_int_t *samples, double *covered_s)
{
	json_t *cover =
	    cli_rows_json(db,
			  "SELECT count(*) AS n, total(interval_ns) / 1e9 AS s FROM host_samples "
			  "WHERE ts_ns > (SELECT max(ts_ns) FROM host_samples) - ?1",
			  window);
	*samples = json_integer_value(json_object_get(json_array_get(cover, 0), "n"));
	*covered_s = json_number_value(json_object_get(json_array_get(cover, 0), "s"));
	json_decref(cover);
}

/*
 * One host's idle time in db over the window ending at its last sample: printed
 * (text, or JSON when json and out is NULL), or its JSON document put in *out.
 * 0, or 1 said why.
 */
static int idle_of(sqlite3 *db, struct idle_window *w, int64_t window, double usd, bool json,
		   json_t **out)
{
	struct idle_result result = {0};
	json_int_t samples;
	double covered_s;

	w->to_epoch_ns = window_end(db);
	w->from_epoch_ns = w->to_epoch_ns - window;
	int rc = find_idle(db, w, &result);
	sample_cover(db, window, &samples, &covered_s);
	if (rc != 0)
		cli_error("idle", "out of memory\n");
	else if (json && out)
		*out = idle_json(w, &result.host, &result.gaps, usd, samples, covered_s);
	else if (json)
		print_doc(idle_json(w, &result.host, &result.gaps, usd, samples, covered_s));
	else {
		char d[32];
		format_duration((int64_t)(covered_s * 1e9), d, sizeof(d));
		if (samples)
			printf("Host samples in the window: %lld, covering %s\n",
			       (long long)samples, d);
		else
			printf("No host samples in the window: nothing to judge idle time by (a "
			       "long-running tracer-aggregator samples the host; see "
			       "--host-sample-ms)\n");
		print_text(w, &result.host, &result.gaps, usd);
	}
	idle_result_free(&result);
	return rc == 0 ? 0 : 1;
}

/* tracer --fleet idle: which hosts stopped reporting; with --sweep, then each host's
 * idle time, read one host at a time from the fleet store and priced as on one host
 * (seconds a host: its samples are copied), so it is asked for. */
static int idle_sweep(struct idle_window *w, int64_t window, const struct price_options *po,
		      bool json, bool sweep)
{
	struct price_table table = {0};
	struct host_price hp = {0};
	json_t *hosts = fleet_idle_verdicts(), *h;
	size_t i;
	int rc = 0;

	if (!hosts)
		return 1;
	if (!sweep) {
		if (json) {
			print_doc(json_pack("{s:o}", "hosts", hosts));
			return 0;
		}
		fleet_idle_print_hosts(hosts);
		printf("Idle periods of every host: tracer --fleet idle --sweep; of one: tracer "
		       "--fleet idle HOST\n");
		json_decref(hosts);
		return 0;
	}
	int priced = host_price_resolve("idle", po, &table, &hp);
	if (priced == HOST_PRICE_ERROR) {
		prices_free(&table);
		json_decref(hosts);
		return 1;
	}
	if (!json)
		fleet_idle_print_hosts(hosts);
	int64_t idle_ns = 0;
	json_array_foreach(hosts, i, h)
	{
		const char *host = json_string_value(json_object_get(h, "host"));
		sqlite3 *db = fleet_memory_db("idle");
		json_t *doc = NULL;
		if (!db || fleet_load_idle_host(db, "idle", host) != 0) {
			sqlite3_close(db);
			rc = 1;
			break;
		}
		if (!json)
			printf("\n%s (%s), %s:\n", host,
			       json_string_value(json_object_get(h, "hostname")),
			       json_string_value(json_object_get(h, "state")));
		rc = idle_of(db, w, window, hp.usd_per_hour, json, json ? &doc : NULL);
		sqlite3_close(db);
		if (rc != 0)
			break;
		if (doc) {
			idle_ns += json_integer_value(json_object_get(doc, "host_idle_ns"));
			json_object_set_new(h, "idle", doc);
		}
	}
	if (rc == 0 && json) {
		json_t *all = json_pack("{s:o, s:I}", "hosts", json_incref(hosts), "host_idle_ns",
					(json_int_t)idle_ns);
		if (hp.usd_per_hour > 0)
			json_object_set_new(all, "usd_per_hour", json_real(hp.usd_per_hour));
		print_doc(all);
	} else if (rc == 0 && !json_array_size(hosts)) {
		printf("Nothing to sweep.\n");
	}
	json_decref(hosts);
	prices_free(&table);
	return rc;
}

int cmd_idle(int argc, char **argv)
{
	struct cli_query q = {.verb = "idle"};
	struct price_options po = {0};
	const char *since = NULL, *below = NULL, *min_arg = NULL, *sweep = NULL;
	const struct cli_extra_option extra[] = {
	    {"since", true, &since},  {"cpu-below", true, &below}, {"min", true, &min_arg},
	    {"sweep", false, &sweep}, PRICE_EXTRA_OPTIONS(po),	   {NULL, false, NULL},
	};
	struct price_table table = {0};
	struct host_price hp = {0};
	bool done;
	int rc = cli_parse(argc, argv, &q, usage_text, extra, &done);

	if (done)
		return rc;
	int64_t window = duration_ns(since, 86400LL * 1000000000LL);
	struct idle_window w = {.min_ns = duration_ns(min_arg, 300LL * 1000000000LL),
				.threshold_pct = 5.0};
	if (cli_number("idle", "cpu-below", below, 0.001, 100, &w.threshold_pct) != 0)
		return 2;
	if (window < 0 || w.min_ns < 0 || w.threshold_pct <= 0 || w.threshold_pct > 100) {
		fputs(usage_text, stderr);
		return 2;
	}
	if (sweep && (!fleet_active() || q.arg)) {
		cli_error("idle",
			  "--sweep goes with --fleet and no HOST (tracer --fleet idle --sweep)\n");
		return 2;
	}
	if (fleet_active())
		po.no_detect = "fleet"; /* this machine's cloud is not the hosts' */
	if (fleet_active() && !q.arg)
		return idle_sweep(&w, window, &po, q.json, sweep != NULL);
	sqlite3 *db = cli_open(&q);
	if (!db)
		return 1;
	int priced = host_price_resolve("idle", &po, &table, &hp);
	if (priced == HOST_PRICE_ERROR) {
		prices_free(&table);
		sqlite3_close(db);
		return 1;
	}
	if (priced != 0)
		fprintf(stderr, "tracer idle: periods only, no cost\n");
	rc = idle_of(db, &w, window, hp.usd_per_hour, q.json, NULL);
	prices_free(&table);
	sqlite3_close(db);
	return rc;
}
