/*
 * cpuburn MS [OUT]: spins until it has used MS milliseconds of CPU time; with
 * OUT, records its own run-queue delay from /proc/self/schedstat first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 500;
	struct timespec ts;
	volatile unsigned long x = 0;

	for (;;) {
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i * 2654435761u;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		if (ts.tv_sec * 1000L + ts.tv_nsec / 1000000L >= ms)
			break;
	}
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
