#include "collector/convert/snapshot.h"
#include "collector/convert/internal.h"

#include <errno.h>
#include <stddef.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/timeutil.h"
#include "common/vec.h"

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
 * The iterator goes by pid; parents must come first (the aggregator links a
 * process to a parent it already knows). Records wait, compact (their fixed
 * fields and the used bytes of their three strings: ~7 KiB each -> hundreds of
 * bytes), to be sorted by start time.
 */
#define FIXED_PART offsetof(struct tracer_exec_event, filename)

struct kept {
	uint64_t start_ns;
	uint32_t pid;
	size_t at; /* in the arena */
};

struct snapshot_arena {
	uint64_t attached_ns;
	struct bytebuf bytes;
	struct kept *kept;
	size_t n, cap;
};

static size_t clamp(uint32_t len, size_t size)
{
	return len < size ? len : size;
}

static int keep_record(struct snapshot_arena *a, const struct tracer_exec_event *e)
{
	size_t fl = clamp(e->filename_len, sizeof(e->filename));
	size_t cl = clamp(e->cwd_len, sizeof(e->cwd));
	size_t al = clamp(e->argv_len, sizeof(e->argv));

	/* Started once every probe was attached: its fork and exec are in the ring
	 * buffer, which the snapshot must not precede (it would look unwatched). */
	if (a->attached_ns && e->h.start_ns > a->attached_ns)
		return 0;
	if (!vec_grow(a->kept, a->cap, a->n + 1))
		return -1;
	a->kept[a->n] =
	    (struct kept){.start_ns = e->h.start_ns, .pid = e->h.pid, .at = a->bytes.len};
	if (bytebuf_append(&a->bytes, e, FIXED_PART) != 0 ||
	    bytebuf_append(&a->bytes, e->filename, fl) != 0 ||
	    bytebuf_append(&a->bytes, e->cwd, cl) != 0 ||
	    bytebuf_append(&a->bytes, e->argv, al) != 0)
		return -1;
	a->n++;
	return 0;
}

/* A kept record back to its kernel layout (the lengths say where each part ends). */
static void expand_record(const struct snapshot_arena *a, const struct kept *k,
			  struct tracer_exec_event *e)
{
	const uint8_t *p = a->bytes.data + k->at;

	memcpy(e, p, FIXED_PART);
	p += FIXED_PART;
	memcpy(e->filename, p, clamp(e->filename_len, sizeof(e->filename)));
	p += clamp(e->filename_len, sizeof(e->filename));
	memcpy(e->cwd, p, clamp(e->cwd_len, sizeof(e->cwd)));
	p += clamp(e->cwd_len, sizeof(e->cwd));
	memcpy(e->argv, p, clamp(e->argv_len, sizeof(e->argv)));
}

static int by_start(const void *x, const void *y)
{
	const struct kept *a = x, *b = y;

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* Reads the iterator to its end; a read may stop inside a record, the next completes it. */
static int read_all(int fd, struct snapshot_arena *a)
{
	static struct tracer_exec_event buf[8];
	const size_t rec = sizeof(buf[0]);
	size_t have = 0;

	for (;;) {
		ssize_t n = read(fd, (char *)buf + have, sizeof(buf) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		have += (size_t)n;
		size_t whole = have / rec;
		for (size_t i = 0; i < whole; i++)
			if (keep_record(a, &buf[i]) != 0)
				return -1;
		have -= whole * rec;
		memmove(buf, (char *)buf + whole * rec, have);
	}
}

int snapshot_read_processes(int fd, uint64_t attached_ns, snapshot_record_sink sink, void *ctx)
{
	static struct tracer_exec_event e;
	struct snapshot_arena a = {.attached_ns = attached_ns};
	int rv = read_all(fd, &a);

	if (rv == 0 && a.n > 1)
		qsort(a.kept, a.n, sizeof(*a.kept), by_start);
	for (size_t i = 0; rv == 0 && i < a.n; i++) {
		expand_record(&a, &a.kept[i], &e);
		if (sink(ctx, &e, sizeof(e)) != 0)
			rv = -1;
	}
	bytebuf_free(&a.bytes);
	free(a.kept);
	return rv == 0 ? (int)a.n : -1;
}
