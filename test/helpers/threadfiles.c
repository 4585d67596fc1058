/*
 * threadfiles DIR THREADS N: THREADS threads each open N existing files of
 * their own (DIR/t<thread>_<i>) and N shared by all (DIR/s<i>), read-write,
 * meeting at a spinning barrier before every open so that first opens land
 * at the same moment on different CPUs: of distinct paths (each must get a
 * slot of its own) and of one path (it must get one slot, counted THREADS
 * times). Creating the files here would not race: creations in one directory
 * take turns at the directory's lock. Built with -pthread.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *dir;
static int per_thread;
static int n_threads;
static atomic_int arrived;

/* A spinning barrier: a futex wake-up would spread the opens microseconds apart. */
static void meet(int round)
{
	atomic_fetch_add(&arrived, 1);
	while (atomic_load(&arrived) < n_threads * (round + 1))
		;
}

static void *opener(void *arg)
{
	long t = (long)arg;
	char path[4096];

	for (int i = 0; i < 2 * per_thread; i++) {
		if (i % 2 == 0)
			snprintf(path, sizeof(path), "%s/t%ld_%d", dir, t, i / 2);
		else
			snprintf(path, sizeof(path), "%s/s%d", dir, i / 2);
		meet(i);
		int fd = open(path, O_RDWR);
		if (fd < 0) {
			perror(path);
			return (void *)1;
		}
		close(fd);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[64];
	int failed = 0;

	if (argc != 4)
		return 2;
	dir = argv[1];
	n_threads = atoi(argv[2]);
	per_thread = atoi(argv[3]);
	if (n_threads < 1 || n_threads > 64 || per_thread < 0)
		return 2;
	for (long t = 0; t < n_threads; t++)
		if (pthread_create(&threads[t], NULL, opener, (void *)t) != 0)
			return 1;
	for (int t = 0; t < n_threads; t++) {
		void *r;
		pthread_join(threads[t], &r);
		failed |= r != NULL;
	}
	return failed;
}
