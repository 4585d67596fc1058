/*
 * reexec IMAGES MS: one process, IMAGES images. Each image burns until the
 * process has used MS more milliseconds of CPU than when it started (CPU time
 * survives exec, as getrusage counts it), then execs itself for the next
 * image. Its parent's wait4 sees all of it: the ground truth for a process
 * that re-execs (env, nohup, wrappers, `bash -c '... exec tool'`).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long process_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int main(int argc, char **argv)
{
	volatile unsigned long x = 0;
	char left[24], done_arg[24];

	if (argc < 3) {
		fprintf(stderr, "usage: reexec IMAGES MS\n");
		return 2;
	}
	long images = strtol(argv[1], NULL, 10), ms = strtol(argv[2], NULL, 10);
	long done = argc > 3 ? strtol(argv[3], NULL, 10) : 0;
	while (process_cpu_ms() < (done + 1) * ms)
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
	if (done + 1 >= images)
		return 0;
	snprintf(left, sizeof(left), "%ld", images);
	snprintf(done_arg, sizeof(done_arg), "%ld", done + 1);
	char *next[] = {argv[0], left, argv[2], done_arg, NULL};
	execv("/proc/self/exe", next);
	perror("exec");
	return 127;
}
