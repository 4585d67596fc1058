/*
 * Which processes this host's aggregator records (docs/operations.md, "Scope"):
 * every one, or only those in a cgroup subtree. A process is in the subtree when
 * its v1 memory cgroup or its cgroup2 path is the subtree or under it, as of its
 * last fork or exec: one that moves in later (a Slurm step, `echo $$ >
 * cgroup.procs`) is recorded from its next exec on, its ancestors outside never.
 */
#include "aggregator/correlate/internal.h"

#include <stdio.h>
#include <string.h>

int correlate_set_scope_cgroup(struct correlator *c, const char *path, char *err, size_t size)
{
	size_t n = strlen(path);

	if (path[0] != '/' || n >= sizeof(c->scope_cgroup) || strstr(path, "//") ||
	    strstr(path, "/../") || strstr(path, "/./")) {
		snprintf(err, size,
			 "'%s' is not a cgroup path such as /slurm (absolute, as under "
			 "/sys/fs/cgroup/memory or the cgroup2 root)",
			 path);
		return -1;
	}
	while (n > 1 && path[n - 1] == '/')
		n--;
	memcpy(c->scope_cgroup, path, n);
	c->scope_cgroup[n] = '\0';
	c->scope_cgroup_len = n;
	return 0;
}

/* Is path the subtree or a cgroup under it? "/" holds every cgroup. */
static bool under(const char *path, const char *top, size_t top_len)
{
	if (!path)
		return false;
	if (top_len == 1)
		return true;
	return !strncmp(path, top, top_len) && (path[top_len] == '\0' || path[top_len] == '/');
}

bool correlate_in_scope(const struct correlator *c, const struct process_row *r)
{
	if (!c->scope_cgroup_len)
		return true;
	/* The v1 memory hierarchy holds the identity on a hybrid host; cgroup2 on
	 * a unified one (a systemd in nspawn, a current distribution). */
	return (r->cgroup1_id && under(cgroup_path_of(c, r->cgroup1_id, true), c->scope_cgroup,
				       c->scope_cgroup_len)) ||
	       (r->cgroup_id && under(cgroup_path_of(c, r->cgroup_id, false), c->scope_cgroup,
				      c->scope_cgroup_len));
}
