/* The run report read from the database; render/report.h prints it. */
#ifndef TRACER_CLI_RUNREPORT_H
#define TRACER_CLI_RUNREPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "cli/render/report.h"

/* The run's row, processes, totals and structure: 0, or -1 if the run does not
 * exist (nothing to free). watch_ended: see report_opts. */
int run_report_load(sqlite3 *db, int64_t run_id, bool watch_ended, struct run_report *r);
void run_report_free(struct run_report *r);
/* Loads and prints: text tree or JSON document. 0, or -1 if the run does not exist. */
int report_print_run(sqlite3 *db, int64_t run_id, const struct report_opts *o, FILE *out);

#endif
