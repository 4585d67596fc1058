/* cpuburn MS: spins until it has used MS milliseconds of CPU time. */
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
			return x == 42; /* practically 0; uses x so it is not optimised away */
	}
}
