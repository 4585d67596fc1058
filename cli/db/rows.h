/* Rows of the database as JSON, in the CLI's one vocabulary (docs/export.md). */
#ifndef TRACER_CLI_ROWS_H
#define TRACER_CLI_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "cli/render/jsonfield.h" /* cli_flag and the other field readers */

/*
 * A row as a JSON object, column name -> value, in the CLI's one JSON
 * vocabulary (docs/export.md): JSON-text columns (argv, details, signature,
 * probes) as JSON, 0/1 flag columns (helper, oom_killed, active...) as booleans.
 */
json_t *cli_row_object(sqlite3_stmt *st);
/* Every row of a query (one optional ?1) as cli_row_object()s. */
json_t *cli_rows_json(sqlite3 *db, const char *sql, int64_t bind);
/* The run's row of `runs` as a JSON object (null if none): every document's "run". */
json_t *cli_run_object(sqlite3 *db, int64_t run);

#endif
