/*
 * `tracer --fleet cost HOST:ID`: the run's host's cost over the run's time is split
 * among everything that ran there then (docs/cost.md), so beside the run itself the
 * host's other processes of that window are read, with their runs, steps, tools and
 * samples. Batch jobs joined from other hosts are not: each host is priced on its own.
 * And `energy --since`: every host's processes of a window, one host at a time.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/db/fleet.h"
#include "cli/render/clierror.h"

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

json_t *fleet_window_hosts(const char *verb, int64_t from, int64_t to)
{
	char sql[1024], err[1024];
	const char *d = fleet_database();

	snprintf(sql, sizeof(sql),
		 "SELECT p._host AS host, groupUniqArray(r.hostname) AS hostnames FROM (SELECT "
		 "_host, run_id FROM `%s`.processes FINAL WHERE start_ns <= %" PRId64
		 " AND (end_ns IS NULL OR end_ns >= %" PRId64
		 ")) AS p LEFT JOIN (SELECT _host, id, "
		 "hostname FROM `%s`.runs FINAL) AS r ON r._host = p._host AND r.id = p.run_id "
		 "GROUP BY p._host ORDER BY p._host FORMAT JSONEachRow",
		 d, to, from, d);
	char *text = fleet_query(sql, err, sizeof(err));
	if (!text) {
		cli_error(verb, "%s\n", err);
		return NULL;
	}
	json_t *hosts = json_array();
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		json_t *r = json_loads(line, 0, NULL);
		if (r)
			json_array_append_new(hosts, r);
	}
	free(text);
	return hosts;
}

int fleet_load_host_window(sqlite3 *db, const char *verb, const char *host, int64_t from,
			   int64_t to)
{
	char where[2048], alive[1024], h[300];
	const char *d = fleet_database();
	static const char *const related[][2] = {
	    {"runs", "id IN (SELECT run_id"},
	    {"steps", "id IN (SELECT step_id"},
	    {"tools", "id IN (SELECT tool_id"},
	    {"samples", "process_id IN (SELECT id"},
	};

	fleet_quote(host, h, sizeof(h));
	snprintf(alive, sizeof(alive),
		 "_host = %s AND start_ns <= %" PRId64 " AND (end_ns IS NULL OR end_ns >= %" PRId64
		 ")",
		 h, to, from);
	if (fleet_copy_rows(db, verb, "processes", "processes", alive) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(related) / sizeof(related[0]); i++) {
		snprintf(where, sizeof(where),
			 "_host = %s AND %s FROM `%s`.processes FINAL WHERE %s)", h, related[i][1],
			 d, alive);
		if (fleet_copy_rows(db, verb, related[i][0], related[i][0], where) < 0)
			return -1;
	}
	return fleet_load_energy(db, verb, host);
}

int fleet_load_host_cost(sqlite3 *db, const char *verb, const char *host, int64_t from, int64_t to)
{
	char where[1024], h[300];

	if (fleet_load_host_window(db, verb, host, from, to) != 0)
		return -1;
	fleet_quote(host, h, sizeof(h));
	/* The host's capacity is the largest its samples ever said (usage_capacity): the two
	 * samples holding it stand for all of them. */
	snprintf(where, sizeof(where), "_host = %s ORDER BY cpus DESC LIMIT 1", h);
	if (fleet_copy_rows(db, verb, "host_samples", "host_samples", where) < 0)
		return -1;
	snprintf(where, sizeof(where), "_host = %s ORDER BY mem_total_kb DESC LIMIT 1", h);
	if (fleet_copy_rows(db, verb, "host_samples", "host_samples", where) < 0)
		return -1;
	/* Every collector stream of the host: the observed time is their union. */
	snprintf(where, sizeof(where), "_host = %s", h);
	return fleet_copy_rows(db, verb, "collector_stats", "collector_stats", where) < 0 ? -1 : 0;
}
