/*
 * syncwriter PATH N OUT: N synchronous 64 KiB writes (O_DSYNC), then records
 * its own delay-accounting block I/O wait (/proc/self/stat field 42, clock
 * ticks; needs kernel.task_delayacct=1) and run delay (/proc/self/schedstat),
 * with its own elapsed time so a reader can reject an impossible reading.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char chunk[65536];
	char stat[4096];

	struct timespec t0, t1;

	if (argc != 4)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_DSYNC, 0644);
	if (fd < 0)
		return 1;
	memset(chunk, 's', sizeof(chunk));
	for (int i = 0; i < atoi(argv[2]); i++)
		if (write(fd, chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk))
			return 1;
	close(fd);
	FILE *f = fopen("/proc/self/stat", "r");
	if (!f || !fgets(stat, sizeof(stat), f))
		return 1;
	fclose(f);
	/* Fields after the ")" of comm: field 3 is the first; field 42 is blkio ticks. */
	char *p = strrchr(stat, ')') + 2;
	long long field = 0;
	p += 2; /* field 3, the state, is one letter */
	for (int i = 4; i <= 42; i++)
		field = strtoll(p, &p, 10);
	unsigned long long run_ns = 0, run_delay = 0;
	f = fopen("/proc/self/schedstat", "r");
	if (!f || fscanf(f, "%llu %llu", &run_ns, &run_delay) != 2)
		return 1;
	fclose(f);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long long wall_ns = (t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec);
	FILE *out = fopen(argv[3], "w");
	if (!out)
		return 1;
	fprintf(out,
		"{\"blkio_ticks\": %lld, \"tick_ns\": %ld, \"run_delay_ns\": %llu, "
		"\"wall_ns\": %lld}\n",
		field, 1000000000L / sysconf(_SC_CLK_TCK), run_delay, wall_ns);
	fclose(out);
	return 0;
}
