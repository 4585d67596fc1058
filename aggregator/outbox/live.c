/*
 * Live copies of what runs now, and tombstones of what the aggregator takes
 * back (docs/shipping.md, "Live rows and tombstones"). At the sink a record is
 * its newest version: a live copy while the row runs, the final row once it
 * ended, a tombstone (withdrawn) once the host's database no longer holds it.
 *
 * temp.live_now holds the running rows as JSON at this tick, temp.live_sent
 * those of the last tick: only a row that changed is queued again. Both are
 * temporary (gone with the aggregator: a successor sends every running row
 * once more, which the sink takes as the same record).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/outbox/internal.h"
#include "common/log.h"

/* A row of this tick that its last live copy does not already say. */
#define CHANGED                                                                                    \
	"NOT EXISTS (SELECT 1 FROM temp.live_sent s WHERE s.kind = n.kind AND s.record_key = "     \
	"n.record_key AND s.payload = n.payload)"
#define LIVE_KINDS "kind IN ('processes', 'steps', 'runs')"

static const struct {
	const char *table, *where;
} running[3] = {
    {"processes", "state = 'running' AND run_id IS NOT NULL"},
    {"steps", "status = 'running'"},
    {"runs", "end_ns IS NULL AND (status IS NULL OR status = 'running')"},
};

static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) == SQLITE_OK)
		return 0;
	log_error("outbox: live copies: %s", sqlite3_errmsg(db));
	return -1;
}

/*
 * A running process's row says only how it started until it ends (its CPU and I/O come
 * with its exit), so its live copy carries its numbers so far: its newest sample's
 * counters and the peak of its sampled memory. Each tick that adds a sample changes the
 * payload, so the copy is refreshed while the process runs; its final row replaces it.
 */
static const char *const sampled_so_far[] = {
    "cpu_user_ns", "cpu_sys_ns", "rchar",	 "wchar",	 "read_bytes", "write_bytes",
    "runq_ns",	   "iowait_ns",	 "net_tx_bytes", "net_rx_bytes", "vol_ctxsw",  "invol_ctxsw",
};
#define SAMPLED_SO_FAR (sizeof(sampled_so_far) / sizeof(*sampled_so_far))

/* The SELECT of a running process's live copy, its payload the row's JSON json. */
static void process_so_far(char *sql, size_t len, const char *json, const char *where)
{
	size_t n =
	    (size_t)snprintf(sql, len,
			     "INSERT OR REPLACE INTO temp.live_now (kind, record_key, payload) "
			     "SELECT 'processes', CAST(id AS TEXT), json_set(payload");
	for (size_t i = 0; i < SAMPLED_SO_FAR && n < len; i++)
		n += (size_t)snprintf(sql + n, len - n,
				      ", '$.%s', coalesce(json_extract(newest, '$[%zu]'), "
				      "json_extract(payload, '$.%s'))",
				      sampled_so_far[i], i, sampled_so_far[i]);
	if (n < len)
		n += (size_t)snprintf(sql + n, len - n,
				      ", '$.max_rss_kb', coalesce(peak_rss, json_extract(payload, "
				      "'$.max_rss_kb'))) FROM (SELECT id, %s AS payload, (SELECT "
				      "json_array(",
				      json);
	for (size_t i = 0; i < SAMPLED_SO_FAR && n < len; i++)
		n += (size_t)snprintf(sql + n, len - n, "%sm.%s", i ? ", " : "", sampled_so_far[i]);
	if (n < len)
		snprintf(
		    sql + n, len - n,
		    ") FROM samples m WHERE m.process_id = processes.id ORDER BY m.ts_ns DESC "
		    "LIMIT 1) AS newest, (SELECT max(m.rss_kb) FROM samples m WHERE m.process_id "
		    "= processes.id) AS peak_rss FROM processes WHERE %s)",
		    where);
}

static int prepare_running(sqlite3 *db, int k, sqlite3_stmt **st)
{
	char *json = outbox_row_json(db, running[k].table);
	size_t len = json ? strlen(json) + 4096 : 0;
	char *sql = json ? malloc(len) : NULL;
	int rc = -1;

	if (sql && !strcmp(running[k].table, "processes"))
		process_so_far(sql, len, json, running[k].where);
	else if (sql)
		snprintf(sql, len,
			 "INSERT OR REPLACE INTO temp.live_now (kind, record_key, payload) SELECT "
			 "'%s', CAST(id AS TEXT), %s FROM %s WHERE %s",
			 running[k].table, json, running[k].table, running[k].where);
	if (sql)
		rc = prepare(db, sql, st);
	free(sql);
	free(json);
	return rc;
}

