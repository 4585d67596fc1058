#include "shipper/credentials.h"

#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int on_line(void *user, const char *section, const char *name, const char *value)
{
	struct credentials *c = user;

	if (section[0])
		return 0;
	if (!strcmp(name, "user") && strlen(value) < sizeof(c->user))
		snprintf(c->user, sizeof(c->user), "%s", value);
	else if (!strcmp(name, "password") && strlen(value) < sizeof(c->password))
		snprintf(c->password, sizeof(c->password), "%s", value);
	else if (!strcmp(name, "token") && strlen(value) < sizeof(c->token))
		snprintf(c->token, sizeof(c->token), "%s", value);
	else
		return 0;
	return 1;
}

int credentials_load(const char *path, struct credentials *c, char *err, size_t err_size)
{
	struct stat st;

	memset(c, 0, sizeof(*c));
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, err_size, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	/* Secrets readable by others are already leaked: refuse, and say how to fix it. */
	if (st.st_mode & (S_IRWXG | S_IRWXO) || st.st_uid != geteuid()) {
		snprintf(err, err_size,
			 "%s: must belong to this user (uid %u) and be mode 0600 or stricter "
			 "(it is uid %u, mode %04o)",
			 path, (unsigned)geteuid(), (unsigned)st.st_uid,
			 (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return -1;
	}
	int line = ini_parse_file(f, on_line, c);
	fclose(f);
	if (line != 0) {
		snprintf(err, err_size, "%s:%d: expected user = ..., password = ... or token = ...",
			 path, line);
		credentials_wipe(c);
		return -1;
	}
	return 0;
}

void credentials_wipe(struct credentials *c)
{
	explicit_bzero(c, sizeof(*c));
}
