/*
 * storm N WORKERS PROGRAM: WORKERS processes each fork+exec PROGRAM until N
 * have run in total; prints how many started. The exec-storm load.
 *
 * A fork that fails for lack of resources (EAGAIN, ENOMEM) is retried after a
 * pause, so the storm really starts N processes; one that still fails makes the
 * exit status 1 and is reported, so a test never counts processes that never ran.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* One worker: its share of the children, one at a time; exits 1 if any did not run. */
static int run_worker(int mine, const char *program)
{
	int failed = 0;

	for (int i = 0; i < mine; i++) {
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
	}
	if (failed)
		fprintf(stderr, "storm: %d of %d children failed to run\n", failed, mine);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	int n = atoi(argv[1]), workers = atoi(argv[2]);
	for (int w = 0; w < workers; w++) {
		pid_t pid = fork_with_retries();
		if (pid < 0) {
			fprintf(stderr, "storm: fork: %s\n", strerror(errno));
			return 1;
		}
		if (pid == 0)
			_exit(run_worker(n / workers + (w < n % workers), argv[3]));
	}
	int ok = 0, st;
	while (wait(&st) > 0)
		ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
	printf("%d\n", n);
	return ok == workers ? 0 : 1;
}
