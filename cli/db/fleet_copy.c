/*
 * Rows of the fleet store copied into the in-memory database a verb reads:
 * SELECT ... FINAL as JSON lines, each row inserted into our table of that name
 * by the columns it has, ids remapped where the runs list numbers runs anew.
 * Every fleet reader (fleet_load.c, the batch join) copies through here.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/db/fleet.h"
#include "cli/render/clierror.h"

/* A ClickHouse string literal of s (quotes and backslashes escaped) in out. */
static void quote(const char *s, char *out, size_t size)
{
	size_t n = 0;

	out[n++] = '\'';
	for (; *s && n + 3 < size; s++) {
		if (*s == '\'' || *s == '\\')
			out[n++] = '\\';
		out[n++] = *s;
	}
	out[n++] = '\'';
	out[n] = '\0';
}

/* Binds one JSON value to a column: 64-bit integers come back as strings. */
static void bind_value(sqlite3_stmt *st, int i, json_t *v, bool integer)
{
	char *end;

	if (json_is_integer(v)) {
		sqlite3_bind_int64(st, i, json_integer_value(v));
	} else if (json_is_real(v)) {
		sqlite3_bind_double(st, i, json_real_value(v));
	} else if (json_is_string(v)) {
		const char *s = json_string_value(v);
		long long n = strtoll(s, &end, 10);
		if (integer && *s && !*end)
			sqlite3_bind_int64(st, i, n);
		else
			sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	} else {
		sqlite3_bind_null(st, i);
	}
}

