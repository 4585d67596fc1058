/*
 * threadexec PROGRAM MS: a second thread uses MS ms of the process's CPU
 * time, then execs "PROGRAM 2*MS" while the first thread, the group leader,
 * sleeps in pause(). The kernel kills the leader and gives the exec'ing
 * thread its pid (de_thread): one process, two images. cpuburn as PROGRAM
 * burns until the process (whose CPU time survives exec) has used 2*MS.
 * Built with -pthread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static char *program;
static long ms;

static long process_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void *burn_then_exec(void *arg)
{
	volatile unsigned long x = 0;
	char total[32];

	while (process_cpu_ms() < ms)
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
	snprintf(total, sizeof(total), "%ld", 2 * ms);
	char *argv[] = {program, total, NULL};
	execv(program, argv);
	perror(program);
	exit(127);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t thread;

	if (argc != 3)
		return 2;
	program = argv[1];
	ms = atol(argv[2]);
	if (pthread_create(&thread, NULL, burn_then_exec, NULL) != 0)
		return 1;
	for (;;)
		pause();
}
