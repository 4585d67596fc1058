#include "cli/db/rows.h"

#include <string.h>

/* Columns that hold JSON text: given to programs as JSON, not as a string of it. */
static bool json_text_column(const char *name)
{
	static const char *const names[] = {"argv",   "details",      "signature",
					    "probes", "command_argv", NULL};

	for (const char *const *n = names; *n; n++)
		if (!strcmp(name, *n))
			return true;
	return false;
}

/* Columns that are 0/1 in SQLite (it has no boolean): true/false in JSON. */
static bool flag_column(const char *name)
{
	static const char *const names[] = {
	    "helper",	     "oom_killed",     "core_dumped", "argv_truncated",
	    "from_snapshot", "path_truncated", "active",      "watched",
	    "final",	     "exec_failed",    NULL};

	for (const char *const *n = names; *n; n++)
		if (!strcmp(name, *n))
			return true;
	return false;
}

json_t *cli_row_object(sqlite3_stmt *st)
{
	json_t *o = json_object();

	for (int i = 0; i < sqlite3_column_count(st); i++) {
		const char *name = sqlite3_column_name(st, i);
		const char *text;
		json_t *v = NULL;

		switch (sqlite3_column_type(st, i)) {
		case SQLITE_INTEGER:
			v = flag_column(name) ? json_boolean(sqlite3_column_int64(st, i) != 0)
					      : json_integer(sqlite3_column_int64(st, i));
			break;
		case SQLITE_FLOAT:
			v = json_real(sqlite3_column_double(st, i));
			break;
		case SQLITE_NULL:
			v = json_null();
			break;
		default:
			text = (const char *)sqlite3_column_text(st, i);
			if (text && json_text_column(name))
				v = json_loads(text, JSON_DECODE_ANY, NULL);
			if (!v)
				v = json_string(text ? text : "");
		}
		json_object_set_new(o, name, v ? v : json_null());
	}
	return o;
}

json_t *cli_rows_json(sqlite3 *db, const char *sql, int64_t bind)
{
	json_t *rows = json_array();
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return rows;
	if (sqlite3_bind_parameter_count(st) > 0)
		sqlite3_bind_int64(st, 1, bind);
	while (sqlite3_step(st) == SQLITE_ROW)
		json_array_append_new(rows, cli_row_object(st));
	sqlite3_finalize(st);
	return rows;
}

json_t *cli_run_object(sqlite3 *db, int64_t run)
{
	json_t *rows = cli_rows_json(db, "SELECT * FROM runs WHERE id = ?1", run);
	json_t *r = json_array_get(rows, 0);

	r = r ? json_incref(r) : json_null();
	json_decref(rows);
	return r;
}
