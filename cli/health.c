#include "cli/health.h"

#include <string.h>

#include "cli/jsonfield.h"

/* The newest collector says how the host is watched now: every probe there, and alive. */
static bool newest_collector_ok(const json_t *s, int64_t now_epoch_ns)
{
	const json_t *probes = json_object_get(s, "probes");

	for (size_t k = 0; k < json_array_size(probes); k++)
		if (!strcmp(jstr(json_array_get(probes, k), "state"), "missing"))
			return false;
	return jint(s, "final") || now_epoch_ns - jint(s, "last_seen_ns") <= HEALTH_STALE_NS;
}

bool health_verdict(const json_t *streams, const json_t *losses, const json_t *agg,
		    const json_t *shipping, int64_t now_epoch_ns)
{
	if (json_array_size(losses))
		return false;
	/* Events the aggregator had no memory for are lost; the others are what
	 * correlation meets on any busy host (docs/schema.md). */
	if (agg && jint(agg, "events_skipped"))
		return false;
	for (size_t i = 0; i < json_array_size(streams); i++) {
		const json_t *s = json_array_get(streams, i);
		if (jint(s, "kernel_drops") || jint(s, "collector_drops") || jint(s, "seq_gaps"))
			return false;
		if (i == 0 && !newest_collector_ok(s, now_epoch_ns))
			return false;
	}
	if (shipping &&
	    (jint(shipping, "dropped_records") || jint(shipping, "dead_letter_records")))
		return false;
	return true;
}
