#include "aggregator/ingest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "aggregator/outbox.h"
#include "aggregator/cputime.h"
#include "aggregator/runmark.h"
#include "common/exitstatus.h"
#include "common/hostinfo.h"
#include "common/jsonutil.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "common/strutil.h"

#define EXITED_GRACE_NS (10 * NSEC_PER_SEC)
/* How long a fork child's samples wait for its exec before they are shipped
 * anyway: fork-to-exec is microseconds to milliseconds; a child that works on
 * its own for longer is a worker in its own right. */
#define SAMPLE_HOLD_NS (5 * NSEC_PER_SEC)

static void release_entry(struct proc *p)
{
	if (p->launched)
		p->launched->refs--;
	p->launched = NULL;
	correlate_release(p);
}

int ingest_init(struct ingest *g, struct store *store, enum ingest_scope scope,
		const char *tools_allow, const char *tools_deny,
		const struct insight_config *signals)
{
	struct insight_config defaults;

	memset(g, 0, sizeof(*g));
	g->store = store;
	g->scope = scope;
	g->next_file_id = store_max_id(store, "files") + 1;
	if (correlator_init(&g->corr, store, tools_allow, tools_deny) != 0)
		return -1;
	g->corr.explicit_only = scope == SCOPE_RUNS;
	if (!signals) {
		insight_config_defaults(&defaults);
		signals = &defaults;
	}
	if (insight_init(&g->insight, store, signals) != 0)
		return -1;
	g->corr.insight = &g->insight;
	if (proctable_init(&g->table) != 0)
		return -1;
	g->table.on_free = release_entry;
	return 0;
}

/* Appends item to a growable array; false on allocation failure. */
#define PUSH(arr, n, cap, item)                                                                    \
	({                                                                                         \
		bool ok_ = true;                                                                   \
		if ((n) == (cap)) {                                                                \
			size_t c_ = (cap) ? (cap)*2 : 64;                                          \
			void *p_ = realloc((arr), c_ * sizeof(*(arr)));                            \
			if (p_) {                                                                  \
				(arr) = p_;                                                        \
				(cap) = c_;                                                        \
			} else {                                                                   \
				ok_ = false;                                                       \
			}                                                                          \
		}                                                                                  \
		if (ok_)                                                                           \
			(arr)[(n)++] = (item);                                                     \
		ok_;                                                                               \
	})

static void pending_clear(struct pending *q, bool release)
{
	for (size_t i = 0; i < q->n_files; i++)
		free(q->files[i].path);
	for (size_t i = 0; i < q->n_cgroups; i++) {
		free(q->cgroups[i].path);
		free(q->cgroups[i].controllers);
	}
	q->n_files = q->n_file_updates = q->n_ooms = q->n_cgroups = q->n_samples = q->n_hosts = 0;
	q->n_releases = 0;
	if (release) {
		free(q->releases);
		free(q->files);
		free(q->file_updates);
		free(q->ooms);
		free(q->cgroups);
		free(q->samples);
		free(q->hosts);
		memset(q, 0, sizeof(*q));
	}
}

void ingest_free(struct ingest *g)
{
	free(g->held);
	pending_clear(&g->pending, true);
	proctable_free(&g->table);
	correlator_free(&g->corr);
	insight_free(&g->insight);
}

static int64_t to_epoch(const struct ingest *g, uint64_t boot_ns)
{
	return (int64_t)boot_ns + g->offset_ns;
}

/*
 * A process keeps the wall clock it was first seen under: its images, samples,
 * files and end are its start plus boot-clock time, so a step of the wall
 * clock (NTP's first sync, a VM resumed) while it runs cannot change its
 * duration or put its end before its start.
 */
static int64_t proc_epoch(const struct proc *p, uint64_t boot_ns)
{
	return (int64_t)boot_ns + p->epoch_offset_ns;
}

static bool recordable(const struct ingest *g, const struct proc *p)
{
	return (g->scope == SCOPE_ALL || p->row.run_id > 0) && correlate_recordable(p);
}

static void touch(struct ingest *g, struct proc *p)
{
	p->seen_gen = g->gen;
	/* A process that became deny-listed at exec may have been written at fork:
	 * it goes through the write path once more, to be forgotten. */
	if (recordable(g, p) || p->denied)
		proc_mark_dirty(&g->table, p);
}

/* Whether the process is recorded is now known: its held samples are queued
 * with the next commit, or it is forgotten (samples and all) by the next write. */
static void settle_samples(struct ingest *g, struct proc *p)
{
	if (!p->samples_held)
		return;
	if (!recordable(g, p)) {
		proc_mark_dirty(&g->table, p);
		return;
	}
	/*
	 * Out of memory: the process stays held, and so do its later samples, so
	 * the release that comes later (the next settle, or the next aggregator
	 * start) queues each of them once.
	 */
	if (!PUSH(g->pending.releases, g->pending.n_releases, g->pending.cap_releases, p->row.id)) {
		g->stats.oom++;
		return;
	}
	p->samples_held = false;
}

/* The 5 s after the fork are over: the fork image keeps its own row, its samples ship. */
static void end_sample_hold(struct ingest *g, struct proc *p)
{
	p->fork_image_shipped = true;
	settle_samples(g, p);
}

/* --- counters ------------------------------------------------------------------ */

static struct raw_counters raw_from(const Tracer__Counters *c)
{
	struct raw_counters r = {0};

