/*
 * The collector's rules: the file is opened once, before the privilege drop
 * (root can open /etc/tracer/redact.rules whatever its mode), and kept open;
 * SIGHUP rereads it from that descriptor, from its start, which needs no
 * privilege and no open() (the syscall allow-list has none). An edit in place
 * is seen; a file replaced by rename leaves the old one open: fstat says so
 * (no links left) and the log asks for a restart. A file that does not parse
 * keeps the rules in force.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/redact/rules_file.h"

#define RULES_FILE_MAX (1 << 20)

static const struct redact_rules *active;

const struct redact_rules *redact_rules_active(void)
{
	return active ? active : redact_rules_builtin();
}

int redact_rules_file_open(struct redact_rules_file *f, const char *path, char *err,
			   size_t err_size)
{
	if (redact_rules_file_open_fd(f, path, err, err_size) != 0)
		return -1;
	return redact_rules_file_reload(f, err, err_size);
}

/* The whole file from its start, NUL-terminated; NULL with the reason. */
static char *read_whole(int fd, size_t *len, char *err, size_t err_size)
{
	char *buf = malloc(RULES_FILE_MAX + 1);
	size_t n = 0;

	if (!buf || lseek(fd, 0, SEEK_SET) < 0) {
		snprintf(err, err_size, "%s", buf ? strerror(errno) : "out of memory");
		free(buf);
		return NULL;
	}
	for (;;) {
		ssize_t r = read(fd, buf + n, RULES_FILE_MAX + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, err_size, "%s", strerror(errno));
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > RULES_FILE_MAX) {
			snprintf(err, err_size, "larger than %d bytes", RULES_FILE_MAX);
			free(buf);
			return NULL;
		}
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

int redact_rules_file_reload(struct redact_rules_file *f, char *err, size_t err_size)
{
	struct stat st;
	char why[200];
	size_t len = 0;

	if (fstat(f->fd, &st) == 0 && st.st_nlink == 0)
		snprintf(err, err_size,
			 "%s was replaced, not edited in place: rereading the "
			 "file opened at start-up; restart the collector for the new one",
			 f->path);
	else
		err[0] = '\0';
	char *text = read_whole(f->fd, &len, why, sizeof(why));
	struct redact_rules *r = text ? redact_rules_parse(text, len, why, sizeof(why)) : NULL;
	free(text);
	if (!r) {
		snprintf(err, err_size, "%s: %s; the rules in force stay", f->path, why);
		return -1;
	}
	redact_rules_free(f->rules);
	f->rules = r;
	active = r;
	return err[0] ? 1 : 0;
}

void redact_rules_file_close(struct redact_rules_file *f)
{
	if (active == f->rules)
		active = NULL;
	redact_rules_free(f->rules);
	f->rules = NULL;
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}
