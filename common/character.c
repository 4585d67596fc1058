#include "common/character.h"

#include <stddef.h>

/* A share this large (or larger) names the character; below it, no one part does. */
#define DOMINANT_SHARE 0.4

/*
 * Memory pressure (10%) and CPU contention (30%) are called out when they take
 * a real part. Otherwise the largest share decides, if it is a real part of
 * the time (40%): a step at 16% on a CPU is not compute-bound, whatever the
 * other shares are. Sleep on the network counts when data moved at 1 MiB/s or
 * more.
 */
const char *time_character(uint64_t cpu, uint64_t io, uint64_t runq, uint64_t reclaim,
			   uint64_t sleep, double net_bytes_per_s)
{
	double total = (double)cpu + (double)io + (double)runq + (double)reclaim + (double)sleep;

	if (total <= 0)
		return NULL;
	if ((double)reclaim >= 0.1 * total)
		return "memory";
	if ((double)runq >= 0.3 * total)
		return "contended";
	uint64_t largest = cpu;
	if (io > largest)
		largest = io;
	if (sleep > largest)
		largest = sleep;
	if ((double)largest < DOMINANT_SHARE * total)
		return "mixed";
	if (cpu == largest)
		return "compute";
	if (io == largest)
		return "io";
	return net_bytes_per_s >= 1048576.0 ? "network" : "waiting";
}