	if (!c)
		return r;
	r.utime = c->utime_ns;
	r.stime = c->stime_ns;
	r.runtime = c->runtime_ns;
	r.nvcsw = c->vol_ctxsw;
	r.nivcsw = c->invol_ctxsw;
	r.min_flt = c->min_faults;
	r.maj_flt = c->maj_faults;
	r.rchar = c->rchar;
	r.wchar = c->wchar;
	r.syscr = c->syscr;
	r.syscw = c->syscw;
	r.read_bytes = c->read_bytes;
	r.write_bytes = c->write_bytes;
	r.cancelled_write_bytes = c->cancelled_write_bytes;
	r.run_delay = c->run_delay_ns;
	r.iowait = c->iowait_ns;
	r.reclaim = c->reclaim_ns;
	r.net_tx = c->net_tx_bytes;
	r.net_rx = c->net_rx_bytes;
	r.sys_file = c->sys_file;
	r.sys_net = c->sys_net;
	r.sys_mem = c->sys_mem;
	r.sys_proc = c->sys_proc;
	r.sys_other = c->sys_other;
	r.sys_failed = c->sys_failed;
	return r;
}

static uint64_t minus(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* Counters of probe groups that were off are absent: NULL, not zero. */
static void set_presence(struct proc_metrics *m, const Tracer__Counters *c)
{
	m->has_iowait = c && c->has_iowait_ns;
	m->has_reclaim = c && c->has_reclaim_ns;
	m->has_net = c && c->has_net_tx_bytes;
	m->has_sys = c && c->has_sys_file;
}

/* What this image used: totals now minus totals when it started. */
static void metrics_between(const struct raw_counters *end, const struct raw_counters *base,
			    struct proc_metrics *m)
{
	cputime_adjust(minus(end->utime, base->utime), minus(end->stime, base->stime),
		       minus(end->runtime, base->runtime), &m->cpu_user_ns, &m->cpu_sys_ns);
	m->vol_ctxsw = minus(end->nvcsw, base->nvcsw);
	m->invol_ctxsw = minus(end->nivcsw, base->nivcsw);
	m->min_faults = minus(end->min_flt, base->min_flt);
	m->maj_faults = minus(end->maj_flt, base->maj_flt);
	m->rchar = minus(end->rchar, base->rchar);
	m->wchar = minus(end->wchar, base->wchar);
	m->syscr = minus(end->syscr, base->syscr);
	m->syscw = minus(end->syscw, base->syscw);
	m->read_bytes = minus(end->read_bytes, base->read_bytes);
	m->write_bytes = minus(end->write_bytes, base->write_bytes);
	m->cancelled_write_bytes = minus(end->cancelled_write_bytes, base->cancelled_write_bytes);
	m->runq_ns = minus(end->run_delay, base->run_delay);
	m->iowait_ns = minus(end->iowait, base->iowait);
	m->reclaim_ns = minus(end->reclaim, base->reclaim);
	m->net_tx_bytes = minus(end->net_tx, base->net_tx);
	m->net_rx_bytes = minus(end->net_rx, base->net_rx);
	m->sys_file = minus(end->sys_file, base->sys_file);
	m->sys_net = minus(end->sys_net, base->sys_net);
	m->sys_mem = minus(end->sys_mem, base->sys_mem);
	m->sys_proc = minus(end->sys_proc, base->sys_proc);
	m->sys_other = minus(end->sys_other, base->sys_other);
	m->sys_failed = minus(end->sys_failed, base->sys_failed);
}

/* --- runs -------------------------------------------------------------------------- */

static void default_run_name(const struct runmark *mark, uint64_t epoch_ns, char *out, size_t size)
{
	time_t secs = (time_t)(epoch_ns / NSEC_PER_SEC);
	struct tm tm;
	char stamp[32];

	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(out, size, "%s-%s", mark->command[0] ? mark->command : "run", stamp);
}

static struct run *start_run(struct ingest *g, struct proc *launcher, const struct runmark *mark)
{
	struct run_row row = {0};
	char name[RUNMARK_NAME_MAX + 32];
	struct run *r;

	if (mark->run[0])
		copy_string(name, sizeof(name), mark->run);
	else
		default_run_name(mark, (uint64_t)launcher->row.start_ns, name, sizeof(name));
	row.id = g->store->next_run_id++;
	row.name = strdup(name);
	row.pipeline = mark->pipeline[0] ? strdup(mark->pipeline) : NULL;
	copy_string(row.host_id, sizeof(row.host_id), g->host_id);
	copy_string(row.hostname, sizeof(row.hostname), g->hostname);
	copy_string(row.boot_id, sizeof(row.boot_id), g->boot_id);
	row.launcher_pid = launcher->pid;
	row.launcher_start_ns = launcher->start_boot_ns;
	r = correlate_explicit_run(&g->corr, &row);
	if (!r) {
		free(row.name);
		free(row.pipeline);
		return NULL;
	}
	r->refs++; /* held by the launcher entry */
	log_info("run %lld '%s' started by tracer run (pid %u)", (long long)r->row.id, name,
		 launcher->pid);
	return r;
}

/* The first non-daemon child of a launcher is the run's command. */
static void join_launched_run(struct ingest *g, struct proc *child, struct proc *launcher)
{
	struct run *r = launcher->launched;

	correlate_join(&g->corr, child, r);
	if (!r->has_command) {
		r->has_command = true;
		r->command_pid = child->pid;
		r->command_start_ns = child->start_boot_ns;
		r->command_coarse = child->start_coarse;
		r->row.command_process_id = child->row.id;
		r->row.start_ns = child->row.start_ns;
		r->dirty = true;
	}
}

static void note_launcher(struct ingest *g, struct proc *p, char *const *argv, size_t argc)
{
	struct runmark mark;

	if (p->launched || !runmark_parse(p->row.exe, argv, argc, &mark))
		return;
	/* The launcher itself is not part of the run it starts. */
	p->launched = start_run(g, p, &mark);
}

/* --- rows ------------------------------------------------------------------------ */

static void set_string(char **dst, const char *src)
{
	free(*dst);
	*dst = src && src[0] ? utf8_sanitize(src, strlen(src)) : NULL;
}

static void fill_image_from_exec(struct ingest *g, struct proc *p, const Tracer__ExecEvent *x)
{
	struct process_row *r = &p->row;

	copy_string(r->comm, sizeof(r->comm), x->comm ? x->comm : "");
	set_string(&r->exe, x->exe);
	set_string(&r->cwd, x->cwd);
	free(r->argv_json);
	r->argv_json = json_string_array(x->argv, x->n_argv);
	r->argv_truncated = x->argv_truncated;
	r->argv_redactions = x->argv_redactions;
	if (x->has_uid) {
		r->has_ids = true;
		r->uid = x->uid;
		r->gid = x->gid;
	}
	r->cgroup_id = x->cgroup_id;
	r->cgroup1_id = x->cgroup1_id;
	copy_string(r->boot_id, sizeof(r->boot_id), g->boot_id);
}

/*
 * A precise start (from an exec or exit event) replaces a tick-rounded one
 * (from /proc or a fork hook). The first image's row starts when the process
 * did, so its wall-clock start moves too; a later image starts at its exec.
 */
static void make_start_precise(struct proc *p, uint64_t start_boot_ns)
{
	p->start_boot_ns = start_boot_ns;
	p->start_coarse = false;
	p->row.proc_start_boot_ns = start_boot_ns;
	if (p->row.image == 0)
		p->row.start_ns = proc_epoch(p, start_boot_ns);
}

static struct proc *new_entry(struct ingest *g, uint32_t pid, uint64_t start, bool coarse,
			      uint64_t now_boot)
{
	struct proc *old = proc_by_pid(&g->table, pid);
	struct proc *p;

	if (old) {
		/* PID reused: the old process ended without our seeing it. */
		if (!old->exited) {
			old->exited = true;
			old->row.state = "lost";
			g->stats.lost_processes++;
			if (recordable(g, old))
				proc_mark_dirty(&g->table, old);
		}
		proc_unhash(&g->table, old);
		proc_retire(&g->table, old, now_boot);
	}
	p = proc_add(&g->table, pid, start, coarse);
	if (!p) {
		g->stats.oom++;
		return NULL;
	}
	p->row.id = g->store->next_process_id++;
	p->row.pid = pid;
	p->row.proc_start_boot_ns = start;
	p->epoch_offset_ns = g->offset_ns;
	p->row.start_ns = proc_epoch(p, start);
	p->row.state = "running";
	p->last_activity_boot_ns = now_boot;
	copy_string(p->row.boot_id, sizeof(p->row.boot_id), g->boot_id);
	return p;
}

static void link_parent(struct ingest *g, struct proc *p, struct proc *parent, uint32_t ppid)
{
	p->row.ppid = ppid;
	if (!parent) {
		if (ppid > 1)
			g->stats.missing_parents++;
		return;
	}
	p->row.parent_id = parent->row.id;
	if (parent->launched) {
		if (!runmark_is_tracer_daemon(p->row.exe))
			join_launched_run(g, p, parent);
	} else {
		correlate_fork(&g->corr, p, parent);
	}
}

/* --- events ---------------------------------------------------------------------- */

static void on_fork(struct ingest *g, uint64_t ts, const Tracer__ForkEvent *f)
{
	bool coarse = !f->has_start_ns || f->start_ns == 0;
	uint64_t start = coarse ? ts : f->start_ns;
	struct proc *parent = proc_find(&g->table, f->parent_pid, f->parent_start_ns, false);
	struct proc *p = proc_find(&g->table, f->pid, start, coarse);

	if (p) {
		/* Already known from the snapshot: the fork adds nothing new. */
		p->seen_gen = g->gen;
		return;
	}
	p = new_entry(g, f->pid, start, coarse, ts);
	if (!p)
		return;
	/* Until it execs, the child runs its parent's program. */
	if (parent) {
		process_row_free_strings(&p->row);
		if (process_row_copy(&p->row, &parent->row) != 0) {
			g->stats.oom++;
			memset(&p->row, 0, sizeof(p->row));
		}
		p->row.id = g->store->next_process_id - 1;
		p->row.stored = false;
		p->row.run_id = 0;
		p->row.parent_id = 0;
		p->row.image = 0;
		p->row.end_ns = 0;
		p->row.has_exit_code = p->row.has_signal = p->row.has_metrics = false;
		p->row.from_snapshot = false;
		p->row.pid = f->pid;
		p->row.proc_start_boot_ns = start;
		p->row.start_ns = proc_epoch(p, start);
		p->row.state = "running";
	}
	copy_string(p->row.comm, sizeof(p->row.comm), f->comm ? f->comm : "");
	if (f->has_uid) {
		p->row.has_ids = true;
		p->row.uid = f->uid;
		p->row.gid = f->gid;
	}
	link_parent(g, p, parent, f->parent_pid);
	p->last_activity_boot_ns = ts;
	if (parent) {
		parent->had_children = true;
		insight_activity(&g->insight, parent, ts, proc_epoch(parent, ts));
	}
	touch(g, p);
}

static void close_image(struct ingest *g, struct proc *p, uint64_t ts, const Tracer__ExecEvent *x)
{
	struct process_row closed;
	struct raw_counters at_exec = raw_from(x->at_exec);

	if (process_row_copy(&closed, &p->row) != 0) {
		g->stats.oom++;
		return;
	}
	closed.end_ns = proc_epoch(p, ts);
	closed.state = "exec";
	closed.has_metrics = x->at_exec != NULL;
	metrics_between(&at_exec, &p->base, &closed.m);
	closed.m.has_max_rss = x->has_prev_peak_rss_kb;
	set_presence(&closed.m, x->at_exec);
	closed.m.max_rss_kb = x->prev_peak_rss_kb;
	closed.m.ru_maxrss_kb = x->at_exec ? x->at_exec->signal_maxrss_kb : 0;
	if (!recordable(g, p) || proctable_add_closed(&g->table, &closed) != 0)
		process_row_free_strings(&closed);

	/* The next image: same process, a new row, its own counters from here. */
	p->base = at_exec;
	p->row.parent_id = p->row.id;
	p->row.id = g->store->next_process_id++;
	p->row.stored = false;
	p->row.image++;
	p->row.start_ns = proc_epoch(p, ts);
	p->row.from_snapshot = false;
}

static void on_exec(struct ingest *g, uint64_t ts, const Tracer__ExecEvent *x)
{
	bool snap = x->from_snapshot;
	struct proc *p = proc_find(&g->table, x->pid, x->start_ns, snap);
	struct proc *parent;

	if (!p) {
		p = new_entry(g, x->pid, x->start_ns, snap, ts);
		if (!p)
			return;
		parent = x->has_parent_start_ns
			     ? proc_find(&g->table, x->ppid, x->parent_start_ns, snap)
			     : NULL;
		fill_image_from_exec(g, p, x);
		link_parent(g, p, parent, x->ppid);
		p->execed = true;
		p->row.from_snapshot = snap;
		p->snapshot_ts = snap ? ts : 0;
		/* Fork unseen: the row covers the whole process, like getrusage. */
		p->base = (struct raw_counters){0};
		goto done;
	}
	if (p->exited) {
		/* A zombie in /proc, or a resent event: the exit already closed it. */
		g->stats.late_events++;
		return;
	}
	if (p->start_coarse && !snap)
		make_start_precise(p, x->start_ns);
	if (snap) {
		/* The kernel already told us about this one; /proc adds nothing. */
		if (!p->execed && !p->snapshot_ts) {
			fill_image_from_exec(g, p, x);
			p->snapshot_ts = ts;
		}
		p->seen_gen = g->gen;
		return;
	}
	if (p->snapshot_ts && ts < p->snapshot_ts && p->row.from_snapshot) {
		/* This exec happened before /proc was read: same image, better data. */
		fill_image_from_exec(g, p, x);
		p->row.from_snapshot = false;
	} else if (p->execed || p->fork_image_shipped) {
		close_image(g, p, ts, x);
		fill_image_from_exec(g, p, x);
	} else {
		fill_image_from_exec(g, p, x);
	}
	p->execed = true;
	if (runmark_is_tracer_daemon(p->row.exe)) {
		struct run *r = p->run;
		if (r && r->row.launcher_pid == p->row.ppid)
			correlate_join(&g->corr, p, NULL);
	}
done:
	note_launcher(g, p, x->argv, x->n_argv);
	{
		/* The parent process (not the previous image): engines look at it. */
		struct proc *par = x->has_parent_start_ns
				       ? proc_find(&g->table, x->ppid, x->parent_start_ns, true)
				       : proc_by_pid(&g->table, x->ppid);
		correlate_exec(&g->corr, p, par, x->argv, x->n_argv, proc_epoch(p, ts));
	}
	settle_samples(g, p);
	insight_activity(&g->insight, p, ts, proc_epoch(p, ts));
	touch(g, p);
}

static void finish_run_command(struct ingest *g, struct proc *p)
{
	for (struct run *r = g->corr.runs; r; r = r->next) {
		if (!r->has_command || r->command_pid != p->pid ||
		    !proc_same_start(r->command_start_ns, r->command_coarse, p->start_boot_ns,
				     p->start_coarse))
			continue;
		r->row.end_ns = p->row.end_ns;
		r->row.has_exit_code = p->row.has_exit_code;
		r->row.exit_code = p->row.exit_code;
		r->row.has_signal = p->row.has_signal;
		r->row.signal = p->row.signal;
		r->status = p->row.has_signal  ? GROUP_KILLED
			    : p->row.exit_code ? GROUP_FAILED
					       : GROUP_OK;
		r->dirty = true;
	}
}

static void on_exit_event(struct ingest *g, uint64_t ts, const Tracer__ExitEvent *x)
{
	struct proc *p = proc_find(&g->table, x->pid, x->start_ns, false);
	struct raw_counters end = raw_from(x->totals);
	struct exit_status st = exit_status_decode(x->wait_status);

	if (!p) {
		/* Exited before we saw it start (e.g. between attach and snapshot). */
		g->stats.unmatched_exits++;
		p = new_entry(g, x->pid, x->start_ns, false, ts);
		if (!p)
			return;
		struct proc *parent = x->has_ppid ? proc_by_pid(&g->table, x->ppid) : NULL;
		copy_string(p->row.comm, sizeof(p->row.comm), x->comm ? x->comm : "");
		link_parent(g, p, parent && !parent->exited ? parent : NULL, x->ppid);
	} else if (p->exited) {
		g->stats.late_events++;
		return;
	}
	if (p->start_coarse)
		make_start_precise(p, x->start_ns);
	p->row.end_ns = proc_epoch(p, ts);
	p->row.state = "exited";
	p->row.has_exit_code = st.exited;
	p->row.exit_code = st.code;
	p->row.has_signal = !st.exited;
	p->row.signal = st.signal;
	p->row.core_dumped = st.core_dumped;
	p->row.has_metrics = x->totals != NULL;
	metrics_between(&end, &p->base, &p->row.m);
	p->row.m.has_max_rss = x->totals != NULL;
	p->row.m.max_rss_kb = x->totals ? x->totals->peak_rss_kb : 0;
	set_presence(&p->row.m, x->totals);
	p->row.m.ru_maxrss_kb = x->totals ? x->totals->signal_maxrss_kb : 0;
	p->exited = true;
	correlate_exit(&g->corr, p);
	insight_process_exit(&g->insight, p, p->row.end_ns);
	finish_run_command(g, p);
	if (p->launched)
		p->launched->finished = true;
	settle_samples(g, p);
	touch(g, p);
	proc_retire(&g->table, p, ts);
}

static void on_oom(struct ingest *g, uint64_t ts, const Tracer__OomEvent *x)
{
	struct proc *p = proc_find(&g->table, x->pid, x->start_ns, false);
	struct oom_row r = {0};

	r.ts_ns = p ? proc_epoch(p, ts) : to_epoch(g, ts);
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
		touch(g, p);
		if (!recordable(g, p))
			return;
	} else if (g->scope == SCOPE_RUNS) {
		return;
	}
	insight_oom(&g->insight, &r, p, r.ts_ns);
	if (!PUSH(g->pending.ooms, g->pending.n_ooms, g->pending.cap_ooms, r))
		g->stats.oom++;
}

