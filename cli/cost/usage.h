/*
 * What each process used of the host within a time window: CPU seconds and
 * memory GiB-seconds. Memory is the integral of its sampled RSS (held until
 * the next sample, to its end); a process never sampled (shorter than one
 * period) counts its peak RSS for its whole life. CPU of a process that
 * straddles the window is taken from its samples' cumulative CPU at the
 * window's edges (linear between samples). docs/cost.md has the rule.
 */
#ifndef TRACER_USAGE_H
#define TRACER_USAGE_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

struct process_usage {
	int64_t process_id, run_id, step_id;
	uint32_t uid, gid;
	char run[128], pipeline[128], step[128], tool[128], memory_cgroup[256];
	double cpu_s, mem_gib_s;
};

struct host_capacity {
	int cpus;
	double memory_gib;
	int64_t first_sample_ns, last_sample_ns;
	bool this_host; /* no samples: this machine's, which recorded the runs */
};

/* Calls fn for every process alive within [from, to]. -1 on a database error. */
int usage_scan(sqlite3 *db, int64_t from_ns, int64_t to_ns, int64_t only_run,
	       void (*fn)(const struct process_usage *u, void *ctx), void *ctx);
/*
 * The host's CPUs and memory from its samples; with none (a `tracer run`
 * shorter than the one-second sample period), this machine's own when the
 * database was recorded here (its collector's machine id), else 0.
 */
int usage_capacity(sqlite3 *db, struct host_capacity *cap);

#endif
