/*
 * `tracer --fleet recommend --pipeline P`: the pipeline's runs on every host, read into
 * one database as one host's would hold them, so recommend's own SQL sizes the steps
 * over all of them. Ids repeat across hosts: each host's rows are moved past the others'
 * (host k's ids + k << 40) once copied; tools are matched by name, the pipeline is one
 * row. What is copied is what right-sizing reads: the runs, their steps, the processes
 * an OOM kill ended, one of each step and run (whether any was OOM-killed is then
 * known: none, unless those say so), each run's command with its exec chain (a run with no steps is
 * named after its last program), their tools, and each host's largest host samples.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/db/fleet.h"
#include "cli/render/clierror.h"

#define HOST_SHIFT (INT64_C(1) << 40)

static const char tools_temp[] =
    "CREATE TEMP TABLE IF NOT EXISTS fp_tools AS SELECT * FROM main.tools WHERE 0;"
    "DELETE FROM fp_tools;";

/* ?1 the host's offset: its fresh rows (ids under HOST_SHIFT) moved past the others'. */
static const char move_host[] =
    "INSERT OR IGNORE INTO tools (name, program, category) "
    " SELECT name, program, category FROM fp_tools;"
    "UPDATE processes SET tool_id = (SELECT t.id FROM tools t JOIN fp_tools f "
    " ON f.name = t.name WHERE f.id = processes.tool_id) WHERE id < ?2;"
    "UPDATE runs SET id = id + ?1, pipeline_id = 1, command_process_id = "
    " command_process_id + ?1, engine_process_id = engine_process_id + ?1 WHERE id < ?2;"
    "UPDATE steps SET id = id + ?1, run_id = run_id + ?1 WHERE id < ?2;"
    "UPDATE processes SET id = id + ?1, run_id = run_id + ?1, step_id = step_id + ?1, "
    " parent_id = parent_id + ?1 WHERE id < ?2;";

static int exec_moves(sqlite3 *db, int64_t offset)
{
	const char *sql = move_host, *tail;
	sqlite3_stmt *st;
	int rc = 0;

	while (rc == 0 && sql && *sql) {
		if (sqlite3_prepare_v2(db, sql, -1, &st, &tail) != SQLITE_OK)
			return -1;
		if (!st)
			break;
		sqlite3_bind_int64(st, 1, offset);
		sqlite3_bind_int64(st, 2, HOST_SHIFT);
		rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
		sqlite3_finalize(st);
		sql = tail;
	}
	return rc;
}

/* One host's runs of the pipeline (p quoted) and what sizing them reads. */
static int copy_host(sqlite3 *db, const char *verb, const char *host, const char *p)
{
	char h[300], runs[1024], cmd[1400], where[8192];
	const char *d = fleet_database();

	fleet_quote(host, h, sizeof(h));
	snprintf(runs, sizeof(runs),
		 "SELECT id FROM `%s`.runs FINAL WHERE _host = %s AND pipeline = %s AND "
		 "_withdrawn = 0",
		 d, h, p);
	snprintf(cmd, sizeof(cmd),
		 "SELECT command_process_id FROM `%s`.runs FINAL WHERE _host = %s AND pipeline = "
		 "%s AND _withdrawn = 0",
		 d, h, p);
	snprintf(where, sizeof(where), "_host = %s AND pipeline = %s AND _withdrawn = 0", h, p);
	if (fleet_copy_rows(db, verb, "runs", "runs", where) < 0)
		return -1;
	snprintf(where, sizeof(where), "_host = %s AND _withdrawn = 0 AND run_id IN (%s)", h, runs);
	if (fleet_copy_rows(db, verb, "steps", "steps", where) < 0)
		return -1;
	snprintf(where, sizeof(where),
		 "_host = %s AND _withdrawn = 0 AND ((run_id IN (%s) AND (oom_killed != 0 OR "
		 "(pid, proc_start_boot_ns) IN (SELECT pid, proc_start_boot_ns FROM `%s`.processes "
		 "FINAL WHERE _host = %s AND id IN (%s)))) OR id IN (%s) OR id IN (SELECT min(id) "
		 "FROM `%s`.processes FINAL WHERE _host = %s AND _withdrawn = 0 AND run_id IN (%s) "
		 "GROUP BY run_id, step_id))",
		 h, runs, d, h, cmd, cmd, d, h, runs);
	if (fleet_copy_rows(db, verb, "processes", "processes", where) < 0)
		return -1;
	snprintf(where, sizeof(where), "_host = %s", h);
	if (sqlite3_exec(db, tools_temp, NULL, NULL, NULL) != SQLITE_OK ||
	    fleet_copy_rows(db, verb, "tools", "fp_tools", where) < 0)
		return -1;
	snprintf(where, sizeof(where), "_host = %s ORDER BY cpus DESC LIMIT 1", h);
	if (fleet_copy_rows(db, verb, "host_samples", "host_samples", where) < 0)
		return -1;
	snprintf(where, sizeof(where), "_host = %s ORDER BY mem_total_kb DESC LIMIT 1", h);
	return fleet_copy_rows(db, verb, "host_samples", "host_samples", where) < 0 ? -1 : 0;
}

sqlite3 *fleet_open_pipeline(const char *verb, const char *pipeline)
{
	char p[600], sql[1024], err[1024];
	sqlite3 *db = fleet_memory_db(verb);
	json_t *hosts, *h;
	size_t i;

	if (!db)
		return NULL;
	fleet_quote(pipeline, p, sizeof(p));
	snprintf(sql, sizeof(sql),
		 "SELECT DISTINCT _host FROM `%s`.runs FINAL WHERE pipeline = %s AND _withdrawn = "
		 "0 ORDER BY _host FORMAT JSONEachRow",
		 fleet_database(), p);
	if (!(hosts = fleet_json_rows(sql, err, sizeof(err)))) {
		cli_error(verb, "%s\n", err);
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, "INSERT INTO pipelines (id, name) VALUES (1, ?1)", -1, &st,
				    NULL) == SQLITE_OK
		     ? 0
		     : -1;
	if (rc == 0) {
		sqlite3_bind_text(st, 1, pipeline, -1, SQLITE_STATIC);
		rc = json_array_size(hosts) && sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
		sqlite3_finalize(st);
	}
	json_array_foreach(hosts, i, h)
	{
		const char *host = json_string_value(json_object_get(h, "_host"));
		if (rc == 0 && copy_host(db, verb, host ? host : "", p) != 0) {
			rc = -2; /* said */
		} else if (rc == 0 && exec_moves(db, (int64_t)(i + 1) * HOST_SHIFT) != 0) {
			cli_error(verb, "%s\n", sqlite3_errmsg(db));
			rc = -2;
		}
	}
	if (rc == -1)
		cli_error(verb, "no pipeline '%s' in the fleet store\n", pipeline);
	json_decref(hosts);
	if (rc != 0) {
		sqlite3_close(db);
		return NULL;
	}
	return db;
}
