/* A Nextflow task's work dir, <work>/<2 hex>/<30 hex>: the task's identity, read by
 * the aggregator (a task's step key) and by the fleet reader (the step of a task
 * whose job ran on another host). */
#ifndef TRACER_TASKDIR_H
#define TRACER_TASKDIR_H

#include <stdbool.h>
#include <stddef.h>

/* ".../work/ab/cdef0123456789abcdef0123456789" -> "ab/cdef..."; false if DIR is none. */
bool nextflow_task_key(const char *dir, char *key, size_t size);

#endif
