/*
 * The cross-host join of batch jobs to the run steps that submitted them, over
 * the fleet store: the matching (fleet_match.c, pure, unit-tested) and the merge
 * of a joined job's records under its submitter's step (fleet_merge.c).
 */
#ifndef TRACER_CLI_FLEET_JOIN_H
#define TRACER_CLI_FLEET_JOIN_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

/* Clocks of two hosts (NTP: milliseconds) may disagree by this much: a job may start this long
 * "before" its submission, and a waiting submitter end this long "before" its job. */
#define FLEET_SKEW_NS INT64_C(250000000)

/* A submission that no job of its own host took (batch_submissions, jobs = 0). */
struct fleet_sub {
	json_t *row;	/* the store's batch_submissions row (borrowed) */
	int64_t end_ns; /* its submitter's end; 0 while running or unknown */
	bool failed;	/* its submitter exited non-zero or was killed */
	bool ours;	/* of the run being read */
	int taken;	/* jobs joined to it so far */
};

/* A job its own host could not link (batch_jobs, link = 'unmatched'). */
struct fleet_job {
	json_t *row;	  /* the store's batch_jobs row (borrowed) */
	int64_t uid;	  /* its first process's; -1 unknown */
	const char *step; /* its first process's Slurm step (batch, 0, ...); "" unknown */
	const char *link; /* decided: linked, ordered, ambiguous, unmatched */
	int candidates;	  /* submissions that could have sent it */
	int sub;	  /* the joined submission's index; -1 none */
	bool ours;	  /* one of its candidates is of the run being read */
};

/* A column as an integer (ClickHouse quotes 64-bit ones), or as text ("" when NULL). */
int64_t fleet_int(json_t *row, const char *column);
const char *fleet_text(json_t *row, const char *column);

/* Decides every job, oldest first (jobs sorted by first_ns): each takes the earliest
 * submission that could have sent it when all of them are of one step or one rule of one
 * run (linked if only one, else ordered, as Slurm starts equal jobs in submission order);
 * submissions of several runs or steps it cannot tell apart: ambiguous, never a guess. */
void fleet_match(struct fleet_sub *subs, int n_subs, struct fleet_job *jobs, int n_jobs);

/* fleet_rows.c, for the joins: the store's answer as row objects (NULL said why);
 * "host:id" -> processes row (uid, slurm_step, end_ns, exit_code, signal) for the
 * (_host, id) pairs select names; the structs filled from rows (ours: of the run
 * host:run, or every one when host is NULL); whether the store has the batch tables. */
json_t *fleet_rows_of(const char *verb, const char *sql);
json_t *fleet_processes_by_key(const char *verb, const char *select);
int fleet_fill_subs(struct fleet_sub *subs, json_t *rows, json_t *procs, const char *host,
		    int64_t run);
int fleet_fill_jobs(struct fleet_job *jobs, json_t *rows, json_t *procs);
int fleet_has_batch_tables(const char *verb, const char *d);

/* Which of the fleet's batch rows a join reads: the submissions and the jobs each
 * where selects (SQL over the store's table), in order (oldest first when NULL), at most
 * max of each (FLEET_BATCH_MAX when 0); ours marks the submissions of host's run (every
 * one when host is NULL). */
#define FLEET_BATCH_MAX 2000
struct fleet_batch_query {
	const char *subs_where, *subs_order;
	const char *jobs_where, *jobs_order;
	int max;
	const char *host;
	int64_t run;
};

/* What fleet_batch_load read: the rows (owned), their processes, and the structs
 * fleet_match works on (borrowing the rows). */
struct fleet_batch {
	json_t *sub_rows, *job_rows, *sub_procs, *job_procs;
	struct fleet_sub *subs;
	struct fleet_job *jobs;
	int n_subs, n_jobs;
};

/* fleet_rows.c: reads the rows q names and fills subs and jobs; 0, or -1 said why.
 * fleet_batch_free after either. */
int fleet_batch_load(struct fleet_batch *b, const char *verb, const struct fleet_batch_query *q);
void fleet_batch_free(struct fleet_batch *b);

/* fleet_merge.c: run's totals grown by those of the run row in fj_runs (which exists). */
int fleet_grow_run(sqlite3 *db, int64_t run);

/* Copies the job's own run (on its host) under run and *step of db: its processes,
 * samples, signals and tools, ids moved by offset (head: the run's own host); the step's and run's
 * totals grow by the job run's. No *step and a Nextflow run: the task's step of the job's work
 * dir, found or made, is *step. 0, or -1 said why. */
int fleet_merge_job(sqlite3 *db, const char *verb, const struct fleet_job *j, const char *head,
		    int64_t run, int64_t *step, int64_t offset);

#endif
