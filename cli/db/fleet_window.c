/*
 * `tracer --fleet cost HOST:ID`: the run's host's cost over the run's time is split
 * among everything that ran there then (docs/cost.md), so beside the run itself the
 * host's other processes of that window are read, with their runs, steps, tools and
 * samples. Batch jobs joined from other hosts are not: each host is priced on its own.
 */
#include <inttypes.h>
#include <stdio.h>

#include "cli/db/fleet.h"

void fleet_run_span(sqlite3 *db, int64_t *start, int64_t *end)
{
	sqlite3_stmt *st;

	*start = *end = 0;
	if (sqlite3_prepare_v2(db, "SELECT start_ns, coalesce(end_ns, start_ns) FROM runs", -1, &st,
			       NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		*start = sqlite3_column_int64(st, 0);
		*end = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
}

int fleet_load_window(sqlite3 *db, const char *verb, const char *host, int64_t id)
{
	/* The rows the window's processes name: table, its key, the processes' column. */
	static const char *const named[][3] = {{"runs", "id", "run_id"},
					       {"steps", "id", "step_id"},
					       {"tools", "id", "tool_id"},
					       {"samples", "process_id", "id"}};
	char where[2048], alive[1024], h[300];
	int64_t start, end;

	fleet_run_span(db, &start, &end);
	fleet_quote(host, h, sizeof(h));
	snprintf(alive, sizeof(alive),
		 "_host = %s AND start_ns <= %" PRId64 " AND (end_ns IS NULL OR end_ns >= %" PRId64
		 ") AND (run_id IS NULL OR run_id != %" PRId64 ")",
		 h, end, start, id);
	if (fleet_copy_rows(db, verb, "processes", "processes", alive) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		snprintf(where, sizeof(where),
			 "_host = %s AND %s IN (SELECT %s FROM `%s`.processes FINAL WHERE %s)", h,
			 named[i][1], named[i][2], fleet_database(), alive);
		if (fleet_copy_rows(db, verb, named[i][0], named[i][0], where) < 0)
			return -1;
	}
	return 0;
}
