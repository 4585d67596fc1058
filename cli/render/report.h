/* The run report: a run's process tree with per-process metrics. */
#ifndef TRACER_REPORT_H
#define TRACER_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

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
	bool run_ok;	/* internal: the run succeeded, so it handled every failure in it */
};

/* A run as the report reads it (model/runreport.c loads it from the database). */
struct run_report {
	json_t *run;	   /* its `runs` row, with liveness if not ended */
	json_t *totals;	   /* processes, images, failed, CPU, peak RSS, I/O, unfinished */
	json_t *roots;	   /* its processes as a forest ("children") */
	json_t *structure; /* steps with their tools, outside_steps, containers, batch jobs */
};

/* Text tree or JSON document (the render of model/runreport.h's report_print_run). */
void report_print(const struct run_report *r, const struct report_opts *o, FILE *out);

/* A report of at most this many lines: what tracer run prints at a run's end. */
#define REPORT_SCREENFUL 40

/* report_outcome.c: failed as the aggregator counts it (a non-zero exit, or a signal
 * but SIGPIPE). */
bool report_process_failed(json_t *p);
/* What goes before a process's command: "" or, for a fork that could not start a program
 * (model/runreport.c: exec_failed), a word that says the command is its parent's. */
const char *report_command_prefix(json_t *p);

#endif
