/* A host's cost over a window, split by who used it (docs/cost.md). */
#include "cli/cost/costrun.h"

#include <grp.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>

#include "cli/db/liveness.h"
#include "cli/db/rows.h"
#include "common/timeutil.h"

static void user_name(uint32_t uid, char *out, size_t size)
{
	struct passwd *pw = getpwuid(uid);
	if (pw)
		snprintf(out, size, "%s", pw->pw_name);
	else
		snprintf(out, size, "uid %u", uid);
}

/* The bucket a process's use goes to, for --by. */
static void bucket_key(const struct cost_query *cq, const struct process_usage *u, char *key,
		       size_t size)
{
	const char *by = cq->by;

	if (!strcmp(by, "run")) {
		snprintf(key, size, "%s", u->run_id ? u->run : "(not in a run)");
	} else if (!strcmp(by, "pipeline")) {
		snprintf(key, size, "%s",
			 !u->run_id	  ? "(not in a run)"
			 : u->pipeline[0] ? u->pipeline
					  : "(no pipeline)");
	} else if (!strcmp(by, "step")) {
		snprintf(key, size, "%s",
			 !u->run_id   ? "(not in a run)"
			 : u->step_id ? u->step
				      : "(outside steps)");
	} else if (!strcmp(by, "tool")) {
		snprintf(key, size, "%s", u->tool[0] ? u->tool : "(unknown)");
	} else if (!strcmp(by, "user")) {
		user_name(u->uid, key, size);
	} else {
		char user[64];
		struct group *gr = getgrgid(u->gid);
		user_name(u->uid, user, sizeof(user));
		snprintf(
		    key, size, "%s",
		    cost_center_of(&cq->centers, user, gr ? gr->gr_name : "", u->memory_cgroup));
	}
}

/* How much of [a, b) lies in [from, to). */
static int64_t clipped_span(int64_t a, int64_t b, int64_t from, int64_t to)
{
	if (a < from)
		a = from;
	if (b > to)
		b = to;
	return b > a ? b - a : 0;
}

static void add(const struct process_usage *u, void *ctx)
{
	struct cost_query *cq = ctx;
	char key[256];

	bucket_key(cq, u, key, sizeof(key));
	cost_tally_add(&cq->tally, key, u->cpu_s, u->mem_gib_s);
}