static char *file_path(const struct proc *p, const Tracer__FileEvent *x)
{
	char *joined, *clean;
	size_t n;

	if (!x->relative || !p->row.cwd)
		return utf8_sanitize(x->path, strlen(x->path));
	/* Relative to the cwd at exec: right unless the process changed directory. */
	n = strlen(p->row.cwd) + strlen(x->path) + 2;
	joined = malloc(n);
	if (!joined)
		return NULL;
	snprintf(joined, n, "%s%s%s", p->row.cwd, strcmp(p->row.cwd, "/") ? "/" : "", x->path);
	clean = utf8_sanitize(joined, strlen(joined));
	free(joined);
	return clean;
}

static void on_file(struct ingest *g, uint64_t ts, const Tracer__FileEvent *x)
{
	struct proc *p = proc_find(&g->table, x->pid, x->start_ns, false);
	struct file_row r = {0};

	if (!p || p->exited) {
		g->stats.files_unmatched++;
		return;
	}
	if (!recordable(g, p) || x->slot >= 4096)
		return;
	if (x->slot >= p->n_file_ids) {
		uint32_t n = x->slot + 16;
		int64_t *ids = realloc(p->file_ids, n * sizeof(*ids));
		if (!ids) {
			g->stats.oom++;
			return;
		}
		memset(ids + p->n_file_ids, 0, (n - p->n_file_ids) * sizeof(*ids));
		p->file_ids = ids;
		p->n_file_ids = n;
	}
	r.id = g->next_file_id++;
	r.process_id = p->row.id;
	r.path = file_path(p, x);
	r.open_flags = x->open_flags;
	r.result = x->result < 0 ? -x->result : 0;
	r.count = 1;
	r.failed = x->result < 0;
	r.first_ns = proc_epoch(p, ts);
	r.truncated = x->truncated;
	if (!r.path || !PUSH(g->pending.files, g->pending.n_files, g->pending.cap_files, r)) {
		free(r.path);
		g->stats.oom++;
		return;
	}
	p->file_ids[x->slot] = r.id;
}

