#include "aggregator/store/retention.h"

#include <sqlite3.h>

#include "aggregator/store/internal.h"
#include "common/log.h"

static int64_t pragma_number(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

int64_t store_used_bytes(struct store *s)
{
	return (pragma_number(s->db, "PRAGMA page_count") -
		pragma_number(s->db, "PRAGMA freelist_count")) *
	       pragma_number(s->db, "PRAGMA page_size");
}

/* Runs sql with ?1 bound to cutoff; the rows it changed, or -1. */
static int64_t run_with_cutoff(sqlite3 *db, const char *sql, int64_t cutoff)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		log_error("retention: %s: %s", sql, sqlite3_errmsg(db));
		return -1;
	}
	sqlite3_bind_int64(st, 1, cutoff);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		log_error("retention: %s: %s", sql, sqlite3_errmsg(db));
		return -1;
	}
	return sqlite3_changes(db);
}

/* Everything that ended before cutoff and may go, gone; counts added to out. */
static int prune_before(sqlite3 *db, int64_t cutoff, struct prune_result *out)
{
	static const char *const setup[] = {
	    "DELETE FROM prune_runs",
	    ("INSERT INTO prune_runs SELECT id FROM runs WHERE end_ns IS NOT NULL AND end_ns < ?1 "
	     "AND NOT EXISTS (SELECT 1 FROM processes p WHERE p.run_id = runs.id AND "
	     "(p.end_ns IS NULL OR p.end_ns >= ?1 OR p.id IN (SELECT process_id FROM "
	     "outbox_held)))"),
	    "DELETE FROM prune_procs",
	    "INSERT INTO prune_procs SELECT id FROM processes WHERE run_id IN prune_runs",
	    ("INSERT OR IGNORE INTO prune_procs SELECT id FROM processes WHERE run_id IS NULL "
	     "AND end_ns IS NOT NULL AND end_ns < ?1 AND id NOT IN (SELECT process_id FROM "
	     "outbox_held)"),
	    "DELETE FROM files WHERE process_id IN prune_procs",
	    "DELETE FROM oom_kills WHERE process_id IN prune_procs",
	    "DELETE FROM signals WHERE run_id IN prune_runs OR process_id IN prune_procs",
	    ("DELETE FROM container_link_candidates WHERE link_id IN (SELECT id FROM "
	     "container_links WHERE run_id IN prune_runs OR (run_id IS NULL AND "
	     "first_start_ns < ?1))"),
	    ("DELETE FROM container_links WHERE run_id IN prune_runs OR (run_id IS NULL AND "
	     "first_start_ns < ?1)"),
	    ("DELETE FROM batch_submissions WHERE run_id IN prune_runs"),
	    ("DELETE FROM batch_jobs WHERE run_id IN prune_runs OR (run_id IS NULL AND "
	     "first_ns < ?1)"),
	};
	for (size_t i = 0; i < sizeof(setup) / sizeof(setup[0]); i++)
		if (run_with_cutoff(db, setup[i], cutoff) < 0)
			return -1;
	int64_t n;
	if ((n = run_with_cutoff(db,
				 "DELETE FROM samples WHERE process_id IN prune_procs OR "
				 "(ts_ns < ?1 AND process_id NOT IN (SELECT process_id FROM "
				 "outbox_held))",
				 cutoff)) < 0)
		return -1;
	out->samples += n;
	if ((n = run_with_cutoff(db, "DELETE FROM processes WHERE id IN prune_procs", cutoff)) < 0)
		return -1;
	out->processes += n;
	if (run_with_cutoff(db, "DELETE FROM steps WHERE run_id IN prune_runs", cutoff) < 0)
		return -1;
	if ((n = run_with_cutoff(db, "DELETE FROM runs WHERE id IN prune_runs", cutoff)) < 0)
		return -1;
	out->runs += n;
	if ((n = run_with_cutoff(db, "DELETE FROM host_samples WHERE ts_ns < ?1", cutoff)) < 0)
		return -1;
	out->host_samples += n;
	if (run_with_cutoff(db, "DELETE FROM energy_samples WHERE ts_ns < ?1", cutoff) < 0)
		return -1;
	return 0;
}

/*
 * Just after the end of the last of the first k eighths of the finished
 * processes, oldest first: cuts follow the data, not the calendar, so a
 * burst of work is not taken whole when part of it would do. INT64_MAX past
 * the last.
 */
static int64_t cut_after_eighths(sqlite3 *db, int k)
{
	int64_t n = pragma_number(db, "SELECT count(*) FROM processes WHERE end_ns IS NOT NULL");
	sqlite3_stmt *st;
	int64_t cut = INT64_MAX;

	if (n <= 0 || k >= 8 ||
	    sqlite3_prepare_v2(
		db,
		"SELECT end_ns FROM processes WHERE end_ns IS NOT NULL ORDER BY end_ns "
		"LIMIT 1 OFFSET ?1",
		-1, &st, NULL) != SQLITE_OK)
		return cut;
	sqlite3_bind_int64(st, 1, n * k / 8);
	if (sqlite3_step(st) == SQLITE_ROW)
		cut = sqlite3_column_int64(st, 0) + 1;
	sqlite3_finalize(st);
	return cut;
}

/* The start of the oldest data retention could remove; INT64_MAX if none. */
static int64_t oldest_ns(sqlite3 *db)
{
	int64_t a = pragma_number(db, "SELECT coalesce(min(start_ns), 9223372036854775807) "
				      "FROM processes WHERE end_ns IS NOT NULL");
	int64_t b = pragma_number(db, "SELECT coalesce(min(ts_ns), 9223372036854775807) FROM "
				      "host_samples");
	return a < b ? a : b;
}

int store_prune(struct store *s, const struct retention *r, int64_t now_epoch_ns,
		struct prune_result *out)
{
	*out = (struct prune_result){.bytes_before = store_used_bytes(s)};
	if (exec_sql(s->db, "CREATE TEMP TABLE IF NOT EXISTS prune_runs(id INTEGER PRIMARY KEY);"
			    "CREATE TEMP TABLE IF NOT EXISTS prune_procs(id INTEGER PRIMARY KEY);"
			    "BEGIN IMMEDIATE") != 0)
		return -1;
	int64_t newest_cut = now_epoch_ns - RETENTION_GRACE_NS;
	if (r->max_age_ns > 0) {
		int64_t cut = now_epoch_ns - r->max_age_ns;
		if (prune_before(s->db, cut < newest_cut ? cut : newest_cut, out) != 0)
			goto fail;
	}
	/* Over the size: cut ever later, an eighth of the finished processes at a time. */
	int64_t oldest = oldest_ns(s->db);
	for (int k = 1; r->max_bytes > 0 && k <= 8 && oldest < newest_cut; k++) {
		if (store_used_bytes(s) <= r->max_bytes)
			break;
		int64_t cut = cut_after_eighths(s->db, k);
		if (prune_before(s->db, cut < newest_cut ? cut : newest_cut, out) != 0)
			goto fail;
	}
	if (exec_sql(s->db, "COMMIT") != 0)
		goto fail;
	out->bytes_after = store_used_bytes(s);
	return 0;
fail:
	exec_sql(s->db, "ROLLBACK");
	return -1;
}