/* The local columns of table in names (and whether each is INTEGER): their count. */
static int local_columns(sqlite3 *db, const char *table, char names[][64], bool *integer, int max)
{
	char sql[128];
	sqlite3_stmt *st;
	int n = 0;

	snprintf(sql, sizeof(sql), "PRAGMA table_info(%s)", table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	while (sqlite3_step(st) == SQLITE_ROW && n < max) {
		const char *type = (const char *)sqlite3_column_text(st, 2);
		snprintf(names[n], sizeof(names[n]), "%s",
			 (const char *)sqlite3_column_text(st, 1));
		integer[n++] = type && strstr(type, "INT");
	}
	sqlite3_finalize(st);
	return n;
}

static int64_t remapped(const struct fleet_remap *m, json_t *row, json_t *v)
{
	const char *host = json_string_value(json_object_get(row, "_host"));
	int64_t id = json_is_string(v) ? strtoll(json_string_value(v), NULL, 10)
				       : (int64_t)json_integer_value(v);
	int64_t local = 0;

	sqlite3_reset(m->lookup);
	sqlite3_bind_text(m->lookup, 1, host ? host : "", -1, SQLITE_STATIC);
	sqlite3_bind_int64(m->lookup, 2, id);
	if (sqlite3_step(m->lookup) == SQLITE_ROW)
		local = sqlite3_column_int64(m->lookup, 0);
	return local;
}

/* One JSONEachRow line into the table: the columns it shares with ours. */
static int insert_row(sqlite3 *db, const char *table, json_t *row, const struct fleet_remap *m)
{
	static char names[256][64];
	bool integer[256];
	int n = local_columns(db, table, names, integer, 256);
	char sql[16384];
	size_t len = (size_t)snprintf(sql, sizeof(sql), "INSERT OR REPLACE INTO %s (", table);
	int used = 0, idx[256];

	for (int i = 0; i < n && len < sizeof(sql) - 200; i++)
		if (json_object_get(row, names[i]) &&
		    !(m && m->renumber && !strcmp(names[i], "id"))) {
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s\"%s\"",
						used ? "," : "", names[i]);
			idx[used++] = i;
		}
	len += (size_t)snprintf(sql + len, sizeof(sql) - len, ") VALUES (");
	for (int i = 0; i < used && len < sizeof(sql) - 8; i++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s?", i ? "," : "");
	snprintf(sql + len, sizeof(sql) - len, ")");
	sqlite3_stmt *st;
	if (!used || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	for (int i = 0; i < used; i++) {
		json_t *v = json_object_get(row, names[idx[i]]);
		if (m && !strcmp(names[idx[i]], m->column))
			sqlite3_bind_int64(st, i + 1, remapped(m, row, v));
		else
			bind_value(st, i + 1, v, integer[idx[i]]);
	}
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

void fleet_quote(const char *s, char *out, size_t size)
{
	quote(s, out, size);
}

/*
 * A running process's live copy carries its sampled numbers so far (docs/shipping.md,
 * "Live rows and tombstones"); its host's row holds none until it ends, and the verbs
 * read a running process from its samples, so the copy is read as its host holds it.
 */
static void as_its_host_holds(sqlite3 *db, const char *local)
{
	if (strcmp(local, "processes"))
		return;
	sqlite3_exec(
	    db,
	    "UPDATE processes SET cpu_user_ns = NULL, cpu_sys_ns = NULL, rchar = NULL, "
	    "wchar = NULL, read_bytes = NULL, write_bytes = NULL, runq_ns = NULL, iowait_ns "
	    "= NULL, net_tx_bytes = NULL, net_rx_bytes = NULL, vol_ctxsw = NULL, "
	    "invol_ctxsw = NULL, max_rss_kb = NULL WHERE state = 'running'",
	    NULL, NULL, NULL);
}

/* The rows sql selects (JSONEachRow) into local: rows copied, or -1 said why. */
static long copy_query(sqlite3 *db, const char *verb, const char *local, const char *sql,
		       const struct fleet_remap *m)
{
	char err[1024];
	long rows = 0;
	char *text = fleet_query(sql, err, sizeof(err));
	if (!text) {
		cli_error(verb, "%s\n", err);
		return -1;
	}
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		json_t *row = json_loads(line, 0, NULL);
		if (row && insert_row(db, local, row, m) == 0)
			rows++;
		json_decref(row);
	}
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	free(text);
	as_its_host_holds(db, local);
	return rows;
}

/* After FINAL: a live table's tombstones (the rows their hosts took back) in no answer. */
static const char *not_withdrawn(const char *table)
{
	return !strcmp(table, "processes") || !strcmp(table, "steps") || !strcmp(table, "runs")
		   ? " AND _withdrawn = 0"
		   : "";
}

/* copy_query over a statement asprintf made (len its result: < 0, out of memory), freed. */
static long copy_formatted(sqlite3 *db, const char *verb, const char *local,
			   const struct fleet_remap *m, int len, char *sql)
{
	if (len < 0) {
		cli_error(verb, "out of memory\n");
		return -1;
	}
	long rows = copy_query(db, verb, local, sql, m);
	free(sql);
	return rows;
}

long fleet_copy_prewhere(sqlite3 *db, const char *verb, const char *table, const char *prewhere,
			 const struct fleet_remap *m)
{
	char *sql = NULL;
	int len =
	    asprintf(&sql, "SELECT * FROM `%s`.`%s` FINAL PREWHERE %s WHERE 1%s FORMAT JSONEachRow",
		     fleet_database(), table, prewhere, not_withdrawn(table));

	return copy_formatted(db, verb, table, m, len, sql);
}

/* SELECT * FROM the store's table FINAL WHERE ... into local (ours of that name, or a
 * temporary copy of it): rows copied, or -1 said why. */
long fleet_copy_remapped(sqlite3 *db, const char *verb, const char *table, const char *local,
			 const char *where, const struct fleet_remap *m)
{
	char *sql = NULL;
	int len = asprintf(&sql, "SELECT * FROM `%s`.`%s` FINAL WHERE %s FORMAT JSONEachRow",
			   fleet_database(), table, where);

	return copy_formatted(db, verb, local, m, len, sql);
}

long fleet_copy_keyed(sqlite3 *db, const char *verb, const char *table, const char *host,
		      const char *cond)
{
	char *sql = NULL;
	const char *d = fleet_database();

	int len =
	    asprintf(&sql,
		     "SELECT * FROM `%s`.`%s` FINAL PREWHERE _host = %s AND _key IN (SELECT _key "
		     "FROM `%s`.`%s` WHERE _host = %s AND %s) WHERE %s%s FORMAT JSONEachRow",
		     d, table, host, d, table, host, cond, cond, not_withdrawn(table));

	return copy_formatted(db, verb, table, NULL, len, sql);
}

long fleet_copy_rows(sqlite3 *db, const char *verb, const char *table, const char *local,
		     const char *where)
{
	return fleet_copy_remapped(db, verb, table, local, where, NULL);
}
