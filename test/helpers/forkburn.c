/*
 * forkburn OUT N MS: forks N children that each spin for MS ms of CPU and never
 * exec (a program whose forked workers do its work), waits for them and writes
 * the sum of their wait4 rusage to OUT as {"children_cpu_ns": ...}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void spin(long ms)
{
	struct timespec ts;
	volatile unsigned long x = 0;

	for (;;) {
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i * 2654435761u;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		if (ts.tv_sec * 1000L + ts.tv_nsec / 1000000L >= ms)
			return;
	}
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: forkburn OUT N MS\n");
		return 2;
	}
	int n = atoi(argv[2]);
	long ms = atol(argv[3]);
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0)
			return 1;
		if (p == 0) {
			spin(ms);
			_exit(0);
		}
	}
	long long ns = 0;
	struct rusage r;
	while (wait4(-1, NULL, 0, &r) > 0)
		ns += (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1000000000LL +
		      (r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1000LL;
	FILE *f = fopen(argv[1], "w");
	if (!f)
		return 1;
	fprintf(f, "{\"children_cpu_ns\": %lld}\n", ns);
	return fclose(f) ? 1 : 0;
}
