/* The SQL both outbox files build on: a row as JSON, the shipper's progress. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/outbox/internal.h"

/*
 * The row as one JSON object over every column of the table. SQLite functions
 * take at most 127 arguments (Debian's build), so past 50 columns the object
 * is built from several json_object() calls, each stripped of its braces and
 * joined: values are scalars (a text value ends in a quote), so exactly one
 * brace goes from each end, and NULLs stay (json_patch would drop them).
 */
#define COLUMNS_PER_CALL 50

char *outbox_row_json(sqlite3 *db, const char *table)
{
	char sql[128];
	sqlite3_stmt *st;
	size_t cap = 4096, n = 0, in_call = 0;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	n = (size_t)snprintf(out, cap, "'{' || ltrim(rtrim(json_object(");
	snprintf(sql, sizeof(sql), "PRAGMA table_info(%s)", table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		free(out);
		return NULL;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *col = (const char *)sqlite3_column_text(st, 1);
		size_t need = 2 * strlen(col) + 80;
		if (n + need + 64 >= cap) {
			cap = 2 * cap + need;
			char *bigger = realloc(out, cap);
			if (!bigger) {
				free(out);
				sqlite3_finalize(st);
				return NULL;
			}
			out = bigger;
		}
		if (in_call == COLUMNS_PER_CALL) {
			n += (size_t)snprintf(out + n, cap - n,
					      "), '}'), '{') || ',' || ltrim(rtrim(json_object(");
			in_call = 0;
		}
		n += (size_t)snprintf(out + n, cap - n, "%s'%s', \"%s\"", in_call ? ", " : "", col,
				      col);
		in_call++;
	}
	sqlite3_finalize(st);
	snprintf(out + n, cap - n, "), '}'), '{') || '}'");
	return out;
}

/* delivered_through: every outbox id up to it was delivered (or set aside);
 * attempt_through: the last id of the batch being sent (fixed until acknowledged). */
int64_t outbox_shipper_mark(struct outbox *o, const char *key)
{
	sqlite3_stmt *st;
	int64_t through = -1;

	if (!o->shipper_state)
		return -1;
	if (!o->state &&
	    sqlite3_open_v2(o->shipper_state, &o->state, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(o->state); /* not there yet: no shipper has run */
		o->state = NULL;
		return -1;
	}
	if (sqlite3_prepare_v2(o->state,
			       "SELECT CAST(value AS INTEGER) FROM shipper_state WHERE key = ?1",
			       -1, &st, NULL) != SQLITE_OK) {
		sqlite3_close(o->state);
		o->state = NULL;
		return -1;
	}
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		through = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return through;
}
