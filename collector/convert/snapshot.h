/*
 * Processes already running when the collector starts, read from /proc once
 * (after the BPF programs are attached, so nothing falls in between) and sent
 * as exec events marked from_snapshot. Start times from /proc have clock-tick
 * resolution; the aggregator matches them to kernel events within one tick.
 */
#ifndef TRACER_SNAPSHOT_H
#define TRACER_SNAPSHOT_H

#include <stdint.h>

#include "collector/convert/convert.h"
#include "common/bytebuf.h"

struct cgroup_mounts {
	char v2[256];		   /* cgroup2 mount point, "" if none */
	char memory[256];	   /* cgroup v1 memory controller mount, "" if none */
	unsigned memory_hierarchy; /* its v1 hierarchy id (from /proc/cgroups) */
};

void cgroup_mounts_find(struct cgroup_mounts *m);

/* Receives each snapshot event; returns 0 or -1 to stop. */
typedef int (*snapshot_sink)(void *ctx, const Tracer__Event *ev);

/* One exec event per user-space process, to sink. Returns processes or -1. */
int snapshot_processes(const char *proc_root, const struct cgroup_mounts *mounts,
		       snapshot_sink sink, void *ctx, struct convert_stats *st);

/* Existing cgroups (v2, and the v1 memory hierarchy) as CgroupEvents. */
int snapshot_cgroups(const struct cgroup_mounts *mounts, snapshot_sink sink, void *ctx);

#endif
