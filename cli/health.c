#include "cli/health.h"

#include <string.h>

#include "cli/jsonfield.h"

/* Why the newest collector does not watch the host as it should; NULL if it does. */
static const char *newest_collector_problem(const json_t *s, int64_t now_epoch_ns)
{
	const json_t *probes = json_object_get(s, "probes");

	for (size_t k = 0; k < json_array_size(probes); k++)
		if (!strcmp(jstr(json_array_get(probes, k), "state"), "missing"))
			return "a probe is missing (see probes below)";
	if (!jint(s, "final") && now_epoch_ns - jint(s, "last_seen_ns") > HEALTH_STALE_NS)
		return "no collector heard from in the last minute";
	return NULL;
}

const char *health_problem(const json_t *streams, const json_t *losses, const json_t *agg,
			   const json_t *shipping, int64_t now_epoch_ns)
{
	if (json_array_size(losses))
		return "events were lost (see the losses below)";
	/* Events the aggregator had no memory for are lost; the others are what
	 * correlation meets on any busy host (docs/schema.md). */
	if (agg && jint(agg, "events_skipped"))
		return "the aggregator skipped events for want of memory";
	for (size_t i = 0; i < json_array_size(streams); i++) {
		const json_t *s = json_array_get(streams, i);
		if (jint(s, "kernel_drops") || jint(s, "collector_drops") || jint(s, "seq_gaps"))
			return "a collector lost events (see lost: below)";
		const char *why = i == 0 ? newest_collector_problem(s, now_epoch_ns) : NULL;
		if (why)
			return why;
	}
	if (shipping &&
	    (jint(shipping, "dropped_records") || jint(shipping, "dead_letter_records")))
		return "the shipper dropped records or set them aside";
	return NULL;
}

bool health_verdict(const json_t *streams, const json_t *losses, const json_t *agg,
		    const json_t *shipping, int64_t now_epoch_ns)
{
	return health_problem(streams, losses, agg, shipping, now_epoch_ns) == NULL;
}
