/*
 * --scope-pidns PID|INODE: record only the processes of one PID namespace (and
 * those nested in it). The kernel side already numbers and filters tasks by a
 * namespace (bpf/common.bpf.h, pidns_inum): the one the collector runs in, or
 * this one. Its processes already running are read from the namespace's own
 * procfs (/proc/PID/root/proc, as `unshare -fp --mount-proc` or a container
 * mounts it), which numbers them as the kernel side does.
 */
#include "collector/setup/pidscope.h"
#include "collector/setup/internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static uint32_t ns_of(const char *proc, const char *pid)
{
	char path[300];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s/ns/pid", proc, pid);
	return stat(path, &st) == 0 ? (uint32_t)st.st_ino : 0;
}

/* A process of the namespace whose procfs is the namespace's own (its pid 1 is in it). */
static int proc_root_of(uint32_t inode, char *out, size_t size)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int found = -1;

	if (!d)
		return -1;
	while (found && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    ns_of("/proc", de->d_name) != inode)
			continue;
		snprintf(out, size, "/proc/%s/root/proc", de->d_name);
		if (ns_of(out, "1") == inode)
			found = 0;
	}
	closedir(d);
	return found;
}

int pidscope_resolve(const char *value, struct pidscope *s, char *err, size_t size)
{
	char *end;
	unsigned long n = strtoul(value, &end, 10);

	memset(s, 0, sizeof(*s));
	if (!*value || *end || !n) {
		snprintf(err, size, "scope-pidns = %s: expected a PID or a namespace inode", value);
		return -1;
	}
	/* A PID names its namespace; a number no process has is the inode itself. */
	s->inode = ns_of("/proc", value);
	if (!s->inode)
		s->inode = (uint32_t)n;
	if (proc_root_of(s->inode, s->proc_root, sizeof(s->proc_root)) != 0) {
		snprintf(
		    err, size,
		    "scope-pidns = %s: no process of PID namespace %u with the namespace's own "
		    "/proc mounted (unshare --mount-proc, a container)",
		    value, s->inode);
		return -1;
	}
	return 0;
}
