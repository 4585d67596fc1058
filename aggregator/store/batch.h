/* The batch_submissions and batch_jobs tables (schema v15): correlate/batch.c fills them. */
#ifndef TRACER_STORE_BATCH_H
#define TRACER_STORE_BATCH_H

#include <stdbool.h>
#include <stdint.h>

struct store;

struct batch_submission_row {
	int64_t id, run_id, step_id; /* step 0: none */
	const char *host_id, *scheduler, *submitter, *cwd, *work_dir, *script, *command, *job_name,
	    *array_spec, *engine_dir, *engine_rule, *engine_job_id; /* "" or NULL: NULL */
	uint32_t uid;
	bool waits;
	int64_t submit_ns;
	unsigned jobs;
};

struct batch_job_row {
	const char *host_id, *scheduler, *job_id, *link;
	int64_t run_id, step_id, submission_id, first_process_id, first_ns; /* 0: NULL */
	unsigned candidates;
	bool has_queue_wait;
	int64_t queue_wait_ns;
	const char *cwd, *snakefile, *engine_dir, *engine_rule, *engine_job_id;
};

/* Inserts or replaces the row (inside a transaction). 0, or -1 logged. */
int store_put_batch_submission(struct store *s, const struct batch_submission_row *r);
int store_put_batch_job(struct store *s, const struct batch_job_row *r);

#endif
