/*
 * --scope-pidns PID|INODE: record only the processes of one PID namespace (and
 * those nested in it). The kernel side already numbers and filters tasks by a
 * namespace (bpf/common.bpf.h, pidns_inum): the one the collector runs in, or
 * this one; the snapshot's task iterator does the same. A namespace no process
 * is in is refused: it is a typo, or gone, and would record nothing.
 */
#include "collector/setup/pidscope.h"
#include "collector/setup/internal.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static uint32_t ns_of(const char *pid)
{
	char path[300];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%s/ns/pid", pid);
	return stat(path, &st) == 0 ? (uint32_t)st.st_ino : 0;
}

static bool has_process(uint32_t inode)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	bool found = false;

	while (d && !found && (de = readdir(d)))
		found = de->d_name[0] >= '1' && de->d_name[0] <= '9' && ns_of(de->d_name) == inode;
	if (d)
		closedir(d);
	return found;
}

int pidscope_resolve(const char *value, struct pidscope *s, char *why, size_t size)
{
	char *end;
	unsigned long n = strtoul(value, &end, 10);

	memset(s, 0, sizeof(*s));
	if (!*value || *end || !n) {
		snprintf(why, size, "expected a PID or a PID namespace's inode");
		return -1;
	}
	/* A PID names its namespace; a number no process has is the inode itself. */
	s->inode = ns_of(value);
	if (!s->inode)
		s->inode = (uint32_t)n;
	if (!has_process(s->inode)) {
		snprintf(why, size, "no process is in PID namespace %u", s->inode);
		return -1;
	}
	return 0;
}