static void on_file_counts(struct ingest *g, const Tracer__FileCountsEvent *x)
{
	struct proc *p = proc_find(&g->table, x->pid, x->start_ns, false);

	if (!p) {
		g->stats.files_unmatched++;
		return;
	}
	if (x->overflow) {
		p->row.files_overflow = x->overflow;
		if (recordable(g, p))
			proc_mark_dirty(&g->table, p);
	}
	for (size_t i = 0; i < x->n_count && i < p->n_file_ids; i++) {
		struct file_update u = {
		    .id = p->file_ids[i],
		    .count = x->count[i],
		    .failed = i < x->n_failed ? x->failed[i] : 0,
		    .flags = i < x->n_flags_union ? x->flags_union[i] : 0,
		};
		if (u.id && !PUSH(g->pending.file_updates, g->pending.n_file_updates,
				  g->pending.cap_file_updates, u))
			g->stats.oom++;
	}
}

static void on_cgroup(struct ingest *g, uint64_t ts, const Tracer__CgroupEvent *x)
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
			r.removed_ns = to_epoch(g, ts);
		else
			r.created_ns = to_epoch(g, ts);
	}
	if (!PUSH(g->pending.cgroups, g->pending.n_cgroups, g->pending.cap_cgroups, r)) {
		free(r.path);
		free(r.controllers);
		g->stats.oom++;
	}
}

