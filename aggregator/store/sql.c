/* Preparing, stepping and binding statements: the helpers every table file uses. */
#include "aggregator/store/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

int exec_sql(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		log_error("sqlite: %s: %s", sql, err ? err : "?");
		sqlite3_free(err);
		return -1;
	}
	return 0;
}

int64_t max_id(sqlite3 *db, const char *table)
{
	char sql[128];
	sqlite3_stmt *st;
	int64_t v = 0;

	snprintf(sql, sizeof(sql), "SELECT coalesce(max(id), 0) FROM %s", table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

int prepare(struct store *s, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK) {
		log_error("sqlite prepare: %s", sqlite3_errmsg(s->db));
		return -1;
	}
	return 0;
}

int prepare_update(struct store *s, const char *table, const char *columns, int n_key,
		   sqlite3_stmt **st)
{
	char sql[2048], set[1536] = "", where[256] = "";
	size_t set_len = 0, where_len = 0;
	int i = 1;

	for (const char *c = columns; *c; i++) {
		size_t n = strcspn(c, ",");
		char *out = i <= n_key ? where : set;
		size_t *len = i <= n_key ? &where_len : &set_len;
		size_t room = (i <= n_key ? sizeof(where) : sizeof(set)) - *len;
		int w = snprintf(out + *len, room, "%s%.*s = ?%d",
				 *len ? (i <= n_key ? " AND " : ", ") : "", (int)n, c, i);
		if (w < 0 || (size_t)w >= room)
			return -1;
		*len += (size_t)w;
		c += n;
		c += strspn(c, ", ");
	}
	if (snprintf(sql, sizeof(sql), "UPDATE %s SET %s WHERE %s", table, set, where) >=
	    (int)sizeof(sql))
		return -1;
	return prepare(s, sql, st);
}

int run_write(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc;
}

/*
 * The same for a statement whose every parameter is bound before each step
 * (bind_process): clearing them first would be wasted work, ~1% of the
 * aggregator's instructions per process in an exec storm.
 */
int run_bound_write(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc;
}

/* SQLITE_STATIC: every write steps right after binding and clears its bindings
 * (run_write), so the caller's strings outlive SQLite's use of them; copying
 * each one was a measurable share of a row write. */
void bind_text_or_null(sqlite3_stmt *st, int i, const char *v)
{
	if (v && v[0])
		sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

void bind_id_or_null(sqlite3_stmt *st, int i, int64_t v)
{
	if (v > 0)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

void bind_i64_if(sqlite3_stmt *st, int i, bool have, int64_t v)
{
	if (have)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

void bind_double_if(sqlite3_stmt *st, int i, bool have, double v)
{
	if (have)
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

void bind_u64(sqlite3_stmt *st, int i, uint64_t v)
{
	sqlite3_bind_int64(st, i, (int64_t)v);
}

/* Runs a bound write and readies the statement for the next; SQLite's result. */
int step_done(struct store *s, sqlite3_stmt *st)
{
	int rc = run_write(st);

	if (rc != SQLITE_DONE) {
		log_error("sqlite write: %s", sqlite3_errmsg(s->db));
		return rc;
	}
	return 0;
}

/*
 * Rows rewritten at every commit (a step's rollup, a collector's counters) are
 * updated in place by their key. INSERT OR REPLACE deletes the row and adds it
 * again, which rewrites its entry in every index of the table: for a step two
 * more pages per commit. The insert (with its REPLACE semantics) runs only when
 * no row has the key yet.
 */
int update_or_insert(struct store *s, sqlite3_stmt *update, sqlite3_stmt *insert,
		     void (*bind)(sqlite3_stmt *st, const void *row), const void *row)
{
	bind(update, row);
	int rc = step_done(s, update);
	if (rc != 0 || sqlite3_changes(s->db) > 0)
		return rc;
	bind(insert, row);
	return step_done(s, insert);
}

void copy_column(sqlite3_stmt *st, int col, char *out, size_t size)
{
	const unsigned char *v = sqlite3_column_text(st, col);

	snprintf(out, size, "%s", v ? (const char *)v : "");
}

char *dup_column(sqlite3_stmt *st, int col)
{
	const unsigned char *v = sqlite3_column_text(st, col);

	return v ? strdup((const char *)v) : NULL;
}
