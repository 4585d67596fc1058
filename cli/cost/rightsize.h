/* Right-sizing of steps (docs/cost.md has the rule); shared by recommend and report. */
#ifndef TRACER_RIGHTSIZE_H
#define TRACER_RIGHTSIZE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "cli/cost/usage.h"

/* Finished steps of a run (or of a pipeline's runs), one row per step name. */
json_t *rightsize_steps(sqlite3 *db, bool pipeline, int64_t scope);
/* Steps whose wall time, over all their runs, is under this get no advice ("too_short"). */
#define RIGHTSIZE_MIN_WALL_NS (10LL * 1000000000LL)

/*
 * Adds given / recommended memory and CPUs and verdicts to one row. The
 * memory advised is never below the observed peak; a step OOM-killed or
 * reclaiming at its limit is under-provisioned and advised above its limit;
 * CPUs advised never exceed the host's.
 */
void rightsize_step(json_t *s, double headroom, const struct host_capacity *cap);

struct price_table;
/* What the steps cost on the host now and on what fits, summed over steps. */
struct rightsize_totals {
	double usd_now, usd_recommended;
};
/*
 * Adds to a sized row the cheapest on-demand instance that fits its
 * recommendation ("instance", with what the step's wall time costs there and
 * now: "usd_recommended", "usd_now", "usd_saving") and the cheapest spot one
 * ("spot"), from the table's region and of the architecture the step's
 * binaries ran on (NULL: any); a cheaper type of another architecture is only
 * an option ("other_arch"), as it needs rebuilt binaries. The totals count a
 * step at the cheaper of now and recommended.
 */
void rightsize_price(json_t *s, const struct price_table *t, const char *region, const char *arch,
		     double usd_per_hour_now, struct rightsize_totals *totals);

#endif
