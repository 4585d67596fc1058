/*
 * closeexit MIB: a second thread takes a file table of its own (unshare),
 * holds the only reference to a memfd of MIB MiB and ends the process with
 * exit_group() while the main thread spins. The main thread, killed, is
 * usually the last to leave, while the second thread is still in its exit
 * path releasing the memfd's pages: time wait4 counts. Built with -pthread.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int main_spinning;
static volatile unsigned long sink;

static void *fill_and_end(void *arg)
{
	off_t bytes = (off_t) * (long *)arg << 20;

	if (unshare(CLONE_FILES) != 0)
		_exit(3);
	int fd = memfd_create("closeexit", 0);
	if (fd < 0 || fallocate(fd, 0, 0, bytes) != 0)
		_exit(3);
	while (!atomic_load(&main_spinning))
		;
	syscall(SYS_exit_group, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t thread;
	long mib;

	if (argc != 2)
		return 2;
	mib = atol(argv[1]);
	if (pthread_create(&thread, NULL, fill_and_end, &mib) != 0)
		return 1;
	atomic_store(&main_spinning, 1);
	for (;;)
		sink++;
}
