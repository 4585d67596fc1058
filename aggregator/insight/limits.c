/*
 * The memory and CPU limits a cgroup imposes, read from cgroupfs (world-
 * readable files). v1: memory.limit_in_bytes in the memory hierarchy, CFS
 * quota in the cpu hierarchy at the same path (docker, Slurm and systemd
 * create the same path in every hierarchy); v2: memory.max and cpu.max.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggregator/insight/limits.h"

static bool read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	bool ok = f && fgets(buf, (int)size, f);

	if (f)
		fclose(f);
	return ok;
}

static const char *v2_root(const char *cgroup_root, char *buf, size_t size)
{
	char probe[512];

	snprintf(probe, sizeof(probe), "%s/cgroup.controllers", cgroup_root);
	if (access(probe, R_OK) == 0)
		return cgroup_root;
	snprintf(buf, size, "%s/unified", cgroup_root);
	return buf;
}

/* "max", or a v1 "unlimited" page-counter maximum: no limit. */
static int64_t limit_kb(const char *text)
{
	if (!strncmp(text, "max", 3))
		return 0;
	long long bytes = atoll(text);
	if (bytes <= 0 || bytes >= (1LL << 60))
		return 0;
	return bytes / 1024;
}

void cgroup_limits(const char *cgroup_root, const char *v1_memory_path, const char *v2_path,
		   int64_t *memory_kb, double *cpus)
{
	char path[1024], line[128], v2buf[512];
	const char *v2 = v2_root(cgroup_root, v2buf, sizeof(v2buf));

	*memory_kb = 0;
	*cpus = 0;
	if (v1_memory_path && *v1_memory_path) {
		snprintf(path, sizeof(path), "%s/memory%s/memory.limit_in_bytes", cgroup_root,
			 v1_memory_path);
		if (read_line(path, line, sizeof(line)))
			*memory_kb = limit_kb(line);
		long long quota = -1, period = 0;
		snprintf(path, sizeof(path), "%s/cpu,cpuacct%s/cpu.cfs_quota_us", cgroup_root,
			 v1_memory_path);
		if (read_line(path, line, sizeof(line)))
			quota = atoll(line);
		snprintf(path, sizeof(path), "%s/cpu,cpuacct%s/cpu.cfs_period_us", cgroup_root,
			 v1_memory_path);
		if (read_line(path, line, sizeof(line)))
			period = atoll(line);
		if (quota > 0 && period > 0)
			*cpus = (double)quota / (double)period;
	}
	if (v2_path && *v2_path) {
		snprintf(path, sizeof(path), "%s%s/memory.max", v2, v2_path);
		if (!*memory_kb && read_line(path, line, sizeof(line)))
			*memory_kb = limit_kb(line);
		snprintf(path, sizeof(path), "%s%s/cpu.max", v2, v2_path);
		long long quota = 0, period = 0;
		if (!*cpus && read_line(path, line, sizeof(line)) &&
		    sscanf(line, "%lld %lld", &quota, &period) == 2 && quota > 0 && period > 0)
			*cpus = (double)quota / (double)period;
	}
}
