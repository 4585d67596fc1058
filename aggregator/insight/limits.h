/* Resource limits of a cgroup, for right-sizing and "near the limit" signals. */
#ifndef TRACER_LIMITS_H
#define TRACER_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

/* 0 where there is no limit or it cannot be read. cgroup_root: "/sys/fs/cgroup". */
void cgroup_limits(const char *cgroup_root, const char *v1_memory_path, const char *v2_path,
		   int64_t *memory_kb, double *cpus);

#endif
