/* A step's (or run's) character from where its processes' time went. */
#ifndef TRACER_CHARACTER_H
#define TRACER_CHARACTER_H

#include <stdint.h>

/*
 * cpu, io (disk I/O wait), runq (waiting for a CPU), reclaim (direct memory
 * reclaim), sleep (leaf processes off the CPU for anything else), in ns;
 * net_bytes_per_s over the wall time. Returns compute, io, memory, network,
 * contended, waiting, mixed (no part reaches 40%); NULL if nothing was measured.
 */
const char *time_character(uint64_t cpu, uint64_t io, uint64_t runq, uint64_t reclaim,
			   uint64_t sleep, double net_bytes_per_s);

#endif
