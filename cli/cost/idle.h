/*
 * Idle time, computed from rows the caller read: periods the host ran no run
 * with its CPU under a threshold, and stretches inside runs where none of the
 * run's steps was running. No SQL here: cmd_idle.c queries and prints.
 */
#ifndef TRACER_CLI_IDLE_H
#define TRACER_CLI_IDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One host sample: the interval (ts - interval, ts], epoch ns. */
struct host_tick {
	int64_t ts_epoch_ns, interval_ns;
	bool has_cpu; /* cpu_busy_pct is known */
	double cpu_busy_pct;
	bool run_active; /* some run overlapped the interval */
};

/* A step of a run, in run order then step start. */
struct run_step_span {
	int64_t run_id;
	const char *run_name;
	int64_t run_start_epoch_ns, run_end_epoch_ns; /* end: the window's end if running */
	int64_t step_start_epoch_ns;
	bool step_running; /* no end yet: it covers the rest of the run */
	int64_t step_end_epoch_ns;
};

struct idle_period {
	int64_t from_epoch_ns, to_epoch_ns;
	const char *run_name; /* for gaps inside runs; NULL for host idle */
};

struct idle_periods {
	struct idle_period *items;
	size_t n, cap;
};

/*
 * Host idle: runs of consecutive samples under threshold_pct with no run
 * active, at least min_ns long. A busy sample, an unknown CPU or a hole in
 * the samples (a gap longer than one interval) ends a period. 0, or -1 if
 * memory ran out.
 */
int idle_host_periods(const struct host_tick *ticks, size_t n, double threshold_pct, int64_t min_ns,
		      struct idle_periods *out);
/*
 * Inside runs: from the run's start, each stretch of at least min_ns that no
 * step covered, up to the run's end. Steps may overlap. 0, or -1 (memory).
 */
int idle_run_gaps(const struct run_step_span *spans, size_t n, int64_t min_ns,
		  struct idle_periods *out);
/* Seconds in all the periods. */
/* Their total length, ns. */
int64_t idle_total_ns(const struct idle_periods *p);
double idle_total_seconds(const struct idle_periods *p);

#endif
