/*
 * The job's side of the cross-host join: a run read from the fleet store that is
 * a batch job its own host could not link (batch_jobs.link = 'unmatched') says
 * whose it is across the fleet: the run and step of the submission that sent it
 * (by fleet_match's rules over every submission that could have, and every job
 * that could compete for them), an ambiguous one with its candidates, or none
 * found. Kept in fleet_job_parents for show and the report.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/db/fleet.h"
#include "cli/db/fleet_join.h"

#define DAY_NS INT64_C(86400000000000)

static void remember(sqlite3 *db, const char *job, const char *link, int candidates,
		     const struct fleet_sub *s)
{
	char run[400] = "";
	sqlite3_stmt *st;

	if (s)
		snprintf(run, sizeof(run), "%s:%" PRId64, fleet_text(s->row, "_host"),
			 fleet_int(s->row, "run_id"));
	if (sqlite3_prepare_v2(db,
			       "INSERT OR REPLACE INTO fleet_job_parents VALUES (?1, ?2, ?3, ?4)",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, link, -1, SQLITE_STATIC);
	if (s)
		sqlite3_bind_text(st, 3, run, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 4, candidates);
	sqlite3_step(st);
	sqlite3_finalize(st);
}

/* Matches the job (scheduler, id, cwd, first_ns) among its rivals; -1 said why. */
static int place(sqlite3 *db, const char *verb, const char *host, const char *sched,
		 const char *job, const char *cwd, int64_t first_ns)
{
	char subs_where[2048], jobs_where[2048], lit_cwd[1200], lit_sched[64];
	struct fleet_batch b;
	struct fleet_batch_query q = {.subs_where = subs_where, .jobs_where = jobs_where};
	int rc = -1;

	fleet_quote(cwd, lit_cwd, sizeof(lit_cwd));
	fleet_quote(sched, lit_sched, sizeof(lit_sched));
	snprintf(subs_where, sizeof(subs_where),
		 "jobs = 0 AND scheduler = %s AND (work_dir IS NULL OR work_dir = %s) AND "
		 "submit_ns BETWEEN %" PRId64 " AND %" PRId64,
		 lit_sched, lit_cwd, first_ns - DAY_NS, first_ns + FLEET_SKEW_NS);
	snprintf(jobs_where, sizeof(jobs_where),
		 "link = 'unmatched' AND scheduler = %s AND cwd = %s AND first_ns BETWEEN %" PRId64
		 " AND %" PRId64,
		 lit_sched, lit_cwd, first_ns - DAY_NS - FLEET_SKEW_NS, first_ns + DAY_NS);
	if (fleet_batch_load(&b, verb, &q) == 0) {
		fleet_match(b.subs, b.n_subs, b.jobs, b.n_jobs);
		for (int k = 0; k < b.n_jobs; k++) {
			const struct fleet_job *j = &b.jobs[k];
			if (!strcmp(fleet_text(j->row, "_host"), host) &&
			    !strcmp(fleet_text(j->row, "job_id"), job))
				remember(db, job, j->link, j->candidates,
					 j->sub >= 0 ? &b.subs[j->sub] : NULL);
		}
		rc = 0;
	}
	fleet_batch_free(&b);
	return rc;
}

int fleet_place_jobs(sqlite3 *db, const char *verb, const char *host, int64_t id)
{
	sqlite3_stmt *st;
	int rc = 0;

	if (sqlite3_exec(db,
			 "CREATE TEMP TABLE IF NOT EXISTS fleet_job_parents (job_id TEXT PRIMARY "
			 "KEY, fleet_link TEXT, fleet_run TEXT, fleet_candidates INTEGER)",
			 NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(
		db,
		"SELECT scheduler, job_id, cwd, first_ns FROM batch_jobs WHERE run_id = "
		"?1 AND link = 'unmatched' AND cwd IS NOT NULL LIMIT 20",
		-1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(st, 1, id);
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW)
		rc = place(db, verb, host, (const char *)sqlite3_column_text(st, 0),
			   (const char *)sqlite3_column_text(st, 1),
			   (const char *)sqlite3_column_text(st, 2), sqlite3_column_int64(st, 3));
	sqlite3_finalize(st);
	return rc;
}
