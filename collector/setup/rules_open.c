/*
 * Root can open /etc/tracer/redact.rules whatever its mode; the unprivileged
 * collector reads it from the descriptor (the syscall allow-list has no open).
 */
#include "collector/setup/rules_open.h"
#include "collector/setup/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *redact_rules_file_find(char *buf, size_t size)
{
	static const char *const beside[] = {"../deploy/etc", "../../deploy/etc",
					     "../share/tracer"};
	char exe[4096];

	snprintf(buf, size, "%s", REDACT_RULES_DEFAULT);
	if (access(buf, R_OK) == 0)
		return buf;
	/* A build tree's or a relocated install's own copy, beside the program. */
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	char *slash = strrchr(exe, '/'); /* the kernel's path is absolute */
	if (!slash)
		return NULL;
	*slash = '\0';
	for (size_t i = 0; i < sizeof(beside) / sizeof(*beside); i++) {
		snprintf(buf, size, "%s/%s/redact.rules", exe, beside[i]);
		if (access(buf, R_OK) == 0)
			return buf;
	}
	return NULL;
}

int redact_rules_file_open_fd(struct redact_rules_file *f, const char *path, char *err,
			      size_t err_size)
{
	f->rules = NULL;
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
