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

#include "common/fileutil.h" /* path_find_shipped */

const char *redact_rules_file_find(char *buf, size_t size)
{
	return path_find_shipped(REDACT_RULES_DEFAULT, "redact.rules", buf, size);
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
