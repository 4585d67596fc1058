/*
 * A joined batch job's records, from its own host's run in the fleet store, moved
 * under the step that submitted it, as the aggregator does when a job runs on
 * the submitter's host: its processes, samples and signals become the run's and
 * the step's (ids moved past the host's own, tools matched by name), and the
 * step's and run's totals grow by the job run's: CPU, I/O, waits and counts add
 * up; peak memory and peak cores are the largest one host reached (hosts do not
 * share memory), so they are never summed across hosts. fleet_hosts keeps the
 * per-host breakdown that show and the report print.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/db/fleet.h"
#include "cli/db/fleet_join.h"
#include "common/taskdir.h"

static const char make_copies[] =
    "CREATE TEMP TABLE IF NOT EXISTS fj_runs AS SELECT * FROM main.runs WHERE 0;"
    "CREATE TEMP TABLE IF NOT EXISTS fj_processes AS SELECT * FROM main.processes WHERE 0;"
    "CREATE TEMP TABLE IF NOT EXISTS fj_samples AS SELECT * FROM main.samples WHERE 0;"
    "CREATE TEMP TABLE IF NOT EXISTS fj_signals AS SELECT * FROM main.signals WHERE 0;"
    "CREATE TEMP TABLE IF NOT EXISTS fj_tools AS SELECT * FROM main.tools WHERE 0;"
    "CREATE TEMP TABLE IF NOT EXISTS fleet_hosts (host TEXT PRIMARY KEY, hostname TEXT, "
    " head INTEGER NOT NULL, jobs INTEGER NOT NULL, processes INTEGER NOT NULL, "
    " cpu_ns INTEGER NOT NULL, peak_rss_kb INTEGER);"
    "DELETE FROM fj_runs; DELETE FROM fj_processes; DELETE FROM fj_samples;"
    "DELETE FROM fj_signals; DELETE FROM fj_tools;";

/* ?1 run, ?2 step (NULL: outside steps), ?3 offset. */
static const char move_in[] =
    "INSERT OR IGNORE INTO tools (name, program, category) "
    " SELECT name, program, category FROM fj_tools;"
    "UPDATE fj_processes SET tool_id = (SELECT t.id FROM tools t JOIN fj_tools f "
    " ON f.name = t.name WHERE f.id = fj_processes.tool_id);"
    "UPDATE fj_signals SET tool_id = (SELECT t.id FROM tools t JOIN fj_tools f "
    " ON f.name = t.name WHERE f.id = fj_signals.tool_id), id = id + ?3, run_id = ?1, "
    " step_id = ?2, process_id = process_id + ?3;"
    "UPDATE fj_processes SET id = id + ?3, parent_id = parent_id + ?3, run_id = ?1, "
    " step_id = ?2;"
    "UPDATE fj_samples SET process_id = process_id + ?3;"
    "INSERT OR REPLACE INTO processes SELECT * FROM fj_processes;"
    "INSERT OR IGNORE INTO samples SELECT * FROM fj_samples;"
    "INSERT OR REPLACE INTO signals SELECT * FROM fj_signals;";

