/*
 * `tracer --fleet runs`: a run whose batch jobs ran on other hosts is one row, as
 * `show` reads it (fleet_join.c): each joined job's own run on its host is folded
 * into the submitter's row (its CPU, I/O, counts; peak memory the largest one host
 * held) and its signals count there. The same rules over the listed runs' window:
 * every submission no job of its own host took and every unlinked job from a day
 * before the oldest listed run on, the newest 2000 of each.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/db/clidb.h"
#include "cli/db/fleet.h"
#include "cli/db/fleet_join.h"

#define DAY_NS INT64_C(86400000000000)

static int by_first_ns(const void *a, const void *b)
{
	int64_t x = fleet_int(((const struct fleet_job *)a)->row, "first_ns");
	int64_t y = fleet_int(((const struct fleet_job *)b)->row, "first_ns");

	return (x > y) - (x < y);
}

/* The listed run a (host, host's run id) is, 0 if not listed. */
static int64_t listed(sqlite3 *db, const char *host, int64_t host_run)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, "SELECT id FROM fleet_runs WHERE host = ?1 AND host_run_id = ?2",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, host, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, host_run);
	return cli_first_id(st);
}

static int fold(sqlite3 *db, int64_t head, int64_t job_run)
{
	char sql[512];

	snprintf(sql, sizeof(sql),
		 "CREATE TEMP TABLE IF NOT EXISTS fj_runs AS SELECT * FROM main.runs WHERE 0;"
		 "DELETE FROM fj_runs; INSERT INTO fj_runs SELECT * FROM main.runs WHERE id = "
		 "%" PRId64 ";",
		 job_run);
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK || fleet_grow_run(db, head) != 0)
		return -1;
	snprintf(sql, sizeof(sql),
		 "UPDATE signals SET run_id = %" PRId64 " WHERE run_id = %" PRId64 ";"
		 "DELETE FROM runs WHERE id = %" PRId64 "; DELETE FROM fleet_runs WHERE id = "
		 "%" PRId64 ";",
		 head, job_run, job_run, job_run);
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

static int apply(sqlite3 *db, struct fleet_sub *subs, struct fleet_job *jobs, int n_jobs)
{
	for (int k = 0; k < n_jobs; k++) {
		const struct fleet_job *j = &jobs[k];
		if (j->sub < 0)
			continue;
		const struct fleet_sub *s = &subs[j->sub];
		int64_t head = listed(db, fleet_text(s->row, "_host"), fleet_int(s->row, "run_id"));
		int64_t job_run =
		    listed(db, fleet_text(j->row, "_host"), fleet_int(j->row, "run_id"));
		if (head && job_run && head != job_run && fold(db, head, job_run) != 0)
			return -1;
	}
	return 0;
}

int fleet_join_runs_list(sqlite3 *db, const char *verb)
{
	char since[512], subs_where[1024], jobs_where[1024];
	const char *d = fleet_database();
	int tables = fleet_has_batch_tables(verb, d);
	struct fleet_batch b;
	struct fleet_batch_query q = {.subs_where = subs_where,
				      .subs_order = "submit_ns DESC",
				      .jobs_where = jobs_where,
				      .jobs_order = "first_ns DESC"};
	int rc = -1;

	if (tables <= 0)
		return tables;
	/* From a day before the oldest listed run (copied already: no FINAL over every run
	 * of the store for each of the queries below). */
	sqlite3_stmt *st;
	int64_t oldest = 0;
	if (sqlite3_prepare_v2(db, "SELECT coalesce(min(start_ns), 0) FROM runs", -1, &st, NULL) ==
		SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		oldest = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	snprintf(since, sizeof(since), "%" PRId64, oldest - DAY_NS);
	snprintf(subs_where, sizeof(subs_where),
		 "jobs = 0 AND scheduler != 'aws-batch' AND submit_ns >= %s", since);
	snprintf(jobs_where, sizeof(jobs_where), "link = 'unmatched' AND first_ns >= %s", since);
	if (fleet_batch_load(&b, verb, &q) == 0) {
		qsort(b.jobs, (size_t)b.n_jobs, sizeof(*b.jobs), by_first_ns);
		fleet_match(b.subs, b.n_subs, b.jobs, b.n_jobs);
		rc = apply(db, b.subs, b.jobs, b.n_jobs);
	}
	fleet_batch_free(&b);
	return rc;
}
