/*
 * One run across hosts: a run whose steps submitted batch jobs (sbatch, srun,
 * qsub, bsub) that ran on other hosts holds those jobs when read from the fleet
 * store. Both sides are shipped (batch_submissions from the submitter's host,
 * batch_jobs from the job's); the join is made here, where every host's records
 * meet, by fleet_match's keys over the submissions of every host that could have
 * sent the same jobs (so a job two runs could have sent is said to be ambiguous,
 * never given to the run being read). Bounded: the submissions and jobs of the
 * run's work dirs from a day before its first submission to a day after its end.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/db/fleet.h"
#include "cli/db/fleet_join.h"
#include "cli/render/clierror.h"

#define DAY_NS INT64_C(86400000000000)
/* Each joined job's process ids move past every id a host gives out. */
#define ID_OFFSET (INT64_C(1) << 40)

/* The window and work dirs of the run's submissions no job of its host took. */
struct scope {
	char host[300]; /* quoted */
	int64_t run, from_ns, to_ns;
	const char *d;
};

static bool run_window(sqlite3 *db, struct scope *w)
{
	sqlite3_stmt *st;
	bool any = false;

	if (sqlite3_prepare_v2(db,
			       "SELECT min(s.submit_ns), max(coalesce(r.end_ns, s.submit_ns)) FROM "
			       "batch_submissions s JOIN runs r ON r.id = s.run_id WHERE s.run_id "
			       "= ? AND s.jobs = 0 AND s.scheduler != 'aws-batch'",
			       -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_int64(st, 1, w->run);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		w->from_ns = sqlite3_column_int64(st, 0) - DAY_NS;
		w->to_ns = sqlite3_column_int64(st, 1) + DAY_NS;
		any = true;
	}
	sqlite3_finalize(st);
	return any;
}

/* Every submission, on any host, that could compete for the run's jobs. */
static const char *subs_where(const struct scope *w, char *out, size_t size)
{
	snprintf(out, size,
		 "jobs = 0 AND scheduler != 'aws-batch' AND submit_ns BETWEEN %" PRId64
		 " AND %" PRId64 " AND (work_dir IS NULL OR work_dir IN (SELECT work_dir FROM "
		 "`%s`.batch_submissions FINAL WHERE _host = %s AND run_id = %" PRId64 "))",
		 w->from_ns, w->to_ns, w->d, w->host, w->run);
	return out;
}

/* The jobs no host linked that started in those work dirs then. */
static const char *jobs_where(const struct scope *w, char *out, size_t size)
{
	snprintf(out, size,
		 "link = 'unmatched' AND first_ns BETWEEN %" PRId64 " AND %" PRId64
		 " AND cwd IN (SELECT work_dir FROM `%s`.batch_submissions FINAL WHERE _host = %s "
		 "AND run_id = %" PRId64 " AND work_dir IS NOT NULL)",
		 w->from_ns - FLEET_SKEW_NS, w->to_ns, w->d, w->host, w->run);
	return out;
}

/* The job's row in our batch_jobs, as the run's (joined, or ambiguous: not joined). */
static void record_job(sqlite3 *db, const struct fleet_job *j, const struct fleet_sub *s,
		       int64_t run, int64_t step, int64_t offset)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(
		db,
		"INSERT OR REPLACE INTO batch_jobs (host_id, scheduler, job_id, run_id, step_id, "
		"submission_id, link, candidates, first_process_id, first_ns, queue_wait_ns, cwd, "
		"snakefile, engine_dir, engine_rule, engine_job_id) VALUES (?1, ?2, ?3, ?4, ?5, "
		"?6, "
		"?7, ?8, ?9, ?10, ?11, nullif(?12, ''), nullif(?13, ''), nullif(?14, ''), "
		"nullif(?15, ''), nullif(?16, ''))",
		-1, &st, NULL) != SQLITE_OK)
		return;
	json_t *r = j->row;
	sqlite3_bind_text(st, 1, fleet_text(r, "_host"), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, fleet_text(r, "scheduler"), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, fleet_text(r, "job_id"), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, run);
	if (step)
		sqlite3_bind_int64(st, 5, step);
	if (s)
		sqlite3_bind_int64(st, 6, fleet_int(s->row, "id"));
	sqlite3_bind_text(st, 7, j->link, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 8, j->candidates);
	if (s)
		sqlite3_bind_int64(st, 9, fleet_int(r, "first_process_id") + offset);
	sqlite3_bind_int64(st, 10, fleet_int(r, "first_ns"));
	if (s)
		sqlite3_bind_int64(st, 11,
				   fleet_int(r, "first_ns") - fleet_int(s->row, "submit_ns"));
	const char *text[] = {"cwd", "snakefile", "engine_dir", "engine_rule", "engine_job_id"};
	for (int i = 0; i < 5; i++)
		sqlite3_bind_text(st, 12 + i, fleet_text(r, text[i]), -1, SQLITE_STATIC);
	sqlite3_step(st);
	sqlite3_finalize(st);
	if (s) {
		char sql[128];
		snprintf(sql, sizeof(sql),
			 "UPDATE batch_submissions SET jobs = jobs + 1 WHERE id = %" PRId64,
			 fleet_int(s->row, "id"));
		sqlite3_exec(db, sql, NULL, NULL, NULL);
	}
}

