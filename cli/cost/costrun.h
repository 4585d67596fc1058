/*
 * A host's cost over a window, split by who used it (docs/cost.md): the
 * computation behind `tracer cost` and the cost section of `tracer report`.
 * No printing except the price resolution's own reasons.
 */
#ifndef TRACER_CLI_COSTRUN_H
#define TRACER_CLI_COSTRUN_H

#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli/cost/costsplit.h"
#include "cli/cost/hostprice.h"
#include "cli/cost/usage.h"
#include "cli/render/export.h"

struct cost_query {
	const char *by; /* run, pipeline, step, tool, user, costcenter */
	struct cost_centers centers;
	struct cost_tally tally;
};

struct cost_report {
	sqlite3 *db;
	const char *by;
	int64_t run, from_ns, to_ns;
	/* Of the window, how long a collector of this database watched (from
	 * collector_stats). A window of time (--since) bills only that, unless
	 * whole_window; a run's window is its span. */
	int64_t observed_ns;
	bool since_window, whole_window;
	double cpu_weight;
	bool priced; /* false: shares of the host only, no dollars */
	enum export_format format;
	struct host_price price;
	struct host_capacity capacity;
	const struct cost_tally *tally;
	struct cost_totals totals;
};

/* The buckets add seconds from ns sums; ns again, as every other JSON says CPU. */
static inline json_int_t cost_cpu_ns(double cpu_s)
{
	return (json_int_t)llround(cpu_s * 1e9);
}

/* The host's CPUs and memory are unknown: no host samples, not recorded here. */
#define COST_NO_CAPACITY (-3)

/*
 * How long of [from, to] some collector writing db watched: the union of its
 * streams' spans (a stream still writing reaches now). Time no collector saw
 * is not the host's to bill: nothing says it even ran.
 */
int64_t cost_observed_ns(sqlite3 *db, int64_t from_ns, int64_t to_ns); /* -1: no streams */
/* r's window becomes the run's span (to the last host sample while it runs). */
void cost_run_window(sqlite3 *db, int64_t run, struct cost_report *r);
/*
 * Prices r's window (verb prefixes what the price resolution says) and splits
 * it over cq's buckets: 0; HOST_PRICE_ERROR (said why); COST_NO_CAPACITY; -1
 * on a database error. Unpriced, the host costs one unit: each part is its share.
 */
int cost_compute(sqlite3 *db, const char *verb, const struct price_options *po,
		 struct cost_query *cq, struct cost_report *r);
/* What `tracer cost --json` prints: the parts, idle, total, price and split. */
json_t *cost_json(const struct cost_report *r);

#endif
