/*
 * `tracer --fleet URL energy --since D`: the energy document of a window over
 * every host of the fleet store, one host's rows loaded at a time (cli/db/fleet.h)
 * and summed by part, as one host's database gives it (docs/energy.md).
 */
#ifndef TRACER_CLI_ENERGYFLEET_H
#define TRACER_CLI_ENERGYFLEET_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "cli/cost/energy.h"

/* The hosts with processes in [from, to], and whether every run of them was recorded
 * on this machine (the CPU model table then applies). NULL said why. */
json_t *energy_fleet_hosts(int64_t from, int64_t to, bool *here);
/* The document over those hosts; NULL with the reason in err (or said). */
json_t *energy_fleet_document(json_t *hosts, int64_t from, int64_t to, const char *by,
			      const struct energy_options *o, char *err, size_t err_size);

#endif
