/*
 * cpuburn MS [OUT]: spins until it has used MS milliseconds of CPU time; with
 * OUT, records its own run-queue delay from /proc/self/schedstat first.
 */
#include <stdio.h>
#include <stdlib.h>

#include "spin.h"

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 500;
	unsigned long x = spin_cpu_ms(ms);

	if (argc > 2) {
		unsigned long long run_ns = 0, run_delay = 0;
		FILE *f = fopen("/proc/self/schedstat", "r");
		if (!f || fscanf(f, "%llu %llu", &run_ns, &run_delay) != 2)
			return 1;
		fclose(f);
		FILE *out = fopen(argv[2], "w");
		if (!out)
			return 1;
		fprintf(out, "{\"run_delay_ns\": %llu, \"run_ns\": %llu}\n", run_delay, run_ns);
		fclose(out);
	}
	return x == 42; /* practically 0; uses x so it is not optimised away */
}
