#include "common/character.h"

#include <stddef.h>

/* A share this large (or larger) names the character; below it, no one part does. */
#define DOMINANT_SHARE 0.4

/*
 * Memory pressure (10%) and CPU contention (30%) are called out when they take
 * a real part. Otherwise the largest share decides, if it is a real part of
 * the time (40%): a step at 16% on a CPU is not compute-bound, whatever the
 * other shares are. Network-bound is measured time blocked on the network,
 * never inferred from bytes moved.
 */
const char *time_character(const struct time_parts *t)
{
	uint64_t cpu = t->cpu, io = t->io, net = t->net, runq = t->runq, reclaim = t->reclaim,
		 sleep = t->sleep;
	double total =
	    (double)cpu + (double)io + (double)net + (double)runq + (double)reclaim + (double)sleep;

	if (total <= 0)
		return NULL;
	if ((double)reclaim >= 0.1 * total)
		return "memory";
	if ((double)runq >= 0.3 * total)
		return "contended";
	uint64_t largest = cpu;
	if (io > largest)
		largest = io;
	if (net > largest)
		largest = net;
	if (sleep > largest)
		largest = sleep;
	if ((double)largest < DOMINANT_SHARE * total)
		return "mixed";
	if (cpu == largest)
		return "compute";
	if (io == largest)
		return "io";
	return net == largest ? "network" : "waiting";
}
