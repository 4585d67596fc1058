/* OOM kills, files, cgroups, samples and RAPL counters: events about a process or the host. */
#include "aggregator/ingest/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/ingest/cputime.h"
#include "aggregator/ingest/path.h"
#include "common/jsonutil.h"
#include "common/strutil.h"

void on_oom(struct ingest *g, uint64_t ts_boot_ns, const Tracer__OomEvent *x)
{
	struct proc *p = proc_find(&g->table, x->pid, x->start_ns, false);
	struct oom_row r = {0};

	r.ts_epoch_ns = p ? proc_epoch_ns(p, ts_boot_ns) : frame_epoch_ns(g, ts_boot_ns);
	r.pid = x->pid;
	r.proc_start_boot_ns = x->start_ns;
	copy_string(r.boot_id, sizeof(r.boot_id), g->boot_id);
	copy_string(r.comm, sizeof(r.comm), x->comm ? x->comm : "");
	r.uid = x->uid;
	r.total_vm_kb = x->total_vm_kb;
	r.anon_rss_kb = x->anon_rss_kb;
	r.file_rss_kb = x->file_rss_kb;
	r.shmem_rss_kb = x->shmem_rss_kb;
	r.cgroup_id = x->cgroup_id;
	r.cgroup1_id = x->cgroup1_id;
	r.memcg_limit_kb = x->memcg_limit_kb;
	r.memcg_usage_kb = x->memcg_usage_kb;
	r.oom_score_adj = x->oom_score_adj;
	if (p) {
		r.process_id = p->row.id;
		p->row.oom_killed = true;
		ingest_touch(g, p);
		if (!ingest_recordable(g, p))
			return;
	} else if (g->scope == SCOPE_RUNS) {
		return;
	}
	insight_oom(&g->insight, &r, p, r.ts_epoch_ns);
	if (!vec_push(&g->pending.ooms, r))
		g->stats.oom++;
}

/* The path as opened, made absolute against the process's cwd now, normalised. */
static char *file_path(const struct proc *p, const Tracer__FileEvent *x)
{
	const char *cwd = p->life.cwd ? p->life.cwd : p->row.cwd;
	char *joined, *clean;
	size_t n;

	if (!x->relative || !cwd) {
		clean = utf8_sanitize(x->path, strlen(x->path));
	} else {
		n = strlen(cwd) + strlen(x->path) + 2;
		joined = malloc(n);
		if (!joined)
			return NULL;
		snprintf(joined, n, "%s/%s", cwd, x->path);
		clean = utf8_sanitize(joined, strlen(joined));
		free(joined);
	}
	if (clean)
		path_normalize(clean);
	return clean;
}

void on_cwd(struct ingest *g, const Tracer__CwdEvent *x)
{
	struct proc *p = proc_find(&g->table, x->pid, x->start_ns, false);
	char *cwd;

	if (!p || p->life.exited || !x->cwd) {
		g->stats.files_unmatched++;
		return;
	}
	cwd = utf8_sanitize(x->cwd, strlen(x->cwd));
	if (!cwd) {
		g->stats.oom++;
		return;
	}
	free(p->life.cwd);
	p->life.cwd = cwd;
}

void on_file(struct ingest *g, uint64_t ts_boot_ns, const Tracer__FileEvent *x)
{
	struct proc *p = proc_find(&g->table, x->pid, x->start_ns, false);
	struct file_row r = {0};

	if (!p || p->life.exited) {
		g->stats.files_unmatched++;
		return;
	}
	if (!ingest_recordable(g, p) || x->slot >= 4096)
		return;
	if (x->slot >= p->life.n_file_ids) {
		uint32_t n = x->slot + 16;
		int64_t *ids = realloc(p->life.file_ids, n * sizeof(*ids));
		if (!ids) {
			g->stats.oom++;
			return;
		}
		memset(ids + p->life.n_file_ids, 0, (n - p->life.n_file_ids) * sizeof(*ids));
		p->life.file_ids = ids;
		p->life.n_file_ids = n;
	}
	r.id = g->next_file_id++;
	r.process_id = p->row.id;
	r.path = file_path(p, x);
	r.open_flags = x->open_flags;
	r.result = x->result < 0 ? -x->result : 0;
	r.count = 1;
	r.failed = x->result < 0;
	r.first_epoch_ns = proc_epoch_ns(p, ts_boot_ns);
	r.truncated = x->truncated;
	if (!r.path || !vec_push(&g->pending.files, r)) {
		free(r.path);
		g->stats.oom++;
		return;
	}
	p->life.file_ids[x->slot] = r.id;
}

