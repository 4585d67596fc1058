/* Signals and step history: the insight layer's side of the store. */
#include "aggregator/store/internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/log.h"

static const char sql_put_signal[] =
    "INSERT OR REPLACE INTO signals (id, kind, severity, detected_ns, at_ns, run_id, step_id, "
    "process_id, tool_id, value, threshold, unit, message, details, active) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

static const char sql_step_history[] =
    "SELECT s.end_ns - s.start_ns FROM steps s JOIN runs r ON r.id = s.run_id "
    "WHERE r.pipeline_id = ? AND s.name = ? AND s.run_id != ? AND s.status = 'ok' "
    "AND s.end_ns IS NOT NULL ORDER BY s.id DESC LIMIT 50";

static sqlite3_stmt *statement(struct store *s, sqlite3_stmt **slot, const char *sql)
{
	if (!*slot && sqlite3_prepare_v2(s->db, sql, -1, slot, NULL) != SQLITE_OK) {
		log_error("sqlite prepare: %s", sqlite3_errmsg(s->db));
		*slot = NULL;
	}
	return *slot;
}

int store_put_signal(struct store *s, const struct signal_row *r)
{
	sqlite3_stmt *st = statement(s, &s->put_signal, sql_put_signal);
	int i = 1;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, i++, r->id);
	sqlite3_bind_text(st, i++, r->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, i++, r->severity, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, i++, r->detected_epoch_ns);
	bind_id_or_null(st, i++, r->at_epoch_ns);
	bind_id_or_null(st, i++, r->run_id);
	bind_id_or_null(st, i++, r->step_id);
	bind_id_or_null(st, i++, r->process_id);
	bind_id_or_null(st, i++, r->tool_id);
	if (r->has_value)
		sqlite3_bind_double(st, i++, r->value);
	else
		sqlite3_bind_null(st, i++);
	if (r->has_threshold)
		sqlite3_bind_double(st, i++, r->threshold);
	else
		sqlite3_bind_null(st, i++);
	if (r->unit)
		sqlite3_bind_text(st, i++, r->unit, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i++);
	sqlite3_bind_text(st, i++, r->message, -1, SQLITE_TRANSIENT);
	if (r->details[0])
		sqlite3_bind_text(st, i++, r->details, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i++);
	sqlite3_bind_int(st, i++, r->active);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE) {
		log_error("sqlite write (signal): %s", sqlite3_errmsg(s->db));
		return -1;
	}
	return 0;
}

int64_t store_max_signal_id(struct store *s)
{
	sqlite3_stmt *st;
	int64_t id = -1;

	if (sqlite3_prepare_v2(s->db, "SELECT coalesce(max(id), 0) FROM signals", -1, &st, NULL) !=
	    SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int store_step_history(struct store *s, int64_t pipeline_id, const char *name, int64_t exclude_run,
		       int64_t *median_ns, unsigned *count)
{
	sqlite3_stmt *st = statement(s, &s->step_history, sql_step_history);
	int64_t walls[50];
	unsigned n = 0;

	*median_ns = 0;
	*count = 0;
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, pipeline_id);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, exclude_run);
	while (n < 50 && sqlite3_step(st) == SQLITE_ROW)
		walls[n++] = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (n == 0)
		return 0;
	qsort(walls, n, sizeof(*walls), cmp_i64);
	*median_ns = n % 2 ? walls[n / 2] : (walls[n / 2 - 1] + walls[n / 2]) / 2;
	*count = n;
	return 0;
}
