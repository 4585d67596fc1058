#include "common/fileutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

ssize_t read_file_bytes(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t used = 0;

	if (fd < 0)
		return -1;
	while (used < size) {
		ssize_t n = read(fd, buf + used, size - used);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	return (ssize_t)used;
}

ssize_t read_small_file(const char *path, char *buf, size_t size)
{
	ssize_t n;

	if (size == 0)
		return -1;
	n = read_file_bytes(path, buf, size - 1);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

int mkdir_parents(const char *path, mode_t mode)
{
	char tmp[4096];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(tmp, path, len + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, mode) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

void path_dirname(const char *path, char *out, size_t size)
{
	const char *slash = strrchr(path, '/');

	if (!slash) {
		snprintf(out, size, ".");
		return;
	}
	if (slash == path) {
		snprintf(out, size, "/");
		return;
	}
	snprintf(out, size, "%.*s", (int)(slash - path), path);
}

const char *path_find_shipped(const char *installed, const char *name, char *buf, size_t size)
{
	static const char *const beside[] = {"../deploy/etc", "../../deploy/etc",
					     "../share/tracer"};
	char exe[4096];

	snprintf(buf, size, "%s", installed);
	if (access(buf, R_OK) == 0)
		return buf;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0 || exe[0] != '/') /* the kernel's path is absolute: cut at its last '/' */
		return NULL;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	for (size_t i = 0; i < sizeof(beside) / sizeof(*beside); i++) {
		int len = snprintf(buf, size, "%s/%s/%s", exe, beside[i], name);
		if (len > 0 && (size_t)len < size && access(buf, R_OK) == 0)
			return buf;
	}
	return NULL;
}

const char *path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

bool fd_hung_up(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLIN));
}

static bool owned_by_root_only(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_uid == 0 && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

bool path_root_only(const char *path)
{
	char dir[4096];
	const char *slash = path ? strrchr(path, '/') : NULL;

	if (!slash || path[0] != '/' || (size_t)(slash - path) >= sizeof(dir))
		return false;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash == path ? 1 : slash - path] = '\0';
	return owned_by_root_only(path) && owned_by_root_only(dir);
}
