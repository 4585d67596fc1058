/*
 * Splitting a host's cost over who used it (docs/cost.md): each bucket (a
 * run, step, tool, user or cost center) gets cpu_weight of the cost by its
 * share of the CPU capacity and the rest by its share of the memory capacity;
 * what no bucket used is idle. No SQL and no printing: cmd_cost.c does those.
 */
#ifndef TRACER_CLI_COSTSPLIT_H
#define TRACER_CLI_COSTSPLIT_H

#include <stdbool.h>
#include <stddef.h>

struct cost_bucket {
	char key[256];
	double cpu_s, mem_gib_s;
	unsigned processes;
	double usd, share; /* set by cost_split */
};

struct cost_tally {
	struct cost_bucket *items;
	size_t n, cap;
	double cpu_s, mem_gib_s; /* over every bucket */
};

/* Adds one process's use to the bucket named key. false if memory ran out (not counted). */
bool cost_tally_add(struct cost_tally *t, const char *key, double cpu_s, double mem_gib_s);
void cost_tally_free(struct cost_tally *t);

struct cost_totals {
	double total_usd, work_usd, idle_usd;
};

/*
 * Prices the buckets of a host that cost usd_per_hour for seconds, with cpus
 * and memory_gib of capacity; sorts them by cost, largest first. The buckets
 * and idle add up to the total exactly.
 */
void cost_split(struct cost_tally *t, double usd_per_hour, double seconds, int cpus,
		double memory_gib, double cpu_weight, struct cost_totals *out);

/* Cost centers by user, group or cgroup prefix ([users], [groups], [cgroups]). */
struct cost_center_rule {
	char kind[8]; /* user, group, cgroup */
	char key[256];
	char center[128];
};

struct cost_centers {
	struct cost_center_rule *items;
	size_t n, cap;
};

/* One NAME = CENTER line of a section; false for a section it does not know. */
bool cost_centers_add(struct cost_centers *c, const char *section, const char *name,
		      const char *center);
/* The user's center, else the group's, else the longest matching cgroup prefix's,
 * else "(unassigned)". */
const char *cost_center_of(const struct cost_centers *c, const char *user, const char *group,
			   const char *cgroup);
void cost_centers_free(struct cost_centers *c);

#endif
