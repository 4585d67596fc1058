/* A step's (or run's) character from where its processes' time went. */
#ifndef TRACER_CHARACTER_H
#define TRACER_CHARACTER_H

#include <stdint.h>

/*
 * Where a group's process time went, in ns: cpu, io (disk I/O wait), net
 * (blocked on the network), runq (waiting for a CPU), reclaim (direct memory
 * reclaim), sleep (leaf processes off the CPU for anything else).
 */
struct time_parts {
	uint64_t cpu, io, net, runq, reclaim, sleep;
};

/* compute, io, network, memory, contended, waiting, mixed (no part reaches
 * 40%); NULL if nothing was measured. */
const char *time_character(const struct time_parts *t);

#endif
