#include "cli/model/health.h"

#include <stdio.h>
#include <string.h>

#include "cli/db/fleet.h"
#include "cli/render/jsonfield.h"
#include "common/timeutil.h"

/* Why the newest collector does not watch the host as it should; NULL if it does. */
static const char *newest_collector_problem(const json_t *s, int64_t now_epoch_ns)
{
	const json_t *probes = json_object_get(s, "probes");

	for (size_t k = 0; k < json_array_size(probes); k++)
		if (!strcmp(jstr(json_array_get(probes, k), "state"), "missing"))
			return "a probe is missing (see probes below)";
	if (!jint(s, "final") && now_epoch_ns - jint(s, "last_seen_ns") > HEALTH_STALE_NS)
		return "no collector heard from in the last minute";
	return NULL;
}

static const char *lost_problem(const struct health_input *in)
{
	if (json_array_size(in->losses))
		return "events were lost (see the losses below)";
	/* Events the aggregator had no memory for are lost; the others are what
	 * correlation meets on any busy host (docs/schema.md). */
	if (in->agg && jint(in->agg, "events_skipped"))
		return "the aggregator skipped events for want of memory";
	for (size_t i = 0; i < json_array_size(in->streams); i++) {
		const json_t *s = json_array_get(in->streams, i);
		if (jint(s, "kernel_drops") || jint(s, "collector_drops") || jint(s, "seq_gaps"))
			return "a collector lost events (see lost: below)";
		if (jint(s, "blind_processes"))
			return "a collector restart left a blind window (see collectors below)";
		const char *why = i == 0 ? newest_collector_problem(s, in->now_epoch_ns) : NULL;
		if (why)
			return why;
	}
	return NULL;
}

static const char *shipping_problem(const json_t *ship, char *buf, size_t size)
{
	const json_t *age = json_object_get(ship, "oldest_age_s");
	double waited = json_is_number(age) ? json_number_value(age) : 0;

	if (jint(ship, "dropped_records") || jint(ship, "dead_letter_records"))
		return "the shipper dropped records or set them aside";
	if (jint(ship, "last_error_ns") > jint(ship, "last_success_ns") &&
	    waited > HEALTH_SINK_FAILING_S) {
		snprintf(buf, size, "the sink is failing, the oldest record has waited %.0f s: %s",
			 waited, jstr(ship, "last_error"));
		return buf;
	}
	if (json_object_get(ship, "delivered_through") && waited > HEALTH_SHIP_STALLED_S) {
		snprintf(
		    buf, size,
		    "records have waited %.0f min for the shipper (is tracer-shipper running?)",
		    waited / 60);
		return buf;
	}
	return NULL;
}

const char *health_problem(const struct health_input *in, char *buf, size_t size)
{
	const char *why = lost_problem(in);

	if (why)
		return why;
	if (in->db_check && strcmp(in->db_check, "ok") != 0) {
		snprintf(buf, size, "the database is damaged: %s", in->db_check);
		return buf;
	}
	if (in->db_read_only) {
		snprintf(buf, size,
			 "the database cannot be written: %s, so the aggregator refuses it",
			 in->db_read_only);
		return buf;
	}
	if (in->db_free_bytes >= 0 && in->db_free_bytes < HEALTH_MIN_FREE_BYTES) {
		snprintf(buf, size,
			 "%.1f MiB free on the database's filesystem: the aggregator holds "
			 "what it cannot write, and the collector drops when that fills",
			 (double)in->db_free_bytes / (1 << 20));
		return buf;
	}
	return in->shipping ? shipping_problem(in->shipping, buf, size) : NULL;
}

int health_collector_writing(sqlite3 *db)
{
	sqlite3_stmt *q;
	int64_t last = 0;

	if (sqlite3_prepare_v2(db, "SELECT max(last_seen_ns) FROM collector_stats WHERE final = 0",
			       -1, &q, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(q) == SQLITE_ROW)
		last = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return last && (int64_t)now_realtime_ns() - last < HEALTH_STALE_NS;
}

/* The liveness of run_id (see HEALTH_RUN_WATCHED_SQL); -1 if it cannot be read. */
static int health_run_liveness(sqlite3 *db, int64_t run_id, int64_t now_epoch_ns,
			       struct run_liveness *out)
{
	sqlite3_stmt *q;
	int rc = -1;

	*out = (struct run_liveness){0};
	if (sqlite3_prepare_v2(
		db,
		"SELECT " HEALTH_RUN_WATCHED_SQL("?2") ", " HEALTH_RUN_LAST_HEARD_SQL
						       " FROM runs r WHERE r.id = ?1",
		-1, &q, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(q, 1, run_id);
	sqlite3_bind_int64(q, 2, now_epoch_ns - liveness_stale_ns());
	if (sqlite3_step(q) == SQLITE_ROW) {
		out->watched = sqlite3_column_int(q, 0) != 0;
		out->last_heard_ns = sqlite3_column_int64(q, 1);
		rc = 0;
	}
	sqlite3_finalize(q);
	return rc;
}

int64_t health_so_far_ns(const struct run_liveness *l, int64_t start_ns, int64_t now_epoch_ns)
{
	int64_t until = l->watched ? now_epoch_ns : l->last_heard_ns;

	return until > start_ns ? until - start_ns : 0;
}

void health_add_liveness(sqlite3 *db, json_t *run)
{
	int64_t now = (int64_t)now_realtime_ns();
	struct run_liveness l;

	if (health_run_liveness(db, jint(run, "id"), now, &l) != 0)
		return;
	json_object_set_new(run, "watched", json_boolean(l.watched));
	json_object_set_new(run, "last_heard_ns",
			    l.last_heard_ns ? json_integer(l.last_heard_ns) : json_null());
	json_object_set_new(run, "so_far_ns",
			    json_integer(health_so_far_ns(&l, jint(run, "start_ns"), now)));
	/* Over the fleet an open run nobody watches is a host that stopped reporting:
	 * the records missing are that host's. */
	if (fleet_active() && !l.watched && !jhas(run, "end_ns"))
		json_object_set_new(run, "records_missing",
				    json_string(*jstr(run, "hostname") ? jstr(run, "hostname")
								       : jstr(run, "host_id")));
}
