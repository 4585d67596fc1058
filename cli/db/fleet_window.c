/*
 * `tracer --fleet cost HOST:ID`: the run's host's cost over the run's time is split
 * among everything that ran there then (docs/cost.md), so beside the run itself the
 * host's other processes of that window are read, with their runs, steps, tools and
 * samples. Batch jobs joined from other hosts are not: each host is priced on its own.
 */
#include <inttypes.h>
#include <stdio.h>

#include "cli/db/fleet.h"

int fleet_load_window(sqlite3 *db, const char *verb, const char *host, int64_t id)
{
	char where[2048], alive[1024], h[300];
	const char *d = fleet_database();
	sqlite3_stmt *st;
	int64_t start = 0, end = 0;

	if (sqlite3_prepare_v2(db, "SELECT start_ns, coalesce(end_ns, start_ns) FROM runs", -1, &st,
			       NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		start = sqlite3_column_int64(st, 0);
		end = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	fleet_quote(host, h, sizeof(h));
	snprintf(alive, sizeof(alive),
		 "_host = %s AND start_ns <= %" PRId64 " AND (end_ns IS NULL OR end_ns >= %" PRId64
		 ") AND (run_id IS NULL OR run_id != %" PRId64 ")",
		 h, end, start, id);
	if (fleet_copy_rows(db, verb, "processes", "processes", alive) < 0)
		return -1;
	snprintf(where, sizeof(where),
		 "_host = %s AND id IN (SELECT run_id FROM `%s`.processes FINAL WHERE %s)", h, d,
		 alive);
	if (fleet_copy_rows(db, verb, "runs", "runs", where) < 0)
		return -1;
	snprintf(where, sizeof(where),
		 "_host = %s AND id IN (SELECT step_id FROM `%s`.processes FINAL WHERE %s)", h, d,
		 alive);
	if (fleet_copy_rows(db, verb, "steps", "steps", where) < 0)
		return -1;
	snprintf(where, sizeof(where),
		 "_host = %s AND id IN (SELECT tool_id FROM `%s`.processes FINAL WHERE %s)", h, d,
		 alive);
	if (fleet_copy_rows(db, verb, "tools", "tools", where) < 0)
		return -1;
	snprintf(where, sizeof(where),
		 "_host = %s AND process_id IN (SELECT id FROM `%s`.processes FINAL WHERE %s)", h,
		 d, alive);
	return fleet_copy_rows(db, verb, "samples", "samples", where) < 0 ? -1 : 0;
}
