/*
 * storm N WORKERS PROGRAM [SECONDS]: WORKERS processes each fork+exec PROGRAM
 * until N have run in total (or, given SECONDS, until that much time has
 * passed, whichever comes first); prints how many ran. The exec-storm load.
 * A time limit keeps a storm as long as the test window it loads, whatever
 * this machine's exec rate is that day.
 *
 * A fork that fails for lack of resources (EAGAIN, ENOMEM) is retried after a
 * pause, so the storm really starts every process it counts; one that still
 * fails makes the exit status 1 and is reported, so a test never counts
 * processes that never ran.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FORK_TRIES 100

static pid_t fork_with_retries(void)
{
	for (int i = 0;; i++) {
		pid_t pid = fork();
		if (pid >= 0 || (errno != EAGAIN && errno != ENOMEM) || i == FORK_TRIES)
			return pid;
		nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
	}
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * One worker: its share of the children, one at a time, until the deadline;
 * *ran counts those that ran. Exits 1 if any did not run.
 */
static int run_worker(int mine, const char *program, double deadline, int *ran)
{
	int failed = 0;

	for (int i = 0; i < mine && now_seconds() < deadline; i++) {
		pid_t pid = fork_with_retries();
		if (pid < 0) {
			fprintf(stderr, "storm: fork: %s\n", strerror(errno));
			failed++;
			continue;
		}
		if (pid == 0) {
			execl(program, program, (char *)NULL);
			_exit(127);
		}
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failed++;
		else
			(*ran)++;
	}
	if (failed)
		fprintf(stderr, "storm: %d of %d children failed to run\n", failed, mine);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: storm N WORKERS PROGRAM [SECONDS]\n");
		return 2;
	}
	int n = atoi(argv[1]), workers = atoi(argv[2]);
	double deadline = argc == 5 ? now_seconds() + atof(argv[4]) : 1e300;
	/* Each worker's count, shared with this process (workers are forked). */
	int *ran = mmap(NULL, sizeof(int) * (size_t)(workers > 0 ? workers : 1),
			PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ran == MAP_FAILED) {
		fprintf(stderr, "storm: mmap: %s\n", strerror(errno));
		return 1;
	}
	for (int w = 0; w < workers; w++) {
		pid_t pid = fork_with_retries();
		if (pid < 0) {
			fprintf(stderr, "storm: fork: %s\n", strerror(errno));
			return 1;
		}
		if (pid == 0)
			_exit(run_worker(n / workers + (w < n % workers), argv[3], deadline,
					 &ran[w]));
	}
	int ok = 0, st, total = 0;
	while (wait(&st) > 0)
		ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
	for (int w = 0; w < workers; w++)
		total += ran[w];
	printf("%d\n", total);
	return ok == workers ? 0 : 1;
}
