/*
 * tracer --fleet top: what runs now on every host. Live copies of running work
 * reach the store within 10 s (docs/shipping.md, "Live rows and tombstones");
 * a host's running runs, their open steps, running processes with their last
 * two samples and tools, the finished steps of the same names in earlier runs
 * of the same pipelines (the usual time), and the host's collector rows are
 * copied into an in-memory database per host (ids repeat across hosts), where
 * top's own queries run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/store/schema.h"
#include "cli/db/fleet.h"
#include "cli/render/clierror.h"
#include "common/log.h"

#define RUNNING_RUN "end_ns IS NULL AND (status IS NULL OR status = 'running')"
/* How much history the usual times are read from (top's median reads the newest 50). */
#define HISTORY_RUNS 1000
#define HISTORY_STEPS 5000

json_t *fleet_live_hosts(const char *verb)
{
	char sql[1024], err[1024];
	const char *d = fleet_database();

	snprintf(sql, sizeof(sql),
		 "SELECT _host, any(hostname) AS hostname FROM `%s`.runs FINAL WHERE " RUNNING_RUN
		 " GROUP BY _host ORDER BY hostname, _host FORMAT JSONEachRow",
		 d);
	char *text = fleet_query(sql, err, sizeof(err));
	if (!text) {
		cli_error(verb, "%s\n", err);
		return NULL;
	}
	json_t *rows = json_array(), *r;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		if ((r = json_loads(line, 0, NULL)))
			json_array_append_new(rows, r);
	free(text);
	return rows;
}

static sqlite3 *memory_db(const char *verb)
{
	sqlite3 *db = NULL;
	/* Our migrations build the copy; their progress lines are no news to the reader. */
	enum log_level level = log_get_level();
	log_set_level(LOG_LVL_ERROR);
	int made = sqlite3_open(":memory:", &db) == SQLITE_OK && schema_migrate(db) == 0;
	log_set_level(level);
	if (made)
		return db;
	cli_error(verb, "cannot create the in-memory database for the fleet store\n");
	sqlite3_close(db);
	return NULL;
}

/* One copy: the rows of table WHERE fmt (formatted with H the host, D the database). */
#define COPY(table, ...)                                                                           \
	(snprintf(where, sizeof(where), __VA_ARGS__),                                              \
	 fleet_copy_rows(db, verb, table, table, where) < 0)

sqlite3 *fleet_open_live(const char *verb, const char *host)
{
	char where[4096], h[300];
	const char *d = fleet_database();
	sqlite3 *db = memory_db(verb);

	if (!db)
		return NULL;
	fleet_quote(host, h, sizeof(h));
	/* The running runs, and earlier finished runs of their pipelines. */
	if (COPY("runs", "_host = %s AND " RUNNING_RUN, h) ||
	    COPY("runs",
		 "_host = %s AND NOT (" RUNNING_RUN ") AND pipeline_id IN (SELECT pipeline_id FROM "
		 "`%s`.runs FINAL WHERE _host = %s AND " RUNNING_RUN
		 ") ORDER BY start_ns DESC LIMIT %d",
		 h, d, h, HISTORY_RUNS) ||
	    COPY("steps",
		 "_host = %s AND status = 'running' AND run_id IN (SELECT id FROM `%s`.runs FINAL "
		 "WHERE _host = %s AND " RUNNING_RUN ")",
		 h, d, h) ||
	    COPY("steps",
		 "_host = %s AND status = 'ok' AND end_ns IS NOT NULL AND name IN (SELECT "
		 "ifNull(name, key) FROM `%s`.steps FINAL WHERE _host = %s AND status = "
		 "'running') ORDER BY end_ns DESC LIMIT %d",
		 h, d, h, HISTORY_STEPS)) {
		sqlite3_close(db);
		return NULL;
	}
	/* What runs in them now: processes, their newest two samples, their tools. */
	char procs[1024];
	snprintf(procs, sizeof(procs),
		 "_host = %s AND state = 'running' AND run_id IN (SELECT id FROM `%s`.runs FINAL "
		 "WHERE _host = %s AND " RUNNING_RUN ")",
		 h, d, h);
	if (COPY("processes", "%s", procs) ||
	    COPY("samples",
		 "_host = %s AND process_id IN (SELECT id FROM `%s`.processes FINAL WHERE %s) "
		 "ORDER BY ts_ns DESC LIMIT 2 BY process_id",
		 h, d, procs) ||
	    COPY("tools",
		 "_host = %s AND id IN (SELECT tool_id FROM `%s`.processes FINAL WHERE %s)", h, d,
		 procs) ||
	    COPY("collector_stats", "_host = %s ORDER BY _version DESC LIMIT 50", h)) {
		sqlite3_close(db);
		return NULL;
	}
	return db;
}
