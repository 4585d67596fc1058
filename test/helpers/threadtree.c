/*
 * threadtree OUT: a process that makes threads and child processes from
 * several threads at once. Main starts 4 threads; each starts 3 more threads
 * at the same moment as its siblings (a barrier lines them up) and then forks
 * one child that execs /bin/true. OUT gets one line per child process, its
 * pid: the ground truth of which processes this program made (its threads
 * are not processes). Exits 0 once every thread and child is done.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define WORKERS 4
#define GRANDTHREADS 3

static pthread_barrier_t together;

static void *idle_thread(void *arg)
{
	usleep(20000);
	return arg;
}

static void *worker(void *arg)
{
	pthread_t t[GRANDTHREADS];
	pid_t *child = arg;

	pthread_barrier_wait(&together);
	for (int i = 0; i < GRANDTHREADS; i++)
		pthread_create(&t[i], NULL, idle_thread, NULL);
	*child = fork();
	if (*child == 0) {
		execl("/bin/true", "/bin/true", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < GRANDTHREADS; i++)
		pthread_join(t[i], NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[WORKERS];
	pid_t child[WORKERS];
	int failed = 0;

	if (argc != 2)
		return 2;
	pthread_barrier_init(&together, NULL, WORKERS);
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, &child[i]);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	FILE *out = fopen(argv[1], "w");
	if (!out)
		return 1;
	for (int i = 0; i < WORKERS; i++) {
		int status;
		if (child[i] < 0 || waitpid(child[i], &status, 0) != child[i] || status != 0)
			failed = 1;
		fprintf(out, "%d\n", (int)child[i]);
	}
	fclose(out);
	return failed;
}
