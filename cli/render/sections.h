/* Sections of a run's text that show, explain and the run report share. */
#ifndef TRACER_CLI_SECTIONS_H
#define TRACER_CLI_SECTIONS_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/* containers_text.c: the run's containers (model/containers.h reads them) and the
 * container CLIs no container was linked to; nothing if there are none. */
void containers_print(FILE *out, const json_t *containers, int64_t unlinked, const char *indent);
/* batch_text.c: the batch jobs and the work handed elsewhere of a document with
 * model/batchjobs.h's arrays (nothing if both are empty). */
void batch_print(FILE *out, json_t *doc);
/* The run report's summary of them: how many, the queue wait's median and longest, and
 * the jobs that waited longest, with the names sacct gives (a few lines whatever the count). */
void batch_summary_print(FILE *out, json_t *doc);

#endif
