#include "aggregator/outbox/outbox.h"

#include "aggregator/outbox/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/timeutil.h"

struct kind_spec {
	const char *table;
	const char *key;   /* SQL for record_key */
	const char *where; /* selects the row */
	int priority;
};

static const struct kind_spec kinds[OUTBOX_KINDS] = {
    [OUTBOX_PROCESSES] = {"processes", "CAST(id AS TEXT)", "id = ?2", 2},
    [OUTBOX_STEPS] = {"steps", "CAST(id AS TEXT)", "id = ?2", 3},
    [OUTBOX_RUNS] = {"runs", "CAST(id AS TEXT)", "id = ?2", 3},
    [OUTBOX_SIGNALS] = {"signals", "CAST(id AS TEXT)", "id = ?2", 3},
    [OUTBOX_SAMPLES] = {"samples", "process_id || ':' || ts_ns", "process_id = ?2 AND ts_ns = ?3",
			0},
    [OUTBOX_HOST_SAMPLES] = {"host_samples", "CAST(ts_ns AS TEXT)", "ts_ns = ?2", 1},
    [OUTBOX_COLLECTOR_STATS] = {"collector_stats", "stream_id", "stream_id = ?4", 3},
    [OUTBOX_TOOLS] = {"tools", "CAST(id AS TEXT)", "id = ?2", 3},
    [OUTBOX_BATCH_SUBMISSIONS] = {"batch_submissions", "CAST(id AS TEXT)", "id = ?2", 3},
    [OUTBOX_BATCH_JOBS] = {"batch_jobs", "scheduler || ':' || job_id", "rowid = ?2", 3},
    /* As cheap to lose as a process's sample: a gap only narrows what RAPL measures. */
    [OUTBOX_ENERGY_SAMPLES] = {"energy_samples", "host_id || ':' || zone || ':' || ts_ns",
			       "host_id = ?4 AND zone = ?2 AND ts_ns = ?3", 0},
};

const char *outbox_table(enum outbox_kind kind)
{
	return (unsigned)kind < OUTBOX_KINDS ? kinds[kind].table : "?";
}

