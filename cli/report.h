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
	/* Text: a run with more rows than this gets a summary (its longest steps and a
	 * pointer to `tracer show`) instead of every process; 0: no limit. */
	int summary_above;
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

#endif
