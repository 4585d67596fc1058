/*
 * Measured CPU energy (docs/energy.md, "RAPL"): the package counters the
 * collector recorded (energy_samples) over a run's span, shared among what ran
 * by CPU time. A run's processes then count, per CPU-second, the package's
 * joules over the span divided by the host's busy CPU-seconds over it.
 */
#ifndef TRACER_CLI_ENERGYMEASURE_H
#define TRACER_CLI_ENERGYMEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

/* One reading of one zone's counter, in time order. */
struct rapl_reading {
	int64_t ts_ns;
	uint64_t energy_uj;
	uint64_t max_range_uj; /* 0: unknown */
};

/*
 * Joules from the first reading to the last: the sum of the differences, a
 * counter that went down having wrapped past max_range_uj (to 0). A decrease
 * with no range known cannot be measured: it counts in *unknown_wraps and adds
 * nothing.
 */
double rapl_joules(const struct rapl_reading *r, size_t n, unsigned *unknown_wraps);

struct energy_measured {
	int64_t from_ns, to_ns; /* the readings that bracket the span */
	double joules;		/* the packages', summed */
	unsigned zones, unknown_wraps;
	double host_cpu_s;	/* the host's busy CPU over [from_ns, to_ns] */
	double watts_per_cpu_s; /* joules / max(host CPU, the run's CPU) */
};

/*
 * The package energy of host_id ("" any) over [from, to], with run_cpu_s the
 * least CPU time to share it by. 1 when measured (readings of a package
 * bracket the span, or cover 90% of it), 0 when not, -1 on a database error.
 */
int rapl_measure(sqlite3 *db, const char *host_id, int64_t from, int64_t to, double run_cpu_s,
		 struct energy_measured *out);

/* {"<run id>": {joules, host_cpu_s, watts_per_cpu_second, from_ns, to_ns, zones}} of
 * the runs measured: run, or those overlapping [from, to] when run is 0. NULL on error. */
json_t *rapl_runs(sqlite3 *db, int64_t run, int64_t from, int64_t to);

#endif