/* The step's or run's totals (table %1$s, row ?1) grown by the job run's. */
static const char grow[] =
    "UPDATE %1$s SET processes = %1$s.processes + j.processes, "
    " failed_processes = %1$s.failed_processes + j.failed_processes, "
    " cpu_ns = %1$s.cpu_ns + j.cpu_ns, rchar = %1$s.rchar + j.rchar, "
    " wchar = %1$s.wchar + j.wchar, read_bytes = %1$s.read_bytes + j.read_bytes, "
    " write_bytes = %1$s.write_bytes + j.write_bytes, "
    " net_tx_bytes = %1$s.net_tx_bytes + j.net_tx_bytes, "
    " net_rx_bytes = %1$s.net_rx_bytes + j.net_rx_bytes, "
    " iowait_ns = %1$s.iowait_ns + j.iowait_ns, runq_ns = %1$s.runq_ns + j.runq_ns, "
    " reclaim_ns = %1$s.reclaim_ns + j.reclaim_ns, sleep_ns = %1$s.sleep_ns + j.sleep_ns, "
    " images = coalesce(%1$s.images, 0) + coalesce(j.images, 0), "
    " peak_rss_kb = max(coalesce(%1$s.peak_rss_kb, 0), coalesce(j.peak_rss_kb, 0)), "
    " max_process_rss_kb = max(coalesce(%1$s.max_process_rss_kb, 0), "
    "  coalesce(j.max_process_rss_kb, 0)), "
    " peak_cores = max(coalesce(%1$s.peak_cores, 0), coalesce(j.peak_cores, 0)), "
    " start_ns = min(coalesce(%1$s.start_ns, j.start_ns), coalesce(j.start_ns, %1$s.start_ns)), "
    " end_ns = CASE WHEN %1$s.end_ns IS NULL OR j.end_ns IS NULL THEN %1$s.end_ns "
    "  ELSE max(%1$s.end_ns, j.end_ns) END "
    " FROM fj_runs j WHERE %1$s.id = ?1;"
    "UPDATE %1$s SET avg_cores = cpu_ns * 1.0 / (end_ns - start_ns) "
    " WHERE id = ?1 AND end_ns > start_ns;";

/* The head's own host (before its run grows), then the job's: jobs, processes, CPU, peak
 * memory. ?1 the run, ?2 the head's host, ?3 the job's host. */
static const char count_hosts[] =
    "INSERT OR IGNORE INTO fleet_hosts SELECT ?2, hostname, 1, 0, processes, cpu_ns, "
    " peak_rss_kb FROM main.runs WHERE id = ?1;"
    "INSERT INTO fleet_hosts SELECT ?3, hostname, 0, 1, processes, cpu_ns, peak_rss_kb "
    " FROM fj_runs WHERE true ON CONFLICT(host) DO UPDATE SET jobs = jobs + 1, "
    " processes = fleet_hosts.processes + excluded.processes, "
    " cpu_ns = fleet_hosts.cpu_ns + excluded.cpu_ns, "
    " peak_rss_kb = max(coalesce(fleet_hosts.peak_rss_kb, 0), "
    "  coalesce(excluded.peak_rss_kb, 0));";

static int count_host(sqlite3 *db, int64_t run, const char *head, const char *host)
{
	const char *tail = count_hosts;

	while (*tail) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK)
			return -1;
		if (!st)
			break;
		sqlite3_bind_int64(st, 1, run);
		sqlite3_bind_text(st, 2, head, -1, SQLITE_STATIC);
		if (sqlite3_bind_parameter_count(st) >= 3)
			sqlite3_bind_text(st, 3, host, -1, SQLITE_STATIC);
		int rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return -1;
	}
	return 0;
}

/* Runs each statement of sql with ?1..?3 bound to a, b (NULL if 0), c; -1 on an error. */
static int exec_bound(sqlite3 *db, const char *sql, int64_t a, int64_t b, int64_t c)
{
	const char *tail = sql;

	while (tail && *tail) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(db, tail, -1, &st, &tail) != SQLITE_OK)
			return -1;
		if (!st)
			break;
		int n = sqlite3_bind_parameter_count(st);
		if (n >= 1)
			sqlite3_bind_int64(st, 1, a);
		if (n >= 2 && b)
			sqlite3_bind_int64(st, 2, b);
		if (n >= 3)
			sqlite3_bind_int64(st, 3, c);
		int rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return -1;
	}
	return 0;
}

