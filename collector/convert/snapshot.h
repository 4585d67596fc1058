/*
 * What exists when the collector starts, read after the privilege drop: the
 * processes already running, from the task iterator root created
 * (bpf/snapshot.bpf.c: exec records flagged TRACER_F_FROM_SNAPSHOT, converted
 * like the ring buffer's), and the cgroups, walked in the cgroup file systems
 * (readable by anyone; before the syscall allow-list, which has no open).
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

/* Receives each iterator record; returns 0 or -1 to stop. */
typedef int (*snapshot_record_sink)(void *ctx, const void *record, size_t size);

/*
 * Reads the snapshot iterator fd to its end, each record to sink, parents
 * first; processes started after attached_ns (the probes saw them start) are
 * left to their own events. Records sent, or -1.
 */
int snapshot_read_processes(int fd, uint64_t attached_ns, snapshot_record_sink sink, void *ctx);

/* Existing cgroups (v2, and the v1 memory hierarchy) as CgroupEvents. */
int snapshot_cgroups(const struct cgroup_mounts *mounts, snapshot_sink sink, void *ctx);

#endif
