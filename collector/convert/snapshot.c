#include "collector/convert/snapshot.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collector/redact/rules_file.h"
#include "common/fileutil.h"
#include "common/timeutil.h"
#include "common/vec.h"

#define PF_KTHREAD 0x00200000

struct snap_proc {
	uint32_t pid;
	uint32_t ppid;
	uint64_t start_ns;
	uint32_t uid, gid;
	uint64_t arg_bytes; /* arg_end - arg_start from stat: argv's own area; 0 unknown */
	char comm[TRACER_COMM_LEN + 1];
};

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
 * arg_end - arg_start (fields 48 and 49 of stat, after the comm): where argv's
 * own bytes end. A process that overwrote argv's last NUL (setproctitle) has
 * /proc/PID/cmdline read on into its environment; we stop here. 0: unknown.
 */
static uint64_t arg_area_bytes(const char *after_comm)
{
	const char *t = after_comm;
	unsigned long long start = 0, end = 0;

	for (int field = 3; field < 48 && t; field++) {
		t = strchr(t, ' ');
		t = t ? t + 1 : NULL;
	}
	if (!t || sscanf(t, "%llu %llu", &start, &end) != 2 || end <= start)
		return 0;
	return end - start;
}

static int parse_stat(const char *text, struct snap_proc *p, unsigned long *flags)
{
	const char *open = strchr(text, '(');
	const char *close = strrchr(text, ')');
	unsigned long long start = 0;
	size_t clen;

	if (!open || !close || close < open)
		return -1;
	clen = (size_t)(close - open - 1);
	if (clen > TRACER_COMM_LEN)
		clen = TRACER_COMM_LEN;
	memcpy(p->comm, open + 1, clen);
	p->comm[clen] = '\0';
	/* fields 3.. : state ppid pgrp session tty tpgid flags ... starttime(22) */
	if (sscanf(close + 2,
		   "%*c %u %*d %*d %*d %*d %lu %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
		   "%*d %*d %llu",
		   &p->ppid, flags, &start) != 3)
		return -1;
	p->start_ns = start * (NSEC_PER_SEC / (uint64_t)sysconf(_SC_CLK_TCK));
	p->arg_bytes = arg_area_bytes(close + 2);
	return 0;
}

static void parse_ids(const char *status, struct snap_proc *p)
{
	const char *u = strstr(status, "\nUid:");
	const char *g = strstr(status, "\nGid:");

	if (u)
		sscanf(u + 5, "%u", &p->uid);
	if (g)
		sscanf(g + 5, "%u", &p->gid);
}

static uint64_t inode_of(const char *base, const char *rel)
{
	char path[1024];
	struct stat st;

	if (!base[0])
		return 0;
	snprintf(path, sizeof(path), "%s%s", base, rel);
	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static void cgroup_ids(const char *dir, const struct cgroup_mounts *m, uint64_t *v2, uint64_t *v1)
{
	char path[300], text[4096];

	*v2 = *v1 = 0;
	snprintf(path, sizeof(path), "%s/cgroup", dir);
	if (read_small_file(path, text, sizeof(text)) < 0)
		return;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		const char *controllers = c1 + 1, *cg = c2 + 1;
		if (controllers[0] == '\0')
			*v2 = inode_of(m->v2, cg);
		for (const char *tok = controllers; tok && *tok;) {
			const char *comma = strchr(tok, ',');
			size_t n = comma ? (size_t)(comma - tok) : strlen(tok);
			if (n == 6 && strncmp(tok, "memory", 6) == 0)
				*v1 = inode_of(m->memory, cg);
			tok = comma ? comma + 1 : NULL;
		}
	}
}

static void read_link(const char *dir, const char *name, char *out, size_t size)
{
	char path[300];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	n = readlink(path, out, size - 1);
	out[n > 0 ? n : 0] = '\0';
}

