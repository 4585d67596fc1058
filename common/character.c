#include "common/character.h"

#include <stddef.h>

/* The largest share decides, with memory pressure (10%) and CPU contention (30%)
 * called out when they take a real part; sleep on the network counts when data
 * moved at 1 MiB/s or more. */
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
	if (cpu >= io && cpu >= sleep)
		return "compute";
	if (io >= sleep)
		return "io";
	return net_bytes_per_s >= 1048576.0 ? "network" : "waiting";
}