static void on_sample(struct ingest *g, uint64_t ts, const Tracer__SampleEvent *x)
{
	struct proc *p = proc_find(&g->table, x->pid, x->start_ns, false);
	struct sample_row r = {0};

	if (!p || p->exited) {
		g->stats.samples_unmatched++;
		return;
	}
	uint64_t io = x->rchar + x->wchar;
	bool active = x->runtime_ns != p->last_sample_cpu || io != p->last_sample_io;
	g->insight.last_sample_boot_ns = ts;
	p->last_sample_io = io;
	correlate_sample(&g->corr, p, ts, x->rss_kb, x->runtime_ns);
	if (active)
		insight_activity(&g->insight, p, ts, proc_epoch(p, ts));
	if (!recordable(g, p))
		return;
	bool held = false;
	if (g->store->outbox && !p->execed && !p->fork_image_shipped) {
		if (ts < p->start_boot_ns + SAMPLE_HOLD_NS) {
			struct held_proc h = {p->pid, p->start_coarse, p->start_boot_ns};
			/* Out of memory: held until a later sample, an exec or the exit instead. */
			if (!p->samples_held && !PUSH(g->held, g->n_held, g->cap_held, h))
				g->stats.oom++;
			held = p->samples_held = true;
		} else {
			end_sample_hold(g, p);
		}
	}
	held = held || p->samples_held; /* a release not queued yet: see settle_samples */
	r.process_id = p->row.id;
	r.ts_ns = proc_epoch(p, ts);
	cputime_adjust(x->utime_ns, x->stime_ns, x->runtime_ns, &r.cpu_user_ns, &r.cpu_sys_ns);
	r.rss_kb = x->rss_kb;
	r.rchar = x->rchar;
	r.wchar = x->wchar;
	r.read_bytes = x->read_bytes;
	r.write_bytes = x->write_bytes;
	r.runq_ns = x->run_delay_ns;
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
	if (!PUSH(g->pending.samples, g->pending.n_samples, g->pending.cap_samples, ps))
		g->stats.oom++;
}