/* The job's own run on its host, copied into the fj_ tables. */
static int copy_job_run(sqlite3 *db, const char *verb, const char *host, int64_t job_run)
{
	char where[1200], h[300];
	const char *d = fleet_database();

	fleet_quote(host, h, sizeof(h));
	snprintf(where, sizeof(where), "_host = %s AND id = %" PRId64, h, job_run);
	if (fleet_copy_rows(db, verb, "runs", "fj_runs", where) < 0)
		return -1;
	snprintf(where, sizeof(where), "_host = %s AND run_id = %" PRId64, h, job_run);
	if (fleet_copy_rows(db, verb, "processes", "fj_processes", where) < 0 ||
	    fleet_copy_rows(db, verb, "signals", "fj_signals", where) < 0)
		return -1;
	snprintf(where, sizeof(where),
		 "_host = %s AND process_id IN (SELECT id FROM `%s`.processes FINAL WHERE _host = "
		 "%s AND run_id = %" PRId64 ")",
		 h, d, h, job_run);
	if (fleet_copy_rows(db, verb, "samples", "fj_samples", where) < 0)
		return -1;
	snprintf(where, sizeof(where),
		 "_host = %s AND id IN (SELECT tool_id FROM `%s`.processes FINAL WHERE _host = %s "
		 "AND run_id = %" PRId64 ")",
		 h, d, h, job_run);
	return fleet_copy_rows(db, verb, "tools", "fj_tools", where) < 0 ? -1 : 0;
}

/* ?1 run, ?2 key: the run's task step, if it is a Nextflow run's; else a new one with the
 * job run's times and ending (its totals grow as any step's). */
static const char find_task[] = "SELECT s.id FROM steps s JOIN runs r ON r.id = s.run_id "
				"WHERE s.run_id = ?1 AND s.key = ?2 AND r.engine = 'nextflow'";
static const char make_task[] =
    "INSERT INTO steps (run_id, key, kind, status, start_ns, end_ns, exit_code, signal) "
    "SELECT ?1, ?2, 'nextflow-task', coalesce(j.status, 'ok'), j.start_ns, j.end_ns, "
    "j.exit_code, j.signal FROM fj_runs j JOIN runs r ON r.id = ?1 AND r.engine = 'nextflow'";

/*
 * The step of a Nextflow task whose job another host ran. Nextflow's grid executors
 * submit `sbatch .command.run` from the task's work dir, outside any step; on one host
 * the aggregator makes the task's step, keyed by the work dir's hash, when the job
 * starts (correlate/batch.c). Across hosts the job meets its run only here, so it is
 * made here the same way. 0 if the run is not Nextflow's or the dir is no task's.
 */
static int64_t task_step(sqlite3 *db, int64_t run, const char *cwd)
{
	char key[96];
	int64_t id = 0;

	if (!nextflow_task_key(cwd, key, sizeof(key)))
		return 0;
	for (int pass = 0; pass < 2 && !id; pass++) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(db, pass ? make_task : find_task, -1, &st, NULL) !=
		    SQLITE_OK)
			return -1;
		sqlite3_bind_int64(st, 1, run);
		sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
		int rc = sqlite3_step(st);
		if (!pass && rc == SQLITE_ROW)
			id = sqlite3_column_int64(st, 0);
		else if (pass && rc == SQLITE_DONE && sqlite3_changes(db) == 1)
			id = sqlite3_last_insert_rowid(db);
		sqlite3_finalize(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return -1;
	}
	return id;
}

int fleet_merge_job(sqlite3 *db, const char *verb, const struct fleet_job *j, const char *head,
		    int64_t run, int64_t *step, int64_t offset)
{
	char sql[4096];
	const char *host = fleet_text(j->row, "_host");
	int64_t job_run = fleet_int(j->row, "run_id");

	if (sqlite3_exec(db, make_copies, NULL, NULL, NULL) != SQLITE_OK ||
	    (job_run && copy_job_run(db, verb, host, job_run) != 0))
		return -1;
	if (count_host(db, run, head, host) != 0)
		return -1;
	if (!*step && job_run && (*step = task_step(db, run, fleet_text(j->row, "cwd"))) < 0)
		return -1;
	if (exec_bound(db, move_in, run, *step, offset) != 0)
		return -1;
	if (*step) {
		snprintf(sql, sizeof(sql), grow, "steps");
		if (exec_bound(db, sql, *step, 0, 0) != 0)
			return -1;
	}
	return fleet_grow_run(db, run);
}

int fleet_grow_run(sqlite3 *db, int64_t run)
{
	char sql[4096];

	snprintf(sql, sizeof(sql), grow, "runs");
	return exec_bound(db, sql, run, 0, 0);
}
