/*
 * spinexit THREADS MS: THREADS threads spin while the main thread waits
 * until the process has used MS ms of CPU, then calls exit(): the kernel
 * kills the spinning threads as the process ends, so several threads exit
 * at once on different CPUs. How JVMs, Python and Go programs end. Built
 * with -pthread.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static void *spin(void *arg)
{
	for (;;)
		sink++;
	return arg;
}

static long process_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int main(int argc, char **argv)
{
	pthread_t thread;

	if (argc != 3)
		return 2;
	int threads = atoi(argv[1]);
	long ms = atol(argv[2]);
	for (int i = 0; i < threads; i++)
		if (pthread_create(&thread, NULL, spin, NULL) != 0)
			return 1;
	while (process_cpu_ms() < ms)
		;
	exit(0);
}
