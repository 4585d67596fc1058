#include "common/ipc_auth.h"

#include "common/fileutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static int read_exactly(int fd, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

int ipc_key_read_fd(int fd, uint8_t key[IPC_KEY_LEN], char *err, size_t err_size)
{
	int rc = read_exactly(fd, key, IPC_KEY_LEN);

	if (rc != 0)
		snprintf(err, err_size, "descriptor %d did not hold a %d-byte key", fd,
			 IPC_KEY_LEN);
	close(fd);
	return rc;
}

/* Writes a fresh key beside path and links it into place; an existing file wins. */
static int create_key(const char *path, char *err, size_t err_size)
{
	char tmp[4200];
	uint8_t key[IPC_KEY_LEN];
	int fd, rc = -1;

	if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key)) {
		snprintf(err, err_size, "getrandom: %s", strerror(errno));
		return -1;
	}
	path_dirname(path, tmp, sizeof(tmp));
	mkdir(tmp, 0755); /* /etc/tracer on a host that never installed tracer */
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	if ((fd = mkstemp(tmp)) < 0) {
		snprintf(err, err_size, "cannot create %s: %s", tmp, strerror(errno));
		return -1;
	}
	if (fchmod(fd, 0600) == 0 && write(fd, key, sizeof(key)) == (ssize_t)sizeof(key) &&
	    fsync(fd) == 0 && (link(tmp, path) == 0 || errno == EEXIST))
		rc = 0;
	else
		snprintf(err, err_size, "cannot write %s: %s", path, strerror(errno));
	close(fd);
	unlink(tmp);
	memset(key, 0, sizeof(key));
	return rc;
}

/*
 * Root's or ours, and no one else's but our group's to read. Root (the
 * collector before its drop) also takes a key its aggregator's group may read:
 * the installed aggregator starts unprivileged and reads it so.
 */
static bool private_to_us(const struct stat *st)
{
	bool owner_ok = st->st_uid == 0 || st->st_uid == geteuid();
	bool group_ok = !(st->st_mode & 0070) ||
			(!(st->st_mode & 0020) &&
			 (st->st_gid == 0 || geteuid() == 0 || st->st_gid == getegid()));

	return S_ISREG(st->st_mode) && owner_ok && group_ok && !(st->st_mode & 0007);
}

int ipc_key_load_file(const char *path, bool create, uint8_t key[IPC_KEY_LEN], char *err,
		      size_t err_size)
{
	if (create && access(path, F_OK) != 0 && create_key(path, err, err_size) != 0)
		return -1;
	return ipc_key_read_file(path, key, err, err_size);
}

int ipc_key_read_file(const char *path, uint8_t key[IPC_KEY_LEN], char *err, size_t err_size)
{
	struct stat st;
	int fd;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		snprintf(err, err_size, "cannot read the collector key %s: %s", path,
			 strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !private_to_us(&st) || st.st_size != IPC_KEY_LEN) {
		snprintf(err, err_size,
			 "the collector key %s must be a %d-byte file owned by root (or us) that "
			 "no one else can read (chmod 0600)",
			 path, IPC_KEY_LEN);
		close(fd);
		return -1;
	}
	return ipc_key_read_fd(fd, key, err, err_size);
}

void ipc_auth_pack(const uint8_t key[IPC_KEY_LEN], uint8_t out[IPC_AUTH_LEN])
{
	memcpy(out, IPC_AUTH_MAGIC, IPC_AUTH_MAGIC_LEN);
	memcpy(out + IPC_AUTH_MAGIC_LEN, key, IPC_KEY_LEN);
}

bool ipc_auth_check(const void *buf, size_t len, const uint8_t key[IPC_KEY_LEN])
{
	const volatile uint8_t *b = buf;
	uint8_t diff = 0;

	if (len != IPC_AUTH_LEN || memcmp(buf, IPC_AUTH_MAGIC, IPC_AUTH_MAGIC_LEN) != 0)
		return false;
	for (size_t i = 0; i < IPC_KEY_LEN; i++)
		diff |= (uint8_t)(b[IPC_AUTH_MAGIC_LEN + i] ^ key[i]);
	return diff == 0;
}
