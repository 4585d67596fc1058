#include "collector/convert/snapshot.h"

#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/timeutil.h"

void cgroup_mounts_find(struct cgroup_mounts *m)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[1024];

	m->v2[0] = m->memory[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char mnt[256], fstype[64], super[512];
		/* id parent maj:min root mountpoint opts [tags] - fstype source superopts */
		char *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %*s %*s %255s", mnt) != 1 ||
		    sscanf(dash + 3, "%63s %*s %511s", fstype, super) != 2)
			continue;
		if (strcmp(fstype, "cgroup2") == 0 && !m->v2[0])
			snprintf(m->v2, sizeof(m->v2), "%s", mnt);
		if (strcmp(fstype, "cgroup") == 0 && !m->memory[0]) {
			for (char *tok = strtok(super, ","); tok; tok = strtok(NULL, ","))
				if (strcmp(tok, "memory") == 0)
					snprintf(m->memory, sizeof(m->memory), "%s", mnt);
		}
	}
	fclose(f);
	m->memory_hierarchy = 0;
	f = fopen("/proc/cgroups", "re");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned hierarchy;
		if (sscanf(line, "memory %u", &hierarchy) == 1)
			m->memory_hierarchy = hierarchy;
	}
	if (f)
		fclose(f);
}

#define CGROUP_WALK_MAX 20000
#define CGROUP_WALK_DEPTH 32

struct cgroup_walk {
	snapshot_sink sink;
	void *ctx;
	unsigned hierarchy;
	const char *controllers;
	size_t root_len;
	int count;
};

static int walk_cgroups(struct cgroup_walk *w, char *path, size_t len, int depth)
{
	struct stat st;
	DIR *d;
	struct dirent *de;

	if (w->count >= CGROUP_WALK_MAX || depth > CGROUP_WALK_DEPTH || stat(path, &st) != 0)
		return 0;
	Tracer__Event ev = TRACER__EVENT__INIT;
	Tracer__CgroupEvent x = TRACER__CGROUP_EVENT__INIT;
	x.id = (uint64_t)st.st_ino;
	x.has_hierarchy = x.has_level = x.has_from_snapshot = 1;
	x.hierarchy = w->hierarchy;
	x.level = (uint32_t)depth;
	x.from_snapshot = 1;
	x.path = len > w->root_len ? path + w->root_len : "/";
	x.controllers = (char *)w->controllers;
	ev.ts_ns = now_boottime_ns();
	ev.kind_case = TRACER__EVENT__KIND_CGROUP;
	ev.cgroup = &x;
	if (w->sink(w->ctx, &ev) != 0)
		return -1;
	w->count++;
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);
		if (de->d_type != DT_DIR || de->d_name[0] == '.' || len + 1 + n >= 4096)
			continue;
		path[len] = '/';
		memcpy(path + len + 1, de->d_name, n + 1);
		if (walk_cgroups(w, path, len + 1 + n, depth + 1) != 0) {
			closedir(d);
			return -1;
		}
		path[len] = '\0';
	}
	closedir(d);
	return 0;
}

int snapshot_cgroups(const struct cgroup_mounts *m, snapshot_sink sink, void *ctx)
{
	char path[4096];
	struct cgroup_walk w = {.sink = sink, .ctx = ctx};

	if (m->v2[0]) {
		snprintf(path, sizeof(path), "%s", m->v2);
		w.root_len = strlen(path);
		w.hierarchy = 0;
		w.controllers = NULL;
		if (walk_cgroups(&w, path, w.root_len, 0) != 0)
			return -1;
	}
	if (m->memory[0]) {
		snprintf(path, sizeof(path), "%s", m->memory);
		w.root_len = strlen(path);
		w.hierarchy = m->memory_hierarchy;
		w.controllers = "memory";
		if (walk_cgroups(&w, path, w.root_len, 0) != 0)
			return -1;
	}
	return w.count;
}

/*
 * The iterator's records, whole: a read may end inside one (the kernel's
 * buffer holds a few), which the next read completes.
 */
int snapshot_read_processes(int fd, snapshot_record_sink sink, void *ctx)
{
	static char buf[8 * sizeof(struct tracer_exec_event)];
	const size_t rec = sizeof(struct tracer_exec_event);
	size_t have = 0;
	int records = 0;

	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		have += (size_t)n;
		size_t whole = have / rec;
		for (size_t i = 0; i < whole; i++) {
			if (sink(ctx, buf + i * rec, rec) != 0)
				return -1;
			records++;
		}
		have -= whole * rec;
		memmove(buf, buf + whole * rec, have);
	}
	return records;
}