void ingest_host_sample(struct ingest *g, const struct host_sample_row *row)
{
	if (!PUSH(g->pending.hosts, g->pending.n_hosts, g->pending.cap_hosts, *row))
		g->stats.oom++;
}

/*
 * The wall and boot clocks run at one rate (NTP's slewing adjusts both), so
 * their difference changes only when the wall clock is stepped; what a frame
 * carries otherwise differs by how precisely it was measured, nanoseconds.
 */
#define CLOCK_STEP_MIN_NS ((int64_t)(50 * NSEC_PER_MSEC))

/*
 * The offset moves only at a step, so processes first seen between two steps
 * share it exactly, and their samples of one pass share a wall-clock time.
 */
static void follow_clock(struct ingest *g, int64_t frame_offset_ns, bool same_boot)
{
	int64_t step_ns = frame_offset_ns - g->offset_ns;

	if (g->has_offset && same_boot) {
		if (step_ns > -CLOCK_STEP_MIN_NS && step_ns < CLOCK_STEP_MIN_NS)
			return;
		g->stats.clock_steps++;
		g->stats.last_clock_step_ns = step_ns;
		log_warn("the wall clock was stepped by %+.3f s; processes running across the step "
			 "keep the clock they started under",
			 (double)step_ns / 1e9);
	}
	g->has_offset = true;
	g->offset_ns = frame_offset_ns;
}

void ingest_set_frame_context(struct ingest *g, const Tracer__Frame *f)
{
	char boot_id[sizeof(g->boot_id)];

	format_hex(f->boot_id.data, (unsigned)f->boot_id.len, boot_id, sizeof(boot_id));
	follow_clock(g, f->realtime_offset_ns, strcmp(boot_id, g->boot_id) == 0);
	memcpy(g->boot_id, boot_id, sizeof(boot_id));
	copy_string(g->host_id, sizeof(g->host_id), f->host_id ? f->host_id : "");
	copy_string(g->hostname, sizeof(g->hostname), f->hostname ? f->hostname : "");
}

void ingest_event(struct ingest *g, const Tracer__Event *ev)
{
	g->stats.events++;
	switch (ev->kind_case) {
	case TRACER__EVENT__KIND_FORK:
		on_fork(g, ev->ts_ns, ev->fork);
		break;
	case TRACER__EVENT__KIND_EXEC:
		on_exec(g, ev->ts_ns, ev->exec);
		break;
	case TRACER__EVENT__KIND_EXIT:
		on_exit_event(g, ev->ts_ns, ev->exit);
		break;
	case TRACER__EVENT__KIND_OOM:
		on_oom(g, ev->ts_ns, ev->oom);
		break;
	case TRACER__EVENT__KIND_FILE:
		on_file(g, ev->ts_ns, ev->file);
		break;
	case TRACER__EVENT__KIND_FILE_COUNTS:
		on_file_counts(g, ev->file_counts);
		break;
	case TRACER__EVENT__KIND_CGROUP:
		on_cgroup(g, ev->ts_ns, ev->cgroup);
		break;
	case TRACER__EVENT__KIND_SAMPLE:
		on_sample(g, ev->ts_ns, ev->sample);
		break;
	default:
		break;
	}
}

void ingest_new_generation(struct ingest *g)
{
	g->gen++;
}

void ingest_snapshot_done(struct ingest *g, uint64_t now_boot_ns)
{
	struct proctable *t = &g->table;

	for (size_t i = 0; i < t->n_buckets; i++) {
		for (struct proc *p = t->buckets[i]; p; p = p->hash_next) {
			if (p->exited || p->seen_gen >= g->gen)
				continue;
			p->exited = true;
			p->row.state = "lost";
			g->stats.lost_processes++;
			settle_samples(g, p);
			if (recordable(g, p))
				proc_mark_dirty(t, p);
			proc_retire(t, p, now_boot_ns);
		}
	}
}

/* Writes the batch's held samples, or the others, which are queued one by one. */
static int write_samples(struct ingest *g, bool held)
{
	const struct pending *q = &g->pending;

	for (size_t i = 0; i < q->n_samples; i++) {
		const struct sample_row *r = &q->samples[i].row;
		if (q->samples[i].held != held)
			continue;
		int rc = store_put_sample(g->store, r);
		if (rc == 0 && held)
			rc = store_hold_samples(g->store, r->process_id);
		else if (rc == 0)
			rc = store_ship(g->store, OUTBOX_SAMPLES, r->process_id, r->ts_ns, NULL);
		if (rc != 0)
			return -1;
	}
	return 0;
}

