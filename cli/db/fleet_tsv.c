/*
 * Rows of the fleet store copied as TabSeparated: a verb that needs a few columns
 * of many rows (idle's host samples: 86,400 a host-day) reads only those, in the
 * compact text ClickHouse writes fastest, parsed in place and inserted by one
 * prepared statement in one transaction (the JSON copy of fleet_copy.c parses an
 * object and prepares a statement per row: seconds a host-day).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/db/fleet.h"
#include "cli/render/clierror.h"

/* A TabSeparated field unescaped in place (\t, \n, \\ ...); its end. */
static char *unescape(char *s)
{
	static const char from[] = "btnfr0'\\", to[] = "\b\t\n\f\r\0'\\";
	char *out = s;

	for (; *s; s++) {
		const char *e = s[0] == '\\' && s[1] ? strchr(from, s[1]) : NULL;
		if (e && *e) {
			*out++ = to[e - from];
			s++;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
	return out;
}

/* Binds field i as types[i] says (i integer, r real, t text); \N is NULL. 0, or -1: a
 * number that does not read as one. */
static int bind_field(sqlite3_stmt *st, int i, char *field, char type)
{
	char *end;

	if (!strcmp(field, "\\N"))
		return sqlite3_bind_null(st, i + 1) == SQLITE_OK ? 0 : -1;
	if (type == 'i') {
		errno = 0;
		long long n = strtoll(field, &end, 10);
		return *field && !*end && !errno && sqlite3_bind_int64(st, i + 1, n) == SQLITE_OK
			   ? 0
			   : -1;
	}
	if (type == 'r') {
		double d = strtod(field, &end);
		return *field && !*end && sqlite3_bind_double(st, i + 1, d) == SQLITE_OK ? 0 : -1;
	}
	char *stop = unescape(field);
	return sqlite3_bind_text(st, i + 1, field, (int)(stop - field), SQLITE_TRANSIENT) ==
		       SQLITE_OK
		   ? 0
		   : -1;
}

/* One line's fields into the statement and run: 0 inserted, -1 not (as the JSON copy,
 * a row our schema refuses is left out). */
static int insert_line(sqlite3_stmt *st, char *line, const char *types)
{
	int n = (int)strlen(types), rc = 0;

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	for (int i = 0; i < n && rc == 0; i++) {
		char *tab = line ? strchr(line, '\t') : NULL;
		if (!line || (i < n - 1 && !tab))
			return -1;
		if (tab)
			*tab = '\0';
		rc = bind_field(st, i, line, types[i]);
		line = tab ? tab + 1 : NULL;
	}
	return rc == 0 && !line && sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
}

long fleet_copy_tsv(sqlite3 *db, const char *verb, const char *select_sql, const char *insert_sql,
		    const char *types)
{
	char err[1024];
	sqlite3_stmt *st;
	long rows = 0;

	if (sqlite3_prepare_v2(db, insert_sql, -1, &st, NULL) != SQLITE_OK) {
		cli_error(verb, "fleet copy: %s\n", sqlite3_errmsg(db));
		return -1;
	}
	char *text = fleet_query(select_sql, err, sizeof(err));
	if (!text) {
		sqlite3_finalize(st);
		cli_error(verb, "%s\n", err);
		return -1;
	}
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (insert_line(st, line, types) == 0)
			rows++;
	}
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_finalize(st);
	free(text);
	return rows;
}