/* "INSERT INTO outbox ... SELECT <the row as JSON> FROM <table> WHERE <where>". */
static int prepare_put(sqlite3 *db, const struct kind_spec *k, const char *where,
		       sqlite3_stmt **out)
{
	char *json = outbox_row_json(db, k->table);
	size_t len = (json ? strlen(json) : 0) + strlen(where) + 512;
	char *sql = json ? malloc(len) : NULL;
	int rc;

	if (!sql) {
		free(json);
		log_error("outbox: cannot build the statement for %s", k->table);
		return -1;
	}
	snprintf(sql, len,
		 "INSERT INTO outbox (kind, record_key, priority, created_ns, payload) SELECT "
		 "'%s', %s, %d, ?1, %s FROM %s WHERE %s",
		 k->table, k->key, k->priority, json, k->table, where);
	rc = sqlite3_prepare_v2(db, sql, -1, out, NULL);
	free(sql);
	free(json);
	if (rc != SQLITE_OK) {
		log_error("outbox: %s: %s", k->table, sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

/* "UPDATE outbox SET payload = <the process row as JSON> WHERE it is that row's record". */
static int prepare_refresh(sqlite3 *db, sqlite3_stmt **out)
{
	char *json = outbox_row_json(db, "processes");
	size_t len = (json ? strlen(json) : 0) + 512;
	char *sql = json ? malloc(len) : NULL;
	int rc = SQLITE_NOMEM;

	if (sql) {
		snprintf(
		    sql, len,
		    "UPDATE outbox SET payload = (SELECT %s FROM processes WHERE id = ?1) WHERE "
		    "kind = 'processes' AND record_key = CAST(?1 AS TEXT) AND EXISTS (SELECT 1 "
		    "FROM processes WHERE id = ?1)",
		    json);
		rc = sqlite3_prepare_v2(db, sql, -1, out, NULL);
	}
	free(sql);
	free(json);
	if (rc != SQLITE_OK)
		log_error("outbox: cannot build the refresh statement: %s", sqlite3_errmsg(db));
	return rc == SQLITE_OK ? 0 : -1;
}

int outbox_refresh_process(struct outbox *o, int64_t process_id)
{
	sqlite3_bind_int64(o->refresh_process, 1, process_id);
	int rc = sqlite3_step(o->refresh_process);
	sqlite3_reset(o->refresh_process);
	if (rc != SQLITE_DONE) {
		log_error("outbox: refreshing process %lld: %s", (long long)process_id,
			  sqlite3_errmsg(o->db));
		return -1;
	}
	return 0;
}

int outbox_release_held(struct outbox *o)
{
	sqlite3_stmt *st;
	int rc;

	if (prepare_put(o->db, &kinds[OUTBOX_SAMPLES],
			"process_id IN (SELECT process_id FROM outbox_held)", &st) != 0)
		return -1;
	sqlite3_bind_int64(st, 1, (int64_t)now_realtime_ns());
	rc = sqlite3_exec(o->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
	if (rc == SQLITE_OK)
		o->queued += (uint64_t)sqlite3_changes(o->db);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(o->db, "DELETE FROM outbox_held; COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		log_error("outbox: queueing held samples: %s", sqlite3_errmsg(o->db));
		sqlite3_exec(o->db, "ROLLBACK", NULL, NULL, NULL);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : -1;
}

int outbox_open(struct outbox *o, sqlite3 *db, uint64_t max_bytes, const char *shipper_state)
{
	memset(o, 0, sizeof(*o));
	o->db = db;
	o->max_bytes = max_bytes;
	o->shipper_state = shipper_state;
	for (int k = 0; k < OUTBOX_KINDS; k++) {
		if (prepare_put(db, &kinds[k], kinds[k].where, &o->put[k]) != 0) {
			outbox_close(o);
			return -1;
		}
	}
	if (prepare_put(db, &kinds[OUTBOX_SAMPLES], "process_id = ?2", &o->put_samples_of) != 0 ||
	    prepare_refresh(db, &o->refresh_process) != 0 || outbox_release_held(o) != 0 ||
	    outbox_live_open(o) != 0 || outbox_requeue_open(o) != 0) {
		outbox_close(o);
		return -1;
	}
	if (sqlite3_prepare_v2(db, "SELECT bytes FROM outbox_size", -1, &o->size, NULL) !=
		SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO outbox_held (process_id) VALUES (?1)", -1,
			       &o->hold, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "DELETE FROM outbox_held WHERE process_id = ?1", -1, &o->unhold,
			       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(
		db,
		"DELETE FROM outbox WHERE id IN (SELECT id FROM outbox ORDER BY priority, "
		"id LIMIT 256) RETURNING CASE WHEN priority = 1 AND kind IN ('processes', "
		"'steps', 'runs') THEN kind || ' (live)' ELSE kind END, length(payload)",
		-1, &o->trim, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(
		db,
		"INSERT INTO outbox_drops (kind, records, bytes, last_ns) VALUES (?1, 1, "
		"?2, ?3) ON CONFLICT(kind) DO UPDATE SET records = records + 1, bytes = "
		"bytes + ?2, last_ns = ?3",
		-1, &o->count_drop, NULL) != SQLITE_OK) {
		log_error("outbox: %s", sqlite3_errmsg(db));
		outbox_close(o);
		return -1;
	}
	return 0;
}

void outbox_close(struct outbox *o)
{
	for (int k = 0; k < OUTBOX_KINDS; k++)
		sqlite3_finalize(o->put[k]);
	sqlite3_finalize(o->put_samples_of);
	sqlite3_finalize(o->refresh_process);
	sqlite3_finalize(o->hold);
	sqlite3_finalize(o->unhold);
	sqlite3_finalize(o->size);
	sqlite3_finalize(o->trim);
	sqlite3_finalize(o->count_drop);
	outbox_live_close(o);
	outbox_requeue_close(o);
	if (o->state)
		sqlite3_close(o->state);
	memset(o, 0, sizeof(*o));
}

static int forget_delivered(struct outbox *o)
{
	int64_t through = outbox_shipper_mark(o, "delivered_through");
	char sql[128];

	if (through <= o->forgotten_through)
		return 0;
	snprintf(sql, sizeof(sql), "DELETE FROM outbox WHERE id <= %lld", (long long)through);
	if (sqlite3_exec(o->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
		log_error("outbox: forgetting delivered records: %s", sqlite3_errmsg(o->db));
		return -1;
	}
	o->forgotten_through = through;
	return 0;
}

/* The kind's statement binds (now, a, b, text): which key a, b and text are is the kind's. */
static int add(struct outbox *o, enum outbox_kind kind, int64_t a, int64_t b, const char *text,
	       int64_t now_ns)
{
	sqlite3_stmt *st = o->put[kind];

	sqlite3_bind_int64(st, 1, now_ns);
	sqlite3_bind_int64(st, 2, a);
	sqlite3_bind_int64(st, 3, b);
	if (text)
		sqlite3_bind_text(st, 4, text, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 4);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE) {
		log_error("outbox: queueing %s: %s", kinds[kind].table, sqlite3_errmsg(o->db));
		return -1;
	}
	o->queued++;
	return 0;
}

int outbox_add_process(struct outbox *o, int64_t process_id, int64_t now_ns)
{
	return add(o, OUTBOX_PROCESSES, process_id, 0, NULL, now_ns);
}

int outbox_requeue_processes(struct outbox *o, const int64_t *ids, size_t n, int64_t since,
			     int64_t now_ns)
{
	int64_t sending = outbox_shipper_mark(o, "attempt_through");
	int64_t after = sending > since ? sending : since;

	for (size_t i = 0; i < n; i++) {
		int rewritten = outbox_rewrite_process(o, ids[i], after);
		if (rewritten < 0 || (rewritten == 0 && outbox_add_process(o, ids[i], now_ns) != 0))
			return -1;
	}
	return 0;
}

int outbox_add_step(struct outbox *o, int64_t step_id, int64_t now_ns)
{
	return add(o, OUTBOX_STEPS, step_id, 0, NULL, now_ns);
}

int outbox_add_run(struct outbox *o, int64_t run_id, int64_t now_ns)
{
	return add(o, OUTBOX_RUNS, run_id, 0, NULL, now_ns);
}

int outbox_add_signal(struct outbox *o, int64_t signal_id, int64_t now_ns)
{
	return add(o, OUTBOX_SIGNALS, signal_id, 0, NULL, now_ns);
}

int outbox_add_tool(struct outbox *o, int64_t tool_id, int64_t now_ns)
{
	return add(o, OUTBOX_TOOLS, tool_id, 0, NULL, now_ns);
}

int outbox_add_sample(struct outbox *o, int64_t process_id, int64_t ts_epoch_ns, int64_t now_ns)
{
	return add(o, OUTBOX_SAMPLES, process_id, ts_epoch_ns, NULL, now_ns);
}

int outbox_add_host_sample(struct outbox *o, int64_t ts_epoch_ns, int64_t now_ns)
{
	return add(o, OUTBOX_HOST_SAMPLES, ts_epoch_ns, 0, NULL, now_ns);
}

int outbox_add_energy_sample(struct outbox *o, const char *host_id, int64_t zone,
			     int64_t ts_epoch_ns, int64_t now_ns)
{
	return add(o, OUTBOX_ENERGY_SAMPLES, zone, ts_epoch_ns, host_id, now_ns);
}

int outbox_add_collector_stats(struct outbox *o, const char *stream_id, int64_t now_ns)
{
	return add(o, OUTBOX_COLLECTOR_STATS, 0, 0, stream_id, now_ns);
}

int outbox_add_batch_submission(struct outbox *o, int64_t submission_id, int64_t now_ns)
{
	return add(o, OUTBOX_BATCH_SUBMISSIONS, submission_id, 0, NULL, now_ns);
}

int outbox_add_batch_job(struct outbox *o, int64_t rowid, int64_t now_ns)
{
	return add(o, OUTBOX_BATCH_JOBS, rowid, 0, NULL, now_ns);
}

/* Runs a statement bound to one process id. */
static int step_with_id(struct outbox *o, sqlite3_stmt *st, int64_t process_id, const char *what)
{
	sqlite3_bind_int64(st, 1, process_id);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		log_error("outbox: %s: %s", what, sqlite3_errmsg(o->db));
		return -1;
	}
	return 0;
}

int outbox_hold_samples(struct outbox *o, int64_t process_id)
{
	return step_with_id(o, o->hold, process_id, "holding samples");
}

int outbox_release_samples(struct outbox *o, int64_t process_id, int64_t now_ns)
{
	sqlite3_stmt *st = o->put_samples_of;

	sqlite3_bind_int64(st, 1, now_ns);
	sqlite3_bind_int64(st, 2, process_id);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		log_error("outbox: queueing held samples: %s", sqlite3_errmsg(o->db));
		return -1;
	}
	o->queued += (uint64_t)sqlite3_changes(o->db);
	return step_with_id(o, o->unhold, process_id, "releasing samples");
}

static int64_t queued_bytes(struct outbox *o)
{
	int64_t bytes = 0;

	if (sqlite3_step(o->size) == SQLITE_ROW)
		bytes = sqlite3_column_int64(o->size, 0);
	sqlite3_reset(o->size);
	return bytes;
}

int outbox_trim(struct outbox *o, int64_t now_ns)
{
	uint64_t now = (uint64_t)now_ns;
	if (now >= o->next_check_ns) {
		o->next_check_ns = now + 1000000000ULL;
		if (forget_delivered(o) != 0)
			return -1;
	}
	int64_t bytes = queued_bytes(o);
	uint64_t dropped = 0;

	if (!o->max_bytes || bytes <= (int64_t)o->max_bytes)
		return 0;
	/* Down to 90% of the limit, so that trimming is not needed on every commit. */
	while (bytes > (int64_t)(o->max_bytes / 10 * 9)) {
		unsigned n = 0;
		while (sqlite3_step(o->trim) == SQLITE_ROW) {
			const char *kind = (const char *)sqlite3_column_text(o->trim, 0);
			int64_t len = sqlite3_column_int64(o->trim, 1);
			sqlite3_bind_text(o->count_drop, 1, kind, -1, SQLITE_TRANSIENT);
			sqlite3_bind_int64(o->count_drop, 2, len);
			sqlite3_bind_int64(o->count_drop, 3, now_ns);
			int rc = sqlite3_step(o->count_drop);
			sqlite3_reset(o->count_drop);
			if (rc != SQLITE_DONE) {
				sqlite3_reset(o->trim);
				return -1;
			}
			n++;
		}
		if (sqlite3_reset(o->trim) != SQLITE_OK)
			return -1;
		if (n == 0)
			break;
		dropped += n;
		bytes = queued_bytes(o);
	}
	o->dropped += dropped;
	log_warn("outbox full (limit %llu bytes): dropped %llu records, least valuable first (%llu "
		 "dropped since start; see outbox_drops)",
		 (unsigned long long)o->max_bytes, (unsigned long long)dropped,
		 (unsigned long long)o->dropped);
	return 0;
}

bool outbox_gate_open(const char *when_path)
{
	return !when_path || access(when_path, F_OK) == 0;
}
