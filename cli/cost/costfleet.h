/*
 * `tracer --fleet URL cost --since D`: every host of the fleet store priced as that
 * host's own `tracer cost --since D` prices it (its capacity, its observed time, the
 * same price options), one host's rows loaded at a time, then summed by part, with a
 * per-host breakdown (docs/cost.md, docs/shipping.md).
 */
#ifndef TRACER_CLI_COSTFLEET_H
#define TRACER_CLI_COSTFLEET_H

#include <jansson.h>

#include "cli/cost/costrun.h"

/* The fleet's document over r's window (from_ns, to_ns, by, weights set): cost_json's
 * vocabulary summed over the hosts, with "hosts" (each {host, hostnames, cost: that
 * host's own document}). NULL said why. */
json_t *cost_fleet_document(const struct price_options *po, const struct cost_query *cq,
			    const struct cost_report *r);

#endif