int outbox_live_open(struct outbox *o)
{
	sqlite3 *db = o->db;

	if (sqlite3_exec(db,
			 "CREATE TEMP TABLE IF NOT EXISTS live_now (kind TEXT, record_key TEXT, "
			 "payload TEXT, PRIMARY KEY (kind, record_key));"
			 "CREATE TEMP TABLE IF NOT EXISTS live_sent (kind TEXT, record_key TEXT, "
			 "payload TEXT, PRIMARY KEY (kind, record_key))",
			 NULL, NULL, NULL) != SQLITE_OK) {
		log_error("outbox: live copies: %s", sqlite3_errmsg(db));
		return -1;
	}
	for (int k = 0; k < 3; k++)
		if (prepare_running(db, k, &o->live_now[k]) != 0)
			return -1;
	/* ?1 of the DELETEs: the shipper's attempt_through (a batch being sent stays as
	 * it is); of the INSERTs: now. ?2, ?3: a withdrawn row's table and id. */
	const struct {
		const char *sql;
		sqlite3_stmt **st;
	} statements[] = {
	    {"DELETE FROM temp.live_now", &o->live_clear},
	    {"DELETE FROM outbox WHERE id > ?1 AND priority = 1 AND " LIVE_KINDS
	     " AND (kind, record_key) IN (SELECT kind, record_key FROM temp.live_now n "
	     "WHERE " CHANGED ")",
	     &o->live_coalesce},
	    {"INSERT INTO outbox (kind, record_key, priority, created_ns, payload) SELECT kind, "
	     "record_key, 1, ?1, payload FROM temp.live_now n WHERE " CHANGED
	     " ORDER BY kind, CAST(record_key AS INTEGER)",
	     &o->live_put},
	    {"INSERT INTO outbox (kind, record_key, priority, created_ns, payload) SELECT ?2, "
	     "CAST(?3 AS TEXT), 3, ?1, json_object('id', ?3, '_withdrawn', 1, 'start_ns', "
	     /* the row's start, still here: the sink partitions by it (docs/shipping.md) */
	     "CASE ?2 WHEN 'processes' THEN (SELECT start_ns FROM processes WHERE id = ?3) "
	     "WHEN 'steps' THEN (SELECT start_ns FROM steps WHERE id = ?3) WHEN 'runs' THEN "
	     "(SELECT start_ns FROM runs WHERE id = ?3) END) WHERE ?2 != "
	     "'processes' OR EXISTS (SELECT 1 FROM temp.live_sent WHERE kind = ?2 AND record_key = "
	     "CAST(?3 AS TEXT)) OR EXISTS (SELECT 1 FROM processes WHERE id = ?3 AND run_id IS NOT "
	     "NULL)",
	     &o->withdraw},
	    {"DELETE FROM outbox WHERE id > ?1 AND priority = 1 AND kind = ?2 AND record_key = "
	     "CAST(?3 AS TEXT)",
	     &o->withdraw_live},
	    {"DELETE FROM temp.live_sent WHERE kind = ?2 AND record_key = CAST(?3 AS TEXT)",
	     &o->live_forget},
	};
	for (size_t i = 0; i < sizeof(statements) / sizeof(*statements); i++)
		if (prepare(db, statements[i].sql, statements[i].st) != 0)
			return -1;
	return 0;
}

void outbox_live_close(struct outbox *o)
{
	sqlite3_finalize(o->live_clear);
	for (int k = 0; k < 3; k++)
		sqlite3_finalize(o->live_now[k]);
	sqlite3_finalize(o->live_coalesce);
	sqlite3_finalize(o->live_put);
	sqlite3_finalize(o->withdraw);
	sqlite3_finalize(o->withdraw_live);
	sqlite3_finalize(o->live_forget);
}

/* Steps st bound to (now or the attempt mark, kind, id); 0 or -1 logged. */
static int run(struct outbox *o, sqlite3_stmt *st, int64_t first, const char *kind, int64_t id)
{
	sqlite3_bind_int64(st, 1, first);
	if (kind)
		sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, id);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc == SQLITE_DONE)
		return 0;
	log_error("outbox: live copies: %s", sqlite3_errmsg(o->db));
	return -1;
}

int outbox_add_live(struct outbox *o, int64_t now_ns)
{
	int64_t sending = outbox_shipper_mark(o, "attempt_through");

	if (run(o, o->live_clear, 0, NULL, 0) != 0)
		return -1;
	for (int k = 0; k < 3; k++)
		if (run(o, o->live_now[k], 0, NULL, 0) != 0)
			return -1;
	if (run(o, o->live_coalesce, sending, NULL, 0) != 0 ||
	    run(o, o->live_put, now_ns, NULL, 0) != 0)
		return -1;
	o->queued += (uint64_t)sqlite3_changes(o->db);
	if (sqlite3_exec(o->db,
			 "DELETE FROM temp.live_sent; INSERT INTO temp.live_sent SELECT kind, "
			 "record_key, payload FROM temp.live_now",
			 NULL, NULL, NULL) != SQLITE_OK) {
		log_error("outbox: live copies: %s", sqlite3_errmsg(o->db));
		return -1;
	}
	return 0;
}

int outbox_withdraw(struct outbox *o, enum outbox_kind kind, int64_t id, int64_t now_ns)
{
	/* Only these are taken back (outbox_table is outbox.c's, which calls us). */
	const char *table = kind == OUTBOX_PROCESSES ? "processes"
			    : kind == OUTBOX_STEPS   ? "steps"
			    : kind == OUTBOX_RUNS    ? "runs"
						     : NULL;

	if (!table) {
		log_error("outbox: a %d record cannot be withdrawn", (int)kind);
		return -1;
	}

	if (run(o, o->withdraw, now_ns, table, id) != 0)
		return -1;
	o->queued += (uint64_t)sqlite3_changes(o->db);
	return run(o, o->withdraw_live, outbox_shipper_mark(o, "attempt_through"), table, id) ||
		       run(o, o->live_forget, 0, table, id)
		   ? -1
		   : 0;
}