void on_file_counts(struct ingest *g, const Tracer__FileCountsEvent *x)
{
	struct proc *p = proc_find(&g->table, x->pid, x->start_ns, false);

	if (!p) {
		g->stats.files_unmatched++;
		return;
	}
	if (x->overflow) {
		/* The counts follow the exit event, often in a later commit. */
		p->row.files_overflow = x->overflow;
		ingest_touch(g, p);
	}
	for (size_t i = 0; i < x->n_count && i < p->life.n_file_ids; i++) {
		struct file_update u = {
		    .id = p->life.file_ids[i],
		    .count = x->count[i],
		    .failed = i < x->n_failed ? x->failed[i] : 0,
		    .flags = i < x->n_flags_union ? x->flags_union[i] : 0,
		};
		if (u.id && !vec_push(&g->pending.file_updates, u))
			g->stats.oom++;
	}
}

void on_cgroup(struct ingest *g, uint64_t ts_boot_ns, const Tracer__CgroupEvent *x)
{
	struct cgroup_row r = {0};
	const char *controllers = x->controllers;

	if (controllers && strcmp(controllers, "memory") == 0)
		g->memory_hierarchy = x->hierarchy;
	if (!controllers && x->hierarchy && x->hierarchy == g->memory_hierarchy)
		controllers = "memory";
	copy_string(r.boot_id, sizeof(r.boot_id), g->boot_id);
	r.hierarchy = x->hierarchy;
	r.id = x->id;
	r.controllers = controllers ? strdup(controllers) : NULL;
	r.path = x->path ? utf8_sanitize(x->path, strlen(x->path)) : NULL;
	r.level = x->level;
	if (r.path && (x->hierarchy == 0 || (controllers && !strcmp(controllers, "memory"))))
		correlate_cgroup(&g->corr, x->id, x->hierarchy != 0, r.path);
	if (!x->from_snapshot) {
		if (x->removed)
			r.removed_epoch_ns = frame_epoch_ns(g, ts_boot_ns);
		else
			r.created_epoch_ns = frame_epoch_ns(g, ts_boot_ns);
	}
	if (!vec_push(&g->pending.cgroups, r)) {
		free(r.path);
		free(r.controllers);
		g->stats.oom++;
	}
}

void on_sample(struct ingest *g, uint64_t ts_boot_ns, const Tracer__SampleEvent *x)
{
	struct proc *p = proc_find(&g->table, x->pid, x->start_ns, false);
	struct sample_row r = {0};

	if (!p || p->life.exited) {
		g->stats.samples_unmatched++;
		return;
	}
	uint64_t io = x->rchar + x->wchar;
	bool active = x->runtime_ns != p->in.last_sample_cpu || io != p->life.last_sample_io;
	g->insight.last_sample_boot_ns = ts_boot_ns;
	p->life.last_sample_io = io;
	correlate_sample(&g->corr, p, ts_boot_ns, x->rss_kb, x->runtime_ns);
	if (active)
		insight_activity(&g->insight, p, ts_boot_ns, proc_epoch_ns(p, ts_boot_ns));
	if (!ingest_recordable(g, p))
		return;
	bool held = hold_sample(g, p, ts_boot_ns);
	r.process_id = p->row.id;
	r.ts_epoch_ns = proc_epoch_ns(p, ts_boot_ns);
	cputime_adjust(x->utime_ns, x->stime_ns, x->runtime_ns, &r.cpu_user_ns, &r.cpu_sys_ns);
	r.rss_kb = x->rss_kb;
	r.rchar = x->rchar;
	r.wchar = x->wchar;
	r.read_bytes = x->read_bytes;
	r.write_bytes = x->write_bytes;
	r.runq_ns = x->runq_ns;
	r.iowait_ns = x->iowait_ns;
	r.net_tx_bytes = x->net_tx_bytes;
	r.net_rx_bytes = x->net_rx_bytes;
	r.has_iowait = x->has_iowait_ns;
	r.has_net = x->has_net_tx_bytes;
	r.vol_ctxsw = x->vol_ctxsw;
	r.invol_ctxsw = x->invol_ctxsw;
	r.state[0] = x->state >= 'A' && x->state <= 'z' ? (char)x->state : '?';
	r.threads = x->threads;
	struct pending_sample ps = {.row = r, .held = held};
	if (!vec_push(&g->pending.samples, ps))
		g->stats.oom++;
}

void ingest_host_sample(struct ingest *g, const struct host_sample_row *row)
{
	if (!vec_push(&g->pending.hosts, *row))
		g->stats.oom++;
}

/* A RAPL counter as the collector read it: the differences are taken when read back. */
void on_energy(struct ingest *g, uint64_t ts_boot_ns, const Tracer__EnergyEvent *x)
{
	struct energy_sample_row r = {0};

	r.ts_epoch_ns = frame_epoch_ns(g, ts_boot_ns);
	copy_string(r.host_id, sizeof(r.host_id), g->host_id);
	r.zone = x->zone;
	copy_string(r.name, sizeof(r.name), x->name ? x->name : "");
	r.energy_uj = x->energy_uj;
	r.has_max_range = x->has_max_energy_range_uj;
	r.max_range_uj = x->max_energy_range_uj;
	if (!vec_push(&g->pending.energy, r))
		g->stats.oom++;
}