int ingest_write(struct ingest *g)
{
	struct pending *q = &g->pending;

	/*
	 * Samples first: a process forgotten below takes this batch's with it.
	 * A release queues every sample of its process written so far, so it
	 * comes after the held samples and before the rest: a sample taken after
	 * the release (in this batch) would otherwise be queued twice.
	 */
	if (write_samples(g, true) != 0)
		return -1;
	for (size_t i = 0; i < q->n_releases; i++)
		if (store_release_samples(g->store, q->releases[i]) != 0)
			return -1;
	if (write_samples(g, false) != 0)
		return -1;
	for (struct closed_row *c = g->table.closed; c; c = c->next)
		if (store_put_process(g->store, &c->row) != 0 ||
		    store_ship(g->store, OUTBOX_PROCESSES, c->row.id, 0, NULL) != 0)
			return -1;
	for (struct proc *p = g->table.dirty; p; p = p->dirty_next) {
		int rc = 0;
		if (recordable(g, p)) {
			rc = store_put_process(g->store, &p->row);
		} else {
			rc = store_forget_process(g->store, p->row.id);
			p->samples_held = false;
		}
		if (rc == 0 && recordable(g, p) && p->exited)
			rc = store_ship(g->store, OUTBOX_PROCESSES, p->row.id, 0, NULL);
		if (rc != 0)
			return -1;
	}
	if (correlate_write(&g->corr) != 0 || insight_write(&g->insight) != 0)
		return -1;
	for (size_t i = 0; i < q->n_files; i++)
		if (store_put_file(g->store, &q->files[i]) != 0)
			return -1;
	for (size_t i = 0; i < q->n_file_updates; i++)
		if (store_update_file_counts(g->store, q->file_updates[i].id,
					     q->file_updates[i].count, q->file_updates[i].failed,
					     q->file_updates[i].flags) != 0)
			return -1;
	for (size_t i = 0; i < q->n_ooms; i++)
		if (store_put_oom(g->store, &q->ooms[i]) != 0)
			return -1;
	for (size_t i = 0; i < q->n_cgroups; i++)
		if (store_put_cgroup(g->store, &q->cgroups[i]) != 0)
			return -1;
	for (size_t i = 0; i < q->n_hosts; i++)
		if (store_put_host_sample(g->store, &q->hosts[i]) != 0 ||
		    store_ship(g->store, OUTBOX_HOST_SAMPLES, q->hosts[i].ts_ns, 0, NULL) != 0)
			return -1;
	if (g->store->outbox && outbox_trim(g->store->outbox, (int64_t)now_realtime_ns()) != 0)
		return -1;
	return 0;
}

bool ingest_has_pending(const struct ingest *g)
{
	const struct pending *q = &g->pending;

	return g->table.dirty || g->table.closed || q->n_files || q->n_file_updates || q->n_ooms ||
	       q->n_cgroups || q->n_samples || q->n_releases || q->n_hosts ||
	       correlate_has_pending(&g->corr) || insight_has_pending(&g->insight);
}

void ingest_committed(struct ingest *g, uint64_t now_boot_ns)
{
	struct proctable *t = &g->table;

	for (struct closed_row *c = t->closed; c;) {
		struct closed_row *next = c->next;
		process_row_free_strings(&c->row);
		free(c);
		c = next;
	}
	t->closed = NULL;
	pending_clear(&g->pending, false);
	for (struct proc *p = t->dirty; p;) {
		struct proc *next = p->dirty_next;
		p->dirty = false;
		p->dirty_next = NULL;
		/* Written for good: the strings are no longer needed. The file ids
		 * stay until the entry is freed: the counts follow the exit. */
		if (p->exited)
			process_row_free_strings(&p->row);
		p = next;
	}
	t->dirty = NULL;
	/* Free old entries first: they hold the references that keep runs alive. */
	proctable_gc(t, now_boot_ns, EXITED_GRACE_NS);
	correlate_committed(&g->corr);
	insight_committed(&g->insight);
}

/*
 * Ends the holds that are due. A process sampled while young and idle since
 * sends no further sample (unchanged processes are not sampled), so without
 * this its held samples would wait for its exec or exit, however late.
 */
static void release_due_holds(struct ingest *g, uint64_t now_boot_ns)
{
	size_t kept = 0;

	for (size_t i = 0; i < g->n_held; i++) {
		struct held_proc h = g->held[i];
		struct proc *p = proc_find(&g->table, h.pid, h.start_ns, h.coarse);
		if (!p || !p->samples_held)
			continue; /* settled meanwhile: exec, exit, or a later sample */
		if (now_boot_ns >= p->start_boot_ns + SAMPLE_HOLD_NS && !p->execed) {
			end_sample_hold(g, p);
			if (!p->samples_held)
				continue;
		}
		g->held[kept++] = h;
	}
	g->n_held = kept;
}

void ingest_tick(struct ingest *g, uint64_t now_boot_ns, int64_t now_ns)
{
	release_due_holds(g, now_boot_ns);
	insight_tick(&g->insight, &g->table, g->corr.runs, now_boot_ns, now_ns);
}

/* --- restart ---------------------------------------------------------------------- */

static void load_process(void *ctx, struct process_row *r)
{
	struct ingest *g = ctx;
	struct proc *p = proc_by_pid(&g->table, r->pid);

	if (p) {
		process_row_free_strings(r);
		return;
	}
	p = proc_add(&g->table, r->pid, r->proc_start_boot_ns, r->from_snapshot);
	if (!p) {
		process_row_free_strings(r);
		return;
	}
	p->row = *r;
	p->execed = true;
	p->seen_gen = 0;
	/*
	 * The clock it started under (proc_epoch). A later image's boot-clock start
	 * is not stored, but its first image's row holds the process's offset;
	 * only without that row does today's offset stand in.
	 */
	if (r->image == 0)
		p->epoch_offset_ns = r->start_ns - (int64_t)r->proc_start_boot_ns;
	else if (store_first_image_offset(g->store, r, &p->epoch_offset_ns) != 0)
		p->epoch_offset_ns = realtime_offset_ns();
}

static struct proc *entry_with_row_id(struct ingest *g, int64_t id)
{
	for (size_t i = 0; i < g->table.n_buckets && id; i++)
		for (struct proc *p = g->table.buckets[i]; p; p = p->hash_next)
			if (p->row.id == id)
				return p;
	return NULL;
}

