/* Spinning on the CPU for a measured amount of the process's own CPU time. */
#ifndef TRACER_TEST_SPIN_H
#define TRACER_TEST_SPIN_H

#include <time.h>

/* Spins until this process has used ms milliseconds of CPU time; returns the
 * work's result so the caller can use it and the loop is not optimised away. */
static inline unsigned long spin_cpu_ms(long ms)
{
	struct timespec ts;
	volatile unsigned long x = 0;

	for (;;) {
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i * 2654435761u;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		if (ts.tv_sec * 1000L + ts.tv_nsec / 1000000L >= ms)
			return x;
	}
}

#endif
