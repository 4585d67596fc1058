/*
 * syncwriter PATH N OUT [MIN_MS]: N synchronous 64 KiB writes (O_DSYNC), and
 * more until it has slept at least MIN_MS in them (disks differ tenfold in how
 * long one takes; at most MAX_WRITES in all), over a 16 MiB region rewritten
 * from the start so the file stays small. It times its own
 * sleeps: per write, elapsed time minus the thread's CPU time is the time it
 * was off the CPU; less the run delay over the loop (/proc/self/schedstat),
 * it is the time it slept in write(). That sleep is the I/O wait a tracer must
 * see, measured with nothing but the process's own clocks.
 *
 * Kernel delay accounting (/proc/PID/stat field 42) is not used: on 6.1x
 * kernels with delayed dequeue it reports the whole uptime as I/O wait now
 * and then (the block stamp lands on the wrong task), seen in CI and here.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REGION_WRITES 256 /* 16 MiB */
#define MAX_WRITES 100000

static long long now_ns(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Time runnable but waiting for a CPU, from /proc/self/schedstat; -1 if unreadable. */
static long long run_delay_ns(void)
{
	unsigned long long run_ns = 0, delay = 0;
	FILE *f = fopen("/proc/self/schedstat", "r");
	int ok = f && fscanf(f, "%llu %llu", &run_ns, &delay) == 2;

	if (f)
		fclose(f);
	return ok ? (long long)delay : -1;
}

int main(int argc, char **argv)
{
	static char chunk[65536];

	if (argc != 4 && argc != 5)
		return 2;
	long long slept = 0, min_ns = argc == 5 ? atoll(argv[4]) * 1000000LL : 0;
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_DSYNC, 0644);
	long long delay_before = run_delay_ns();
	if (fd < 0 || delay_before < 0)
		return 1;
	memset(chunk, 's', sizeof(chunk));
	/* The stopping rule uses the sleeps before the run-delay correction below:
	 * close enough to decide when to stop; the figure written is corrected. */
	for (int i = 0; i < MAX_WRITES && (i < atoi(argv[2]) || slept < min_ns); i++) {
		if (i % REGION_WRITES == 0 && lseek(fd, 0, SEEK_SET) != 0)
			return 1;
		long long wall = now_ns(CLOCK_MONOTONIC), cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
		if (write(fd, chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk))
			return 1;
		slept += (now_ns(CLOCK_MONOTONIC) - wall) - (now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu);
	}
	long long delay_after = run_delay_ns();
	if (delay_after < 0)
		return 1;
	slept -= delay_after - delay_before;
	close(fd);
	FILE *out = fopen(argv[3], "w");
	if (!out)
		return 1;
	fprintf(out, "{\"slept_in_write_ns\": %lld}\n", slept);
	return fclose(out) == 0 ? 0 : 1;
}
