/*
 * The RAPL counters setup/rapl.c opened as root, read after the drop and
 * sent as EnergyEvents (proto/tracer.proto) every sample period.
 */
#ifndef TRACER_COLLECTOR_ENERGY_H
#define TRACER_COLLECTOR_ENERGY_H

#include <stdint.h>

#include "collector/setup/rapl.h"
#include "tracer.pb-c.h"

struct energy_reader {
	const struct rapl *rapl;
	char names[RAPL_ZONES_MAX][32]; /* read at the first sample */
	int named;
	uint64_t read_errors; /* readings that failed (logged once; sent as a loss) */
};

/* One EnergyEvent per zone read, stamped ts_boot_ns, to sink. -1 if sink failed. */
int energy_sample(struct energy_reader *e, uint64_t ts_boot_ns,
		  int (*sink)(void *ctx, const Tracer__Event *ev), void *ctx);

#endif
