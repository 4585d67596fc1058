/* The run report: a run's process tree with per-process metrics. */
#ifndef TRACER_REPORT_H
#define TRACER_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>
#include <sqlite3.h>

struct report_opts {
	bool json;
	int width; /* terminal columns; 0: not a terminal */
	/* Text: a report longer than this many lines is replaced by its summary (the
	 * longest steps, the failures, a pointer to `tracer show`), which fits; 0: no
	 * limit. */
	int max_lines;
	const char *db_path; /* for that pointer */
	/* Nothing watches after this report (tracer run's own daemons stopped):
	 * processes still running are never counted, not counted later. */
	bool watch_ended;
	bool summarise;	   /* internal: the run is over summary_above */
	json_t *structure; /* internal: steps and tools of the run */
	/* internal, a run not ended: its open steps' time runs to here (0: unknown) */
	int64_t open_until_ns;
	bool unwatched; /* internal: ... and no collector watches it now */
};

/* RUN is an id, a name, or NULL: the asking user's newest run (root: the newest of all).
 * Returns the id, 0 if none, -1 on error. */
int64_t report_find_run(sqlite3 *db, const char *spec);
/* Text tree or JSON document. 0, or -1 if the run does not exist. */
int report_print_run(sqlite3 *db, int64_t run_id, const struct report_opts *o, FILE *out);

/* A report of at most this many lines: what tracer run prints at a run's end. */
#define REPORT_SCREENFUL 40

/* report_outcome.c: failed as the aggregator counts it (a non-zero exit, or a signal
 * but SIGPIPE), and "0", "2", "sig 9+core" or the state of a process without an end. */
bool report_process_failed(json_t *p);
void report_status_text(json_t *p, char *out, size_t size);
/* report_summary.c: the summary part of a report (after its header): o->structure's longest steps,
 * the failed processes, where the rest is. */
void report_summary_print(FILE *out, json_t *run, json_t *totals, const struct report_opts *o);

#endif
