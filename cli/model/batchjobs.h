/* A run's batch jobs and the work it handed to schedulers elsewhere (schema v15). */
#ifndef TRACER_CLI_BATCHJOBS_H
#define TRACER_CLI_BATCHJOBS_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

/* {"batch_jobs": [...], "batch_elsewhere": [...]}: empty arrays before schema v15. */
json_t *batch_load(sqlite3 *db, int64_t run_id);
/* Adds batch (consumed) to the steps document: its arrays, and each linked job's queue
 * wait and job id on its step (queue_wait_ns, batch_job). */
void batch_add(json_t *structure, json_t *batch);

#endif
