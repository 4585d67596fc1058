/* Right-sizing of steps (docs/cost.md has the rule); shared by recommend and report. */
#ifndef TRACER_RIGHTSIZE_H
#define TRACER_RIGHTSIZE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "cli/usage.h"

/* Finished steps of a run (or of a pipeline's runs), one row per step name. */
json_t *rightsize_steps(sqlite3 *db, bool pipeline, int64_t scope);
/* Adds given / recommended memory and CPUs and verdicts to one row. */
void rightsize_step(json_t *s, double headroom, const struct host_capacity *cap);

#endif