/* Joins the decided jobs of the run; ambiguous ones are listed, not joined. */
static int apply(sqlite3 *db, const char *verb, struct fleet_sub *subs, struct fleet_job *jobs,
		 int n_jobs, const char *head, int64_t run)
{
	int64_t joined = 0;

	for (int k = 0; k < n_jobs; k++) {
		struct fleet_job *j = &jobs[k];
		struct fleet_sub *s = j->sub >= 0 ? &subs[j->sub] : NULL;
		if (s && s->ours) {
			int64_t offset = ++joined * ID_OFFSET, step = fleet_int(s->row, "step_id");
			if (fleet_merge_job(db, verb, j, head, run, &step, offset))
				return -1;
			record_job(db, j, s, run, step, offset);
		} else if (!s && j->ours) {
			record_job(db, j, NULL, run, 0, 0);
		}
	}
	return 0;
}

static int join(sqlite3 *db, const char *verb, const char *host, const struct scope *w)
{
	char subs[2048], jobs[2048];
	struct fleet_batch b;
	struct fleet_batch_query q = {
	    .subs_where = subs, .jobs_where = jobs, .host = host, .run = w->run};
	int rc = -1;

	subs_where(w, subs, sizeof(subs));
	jobs_where(w, jobs, sizeof(jobs));
	if (fleet_batch_load(&b, verb, &q) == 0) {
		fleet_match(b.subs, b.n_subs, b.jobs, b.n_jobs);
		rc = apply(db, verb, b.subs, b.jobs, b.n_jobs, host, w->run);
	}
	fleet_batch_free(&b);
	return rc;
}

int fleet_join_batch(sqlite3 *db, const char *verb, const char *host, int64_t id)
{
	char where[600];
	struct scope w = {.run = id, .d = fleet_database()};
	int tables = fleet_has_batch_tables(verb, w.d);

	if (tables <= 0)
		return tables;

	fleet_quote(host, w.host, sizeof(w.host));
	/* Both sides as the host has them: its submissions, and its jobs linked here. */
	snprintf(where, sizeof(where), "_host = %s AND run_id = %" PRId64, w.host, id);
	if (fleet_copy_rows(db, verb, "batch_submissions", "batch_submissions", where) < 0 ||
	    fleet_copy_rows(db, verb, "batch_jobs", "batch_jobs", where) < 0)
		return -1;
	/* Every job's host as the fleet names hosts (its shipper's id), as for joined ones. */
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "UPDATE batch_jobs SET host_id = ?1", -1, &st, NULL) ==
	    SQLITE_OK) {
		sqlite3_bind_text(st, 1, host, -1, SQLITE_STATIC);
		sqlite3_step(st);
		sqlite3_finalize(st);
	}
	/* The run may itself be a job another host's run submitted: say whose. */
	if (fleet_place_jobs(db, verb, host, id) != 0)
		return -1;
	if (!run_window(db, &w))
		return 0;
	return join(db, verb, host, &w);
}
