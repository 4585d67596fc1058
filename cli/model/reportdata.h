/*
 * What tracer report's page shows, as one JSON document: the run and its
 * explanation, steps (with their failures and files), every
 * process image as a compact row, signals, usage over time, right-sizing and
 * the pipeline's earlier runs. The page (report_template.html) draws it.
 */
#ifndef TRACER_CLI_REPORTDATA_H
#define TRACER_CLI_REPORTDATA_H

#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

/* NULL if the run is not there. */
json_t *report_data(sqlite3 *db, int64_t run, double headroom);

#endif