int64_t cost_observed_ns(sqlite3 *db, int64_t from_ns, int64_t to_ns)
{
	sqlite3_stmt *q;
	int64_t observed = 0, cover_from = 0, cover_to = 0, now = (int64_t)now_realtime_ns();
	bool any = false;

	if (sqlite3_prepare_v2(
		db,
		"SELECT first_seen_ns AS a, CASE WHEN final = 0 AND ?1 - last_seen_ns "
		"< ?2 THEN ?1 ELSE last_seen_ns END FROM collector_stats WHERE "
		"first_seen_ns IS NOT NULL UNION ALL SELECT start_ns, end_ns FROM runs "
		"WHERE start_ns IS NOT NULL AND end_ns IS NOT NULL ORDER BY a",
		-1, &q, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(q, 1, now);
	sqlite3_bind_int64(q, 2, liveness_stale_ns());
	/*
	 * A collector's stream is seen from its first frame, a little after it began to
	 * watch: a run it recorded from its start was watched all along, so its span counts
	 * too. Spans sorted by start: merge overlapping ones, add each merged one clipped.
	 */
	while (sqlite3_step(q) == SQLITE_ROW) {
		int64_t a = sqlite3_column_int64(q, 0), b = sqlite3_column_int64(q, 1);
		any = true;
		if (b <= a)
			continue;
		if (cover_to > cover_from && a <= cover_to) {
			if (b > cover_to)
				cover_to = b;
			continue;
		}
		observed += clipped_span(cover_from, cover_to, from_ns, to_ns);
		cover_from = a;
		cover_to = b;
	}
	observed += clipped_span(cover_from, cover_to, from_ns, to_ns);
	sqlite3_finalize(q);
	return any ? observed : -1;
}

void cost_run_window(sqlite3 *db, int64_t run, struct cost_report *r)
{
	json_t *row = cli_rows_json(db,
				    "SELECT start_ns, coalesce(end_ns, (SELECT max(ts_ns) FROM "
				    "host_samples)) AS end_ns FROM runs WHERE id = ?1",
				    run);
	r->run = run;
	r->from_ns = json_integer_value(json_object_get(json_array_get(row, 0), "start_ns"));
	r->to_ns = json_integer_value(json_object_get(json_array_get(row, 0), "end_ns"));
	json_decref(row);
	if (r->to_ns <= r->from_ns)
		r->to_ns = r->from_ns + 1;
}

int cost_compute(sqlite3 *db, const char *verb, const struct price_options *po,
		 struct cost_query *cq, struct cost_report *r)
{
	struct price_table table = {0};
	struct host_capacity *cap = &r->capacity;
	int rc = 0;

	int priced = host_price_resolve(verb, po, &table, &r->price);
	if (priced == HOST_PRICE_ERROR) {
		rc = HOST_PRICE_ERROR;
		goto out;
	}
	r->priced = priced == 0;
	usage_capacity(db, cap);
	if (cap->cpus <= 0 || cap->memory_gib <= 0) {
		rc = COST_NO_CAPACITY;
		goto out;
	}
	/* Whole run's processes, or every process of the window. */
	if (usage_scan(db, r->from_ns, r->to_ns, 0, add, cq) != 0) {
		rc = -1;
		goto out;
	}
	r->tally = &cq->tally;
	r->observed_ns = cost_observed_ns(db, r->from_ns, r->to_ns);
	/* What the work used was seen; the rest of the host's time is billed only
	 * where a collector saw it, unless the whole window is asked for. */
	int64_t billed = r->since_window && !r->whole_window && r->observed_ns >= 0
			     ? r->observed_ns
			     : r->to_ns - r->from_ns;
	double seconds = (double)(billed > 0 ? billed : 1) / 1e9;
	cost_split(&cq->tally, r->priced ? r->price.usd_per_hour : 3600.0 / seconds, seconds,
		   cap->cpus, cap->memory_gib, r->cpu_weight, &r->totals);
out:
	prices_free(&table);
	return rc;
}

json_t *cost_json(const struct cost_report *r)
{
	json_t *rows = json_array();

	/* Unpriced: the same document with every dollar null. */
#define USD(v) (r->priced ? json_real(v) : json_null())
	for (size_t i = 0; i < r->tally->n; i++) {
		const struct cost_bucket *b = &r->tally->items[i];
		json_array_append_new(rows, json_pack("{s:s, s:i, s:I, s:f, s:o, s:f}", "key",
						      b->key, "processes", (int)b->processes,
						      "cpu_ns", cost_cpu_ns(b->cpu_s),
						      "memory_gib_hours", b->mem_gib_s / 3600.0,
						      "usd", USD(b->usd), "share", b->share));
	}
	json_t *doc =
	    json_pack("{s:s, s:I, s:I, s:o, s:o, s:f, s:i, s:f, s:o, s:o, s:o, s:o, s:f}", "by",
		      r->by, "from_ns", (json_int_t)r->from_ns, "to_ns", (json_int_t)r->to_ns,
		      "usd_per_hour", USD(r->price.usd_per_hour), "price_source",
		      r->priced ? json_string(r->price.source) : json_null(), "cpu_weight",
		      r->cpu_weight, "cpus", r->capacity.cpus, "memory_gib", r->capacity.memory_gib,
		      "total_usd", USD(r->totals.total_usd), "breakdown", rows, "idle_usd",
		      USD(r->totals.idle_usd), "work_usd", USD(r->totals.work_usd), "idle_share",
		      r->totals.total_usd > 0 ? r->totals.idle_usd / r->totals.total_usd : 0);
#undef USD
	json_object_set_new(doc, "observed_ns",
			    r->observed_ns >= 0 ? json_integer(r->observed_ns) : json_null());
	json_object_set_new(doc, "whole_window", json_boolean(r->whole_window));
	if (r->run)
		json_object_set_new(doc, "run", cli_run_object(r->db, r->run));
	return doc;
}