static int emit_snapshot_exec(const char *proc_root, const struct snap_proc *p,
			      uint64_t parent_start, const struct cgroup_mounts *m,
			      snapshot_sink sink, void *ctx, struct convert_stats *st)
{
	Tracer__Event ev = TRACER__EVENT__INIT;
	Tracer__ExecEvent x = TRACER__EXEC_EVENT__INIT;
	static char blob[TRACER_ARGV_MAX + 2], redacted[TRACER_ARGV_MAX * 4 + 64];
	char *argv[TRACER_ARGV_MAX / 2 + 1], *safe_argv[TRACER_ARGV_MAX / 2 + 1];
	char dir[64], exe[4096], cwd[4096], path[300];
	ssize_t n;

	snprintf(dir, sizeof(dir), "%s/%u", proc_root, p->pid);
	snprintf(path, sizeof(path), "%s/cmdline", dir);
	n = read_file_bytes(path, blob, TRACER_ARGV_MAX + 1);
	if (n < 0)
		return 0; /* gone */
	/* Never past argv's own area: what follows it is the environment. */
	if (p->arg_bytes && (uint64_t)n > p->arg_bytes)
		n = (ssize_t)p->arg_bytes;
	x.has_argv_truncated = 1;
	x.argv_truncated = n > TRACER_ARGV_MAX;
	if (n > TRACER_ARGV_MAX)
		n = TRACER_ARGV_MAX;
	/* A process may have rewritten its argv without NULs: keep it as one. */
	if (n > 0 && blob[n - 1] != '\0' && !x.argv_truncated)
		blob[n++] = '\0';
	unsigned argc = split_argv(blob, (size_t)n, argv, TRACER_ARGV_MAX / 2 + 1);
	unsigned redactions =
	    redact_argv(redact_rules_active(), argv, argc, redacted, sizeof(redacted), safe_argv);
	st->redactions += redactions;
	read_link(dir, "exe", exe, sizeof(exe));
	read_link(dir, "cwd", cwd, sizeof(cwd));

	x.pid = p->pid;
	x.start_ns = p->start_ns;
	x.has_ppid = x.has_parent_start_ns = x.has_uid = x.has_gid = 1;
	x.ppid = p->ppid;
	x.parent_start_ns = parent_start;
	x.uid = p->uid;
	x.gid = p->gid;
	x.comm = (char *)p->comm;
	x.exe = exe[0] ? exe : NULL;
	x.n_argv = argc;
	x.argv = safe_argv;
	x.cwd = cwd[0] ? cwd : NULL;
	x.has_cgroup_id = x.has_cgroup1_id = 1;
	cgroup_ids(dir, m, &x.cgroup_id, &x.cgroup1_id);
	x.has_from_snapshot = 1;
	x.from_snapshot = 1;
	x.has_argv_redactions = redactions != 0;
	x.argv_redactions = redactions;
	ev.ts_ns = now_boottime_ns();
	ev.kind_case = TRACER__EVENT__KIND_EXEC;
	ev.exec = &x;
	return sink(ctx, &ev) == 0 ? 1 : -1;
}

static int by_start(const void *a, const void *b)
{
	const struct snap_proc *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int by_pid(const void *a, const void *b)
{
	const struct snap_proc *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int snapshot_processes(const char *proc_root, const struct cgroup_mounts *mounts,
		       snapshot_sink sink, void *ctx, struct convert_stats *st)
{
	DIR *d = opendir(proc_root);
	struct snap_proc *procs = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int emitted = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL) {
		char path[300], text[4096];
		struct snap_proc p = {0};
		unsigned long flags = 0;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		p.pid = (uint32_t)strtoul(de->d_name, NULL, 10);
		snprintf(path, sizeof(path), "%s/%s/stat", proc_root, de->d_name);
		if (read_small_file(path, text, sizeof(text)) < 0 || parse_stat(text, &p, &flags))
			continue;
		if (flags & PF_KTHREAD)
			continue;
		snprintf(path, sizeof(path), "%s/%s/status", proc_root, de->d_name);
		if (read_small_file(path, text, sizeof(text)) >= 0)
			parse_ids(text, &p);
		if (!vec_grow(procs, cap, n + 1)) {
			closedir(d);
			free(procs);
			return -1;
		}
		procs[n++] = p;
	}
	closedir(d);
	/* Parents start before their children: send them first. */
	if (n > 1)
		qsort(procs, n, sizeof(*procs), by_start);
	struct snap_proc *by_pid_index = malloc((n ? n : 1) * sizeof(*procs));
	if (!by_pid_index) {
		free(procs);
		return -1;
	}
	memcpy(by_pid_index, procs, n * sizeof(*procs));
	qsort(by_pid_index, n, sizeof(*procs), by_pid);
	for (size_t i = 0; i < n; i++) {
		struct snap_proc key = {.pid = procs[i].ppid};
		struct snap_proc *parent = bsearch(&key, by_pid_index, n, sizeof(*procs), by_pid);
		uint64_t parent_start = parent ? parent->start_ns : 0;
		int rv =
		    emit_snapshot_exec(proc_root, &procs[i], parent_start, mounts, sink, ctx, st);
		if (rv < 0) {
			emitted = -1;
			break;
		}
		emitted += rv;
	}
	free(by_pid_index);
	free(procs);
	return emitted;
}