static const char *source_constant(const unsigned char *v)
{
	static const char *const sources[] = {"explicit", "engine", "script", "slurm"};

	for (size_t i = 0; v && i < 4; i++)
		if (!strcmp((const char *)v, sources[i]))
			return sources[i];
	return "explicit";
}

/* Steps of a resumed run, so later processes join them rather than new ones. */
static void load_steps(struct ingest *g, struct run *r)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(g->store->db,
			       "SELECT id, key, name, kind, root_process_id, start_ns FROM steps "
			       "WHERE run_id = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, r->row.id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct step *s = calloc(1, sizeof(*s));
		const unsigned char *v;
		if (!s)
			break;
		s->id = sqlite3_column_int64(st, 0);
		s->run = r;
		v = sqlite3_column_text(st, 1);
		copy_string(s->key, sizeof(s->key), v ? (const char *)v : "");
		v = sqlite3_column_text(st, 2);
		copy_string(s->name, sizeof(s->name), v ? (const char *)v : "");
		s->named = s->name[0] != '\0';
		v = sqlite3_column_text(st, 3);
		copy_string(s->kind, sizeof(s->kind), v ? (const char *)v : "");
		s->root_process_id = sqlite3_column_int64(st, 4);
		struct proc *root = entry_with_row_id(g, s->root_process_id);
		if (root) {
			s->root_pid = root->pid;
			s->root_start_ns = root->start_boot_ns;
		}
		/* The step's clock is its root's, like the run's (ingest_load_state). */
		rollup_start(&s->r, sqlite3_column_int64(st, 5),
			     root ? root->epoch_offset_ns : r->r.clock_offset_ns);
		s->next = r->steps;
		r->steps = s;
		r->step_seq++;
	}
	sqlite3_finalize(st);
}

int ingest_load_state(struct ingest *g)
{
	sqlite3_stmt *st;
	int rc;

	if (store_each_running_process(g->store, load_process, g) != 0)
		return -1;
	/* Runs that had not ended, with their engines and steps. */
	rc = sqlite3_prepare_v2(
	    g->store->db,
	    "SELECT id, name, pipeline, host_id, hostname, boot_id, start_ns, "
	    "command_process_id, launcher_pid, launcher_start_ns, source, engine, "
	    "engine_process_id, pipeline_id FROM runs WHERE end_ns IS NULL",
	    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct run_row row = {0};
		const unsigned char *v;
		row.id = sqlite3_column_int64(st, 0);
		v = sqlite3_column_text(st, 1);
		row.name = strdup(v ? (const char *)v : "");
		v = sqlite3_column_text(st, 2);
		row.pipeline = v ? strdup((const char *)v) : NULL;
		v = sqlite3_column_text(st, 3);
		copy_string(row.host_id, sizeof(row.host_id), v ? (const char *)v : "");
		v = sqlite3_column_text(st, 4);
		copy_string(row.hostname, sizeof(row.hostname), v ? (const char *)v : "");
		v = sqlite3_column_text(st, 5);
		copy_string(row.boot_id, sizeof(row.boot_id), v ? (const char *)v : "");
		row.start_ns = sqlite3_column_int64(st, 6);
		row.command_process_id = sqlite3_column_int64(st, 7);
		row.launcher_pid = (uint32_t)sqlite3_column_int64(st, 8);
		row.launcher_start_ns = (uint64_t)sqlite3_column_int64(st, 9);
		struct run *r = correlate_explicit_run(&g->corr, &row);
		if (!r)
			break;
		r->row.source = source_constant(sqlite3_column_text(st, 10));
		v = sqlite3_column_text(st, 11);
		copy_string(r->engine, sizeof(r->engine), v ? (const char *)v : "");
		r->engine_process_id = sqlite3_column_int64(st, 12);
		r->pipeline_id = sqlite3_column_int64(st, 13);
		r->dirty = false;
		struct proc *engine = entry_with_row_id(g, r->engine_process_id);
		if (engine) {
			r->engine_pid = engine->pid;
			r->engine_start_ns = engine->start_boot_ns;
		}
		struct proc *command = entry_with_row_id(g, r->row.command_process_id);
		if (command) {
			r->has_command = true;
			r->command_pid = command->pid;
			r->command_start_ns = command->start_boot_ns;
			r->command_coarse = command->start_coarse;
		}
		/* The run's clock is that of the process that started it, if it still runs. */
		struct proc *first = command ? command : engine;
		rollup_start(&r->r, row.start_ns,
			     first ? first->epoch_offset_ns : realtime_offset_ns());
		struct proc *launcher = row.launcher_pid ? proc_find(&g->table, row.launcher_pid,
								     row.launcher_start_ns, true)
							 : NULL;
		if (launcher) {
			launcher->launched = r;
			r->refs++;
		}
		/* The process that ends it is gone: it ended while we were down. */
		if (!strcmp(r->row.source, "explicit") ? !launcher : !engine)
			r->finished = true;
		load_steps(g, r);
	}
	sqlite3_finalize(st);
	/* Point the resumed processes at their runs and steps. */
	for (size_t i = 0; i < g->table.n_buckets; i++) {
		for (struct proc *p = g->table.buckets[i]; p; p = p->hash_next) {
			struct run *r = correlate_run_by_id(&g->corr, p->row.run_id);
			int64_t step_id = p->row.step_id;
			if (!r)
				continue;
			correlate_join(&g->corr, p, r);
			for (struct step *s = r->steps; s; s = s->next) {
				if (s->id != step_id)
					continue;
				p->step = s;
				s->refs++;
				s->r.live++;
			}
		}
	}
	log_info("resumed %zu running processes from the database", g->table.count);
	return 0;
}
