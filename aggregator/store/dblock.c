#include "aggregator/store/dblock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static void lock_path(const char *db_path, char *out, size_t size)
{
	snprintf(out, size, "%s.lock", db_path);
}

static pid_t read_holder(int fd)
{
	char text[24] = "";
	ssize_t n = pread(fd, text, sizeof(text) - 1, 0);

	return n > 0 ? (pid_t)strtol(text, NULL, 10) : 0;
}

int dblock_take(const char *db_path, pid_t *holder)
{
	char path[4200], text[24];
	int fd;

	*holder = 0;
	lock_path(db_path, path, sizeof(path));
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int saved = errno;
		*holder = read_holder(fd);
		close(fd);
		errno = saved;
		return -1;
	}
	int n = snprintf(text, sizeof(text), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)n, 0) != n) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int dblock_probe(const char *db_path, pid_t *holder)
{
	char path[4200];
	int fd, free_now;

	*holder = 0;
	lock_path(db_path, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 1 : -1;
	free_now = flock(fd, LOCK_EX | LOCK_NB) == 0;
	if (free_now)
		flock(fd, LOCK_UN);
	else
		*holder = read_holder(fd);
	close(fd);
	return free_now;
}
