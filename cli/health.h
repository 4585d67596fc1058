/* Whether tracer is healthy, from what tracer status reads (docs/operations.md). */
#ifndef TRACER_CLI_HEALTH_H
#define TRACER_CLI_HEALTH_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

/* How long a collector may stay silent before it counts as gone. */
#define HEALTH_STALE_NS (60LL * 1000000000LL)

/*
 * Healthy: nothing lost (no loss rows, no kernel or collector drops or
 * sequence gaps in any stream, no event the aggregator had no memory for),
 * the newest collector's probes none missing and that collector heard from
 * within HEALTH_STALE_NS unless it ended, and no records dropped or set aside
 * by the shipper. streams newest first; agg and shipping may be NULL.
 */
bool health_verdict(const json_t *streams, const json_t *losses, const json_t *agg,
		    const json_t *shipping, int64_t now_epoch_ns);
/* The first reason health_verdict is false, as a phrase; NULL when healthy. */
const char *health_problem(const json_t *streams, const json_t *losses, const json_t *agg,
			   const json_t *shipping, int64_t now_epoch_ns);

#endif
