/*
 * Fork, exec and exit: process entries and the rows of their images. An exec
 * in place closes the current image's row and opens the next one.
 */
#include "aggregator/ingest/internal.h"

#include <stdlib.h>
#include <string.h>

#include "aggregator/ingest/cputime.h"
#include "aggregator/ingest/runmark.h"
#include "common/exitstatus.h"
#include "common/jsonutil.h"
#include "common/strutil.h"

static void set_string(char **dst, const char *src)
{
	free(*dst);
	*dst = src && src[0] ? utf8_sanitize(src, strlen(src)) : NULL;
}

static void fill_image_from_exec(struct ingest *g, struct proc *p, const Tracer__ExecEvent *x)
{
	/* The exec's cwd is the cwd now: a chdir before it no longer matters. */
	free(p->life.cwd);
	p->life.cwd = NULL;
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
		p->row.start_epoch_ns = proc_epoch_ns(p, start_boot_ns);
}

static struct proc *new_entry(struct ingest *g, uint32_t pid, uint64_t start, bool coarse,
			      uint64_t now_boot)
{
	struct proc *old = proc_by_pid(&g->table, pid);
	struct proc *p;

	if (old) {
		/* PID reused: the old process ended without our seeing it. */
		if (!old->life.exited) {
			old->life.exited = true;
			old->row.state = "lost";
			g->stats.lost_processes++;
			if (ingest_recordable(g, old))
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
	p->life.epoch_offset_ns = g->offset_ns;
	p->row.start_epoch_ns = proc_epoch_ns(p, start);
	p->row.state = "running";
	insight_activity(&g->insight, p, now_boot, proc_epoch_ns(p, now_boot));
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
	p->life.parent_start_boot_ns = parent->start_boot_ns;
	if (parent->life.launched) {
		if (!runmark_is_tracer_daemon(p->row.exe))
			launch_join_run(g, p, parent);
	} else {
		correlate_fork(&g->corr, p, parent);
	}
}

void on_fork(struct ingest *g, uint64_t ts_boot_ns, const Tracer__ForkEvent *f)
{
	bool coarse = !f->has_start_ns || f->start_ns == 0;
	uint64_t start = coarse ? ts_boot_ns : f->start_ns;
	struct proc *parent = proc_find(&g->table, f->parent_pid, f->parent_start_ns, false);
	struct proc *p = proc_find(&g->table, f->pid, start, coarse);

	if (p) {
		/* Already known from the snapshot: the fork adds nothing new. */
		p->life.seen_gen = g->gen;
		return;
	}
	p = new_entry(g, f->pid, start, coarse, ts_boot_ns);
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
		p->row.end_epoch_ns = 0;
		p->row.has_exit_code = p->row.has_signal = p->row.has_metrics = false;
		p->row.from_snapshot = false;
		p->row.pid = f->pid;
		p->row.proc_start_boot_ns = start;
		p->row.start_epoch_ns = proc_epoch_ns(p, start);
		p->row.state = "running";
		/* A chdir of the parent's since its exec is the child's cwd too. */
		if (parent->life.cwd && !(p->life.cwd = strdup(parent->life.cwd)))
			g->stats.oom++;
	}
	copy_string(p->row.comm, sizeof(p->row.comm), f->comm ? f->comm : "");
	/* Its own cgroups at fork, not its parent's at that one's exec. */
	if (f->has_cgroup_id) {
		p->row.cgroup_id = f->cgroup_id;
		p->row.cgroup1_id = f->cgroup1_id;
	}
	if (f->has_uid) {
		p->row.has_ids = true;
		p->row.uid = f->uid;
		p->row.gid = f->gid;
	}
	link_parent(g, p, parent, f->parent_pid);
	insight_activity(&g->insight, p, ts_boot_ns, proc_epoch_ns(p, ts_boot_ns));
	if (parent) {
		parent->life.had_children = true;
		insight_activity(&g->insight, parent, ts_boot_ns,
				 proc_epoch_ns(parent, ts_boot_ns));
	}
	ingest_touch(g, p);
}

static void close_image(struct ingest *g, struct proc *p, uint64_t ts_boot_ns,
			const Tracer__ExecEvent *x)
{
	struct process_row closed;
	struct raw_counters at_exec = raw_counters_from(x->at_exec);

	if (process_row_copy(&closed, &p->row) != 0) {
		g->stats.oom++;
		return;
	}
	closed.end_epoch_ns = proc_epoch_ns(p, ts_boot_ns);
	closed.state = "exec";
	closed.has_metrics = x->at_exec != NULL;
	metrics_between(&at_exec, &p->life.base, &closed.m);
	closed.m.has_max_rss = x->has_prev_peak_rss_kb;
	metrics_set_presence(&closed.m, x->at_exec);
	closed.m.max_rss_kb = x->prev_peak_rss_kb;
	closed.m.ru_maxrss_kb = x->at_exec ? x->at_exec->signal_maxrss_kb : 0;
	/* Its step's and run's totals hold every image, not only the last. */
	correlate_image_end(&g->corr, p, &closed);
	if (!ingest_recordable(g, p) || proctable_add_closed(&g->table, &closed) != 0)
		process_row_free_strings(&closed);

	/* The next image: same process, a new row, its own counters from here. */
	p->life.base = at_exec;
	p->row.parent_id = p->row.id;
	p->row.id = g->store->next_process_id++;
	p->row.stored = false;
	p->row.image++;
	p->row.start_epoch_ns = proc_epoch_ns(p, ts_boot_ns);
	p->row.from_snapshot = false;
}

void on_exec(struct ingest *g, uint64_t ts_boot_ns, const Tracer__ExecEvent *x)
{
	bool snap = x->from_snapshot;
	struct proc *p = proc_find(&g->table, x->pid, x->start_ns, snap);
	struct proc *parent;

	if (!p) {
		p = new_entry(g, x->pid, x->start_ns, snap, ts_boot_ns);
		if (!p)
			return;
		parent = x->has_parent_start_ns
			     ? proc_find(&g->table, x->ppid, x->parent_start_ns, snap)
			     : NULL;
		fill_image_from_exec(g, p, x);
		link_parent(g, p, parent, x->ppid);
		p->life.execed = true;
		p->row.from_snapshot = snap;
		p->life.snapshot_boot_ns = snap ? ts_boot_ns : 0;
		if (snap && g->blind_since_boot_ns && x->start_ns > g->blind_since_boot_ns)
			g->blind_processes++; /* began while no collector watched */
		/* Fork unseen: the row covers the whole process, like getrusage. */
		p->life.base = (struct raw_counters){0};
		goto done;
	}
	if (p->life.exited) {
		/* A zombie in /proc, or a resent event: the exit already closed it. */
		g->stats.late_events++;
		return;
	}
	if (p->start_coarse && !snap)
		make_start_precise(p, x->start_ns);
	if (snap) {
		/* The kernel already told us about this one; /proc adds nothing. */
		if (!p->life.execed && !p->life.snapshot_boot_ns) {
			fill_image_from_exec(g, p, x);
			p->life.snapshot_boot_ns = ts_boot_ns;
		}
		p->life.seen_gen = g->gen;
		return;
	}
	if (p->life.snapshot_boot_ns && ts_boot_ns < p->life.snapshot_boot_ns &&
	    p->row.from_snapshot) {
		/* This exec happened before /proc was read: same image, better data. */
		fill_image_from_exec(g, p, x);
		p->row.from_snapshot = false;
	} else if (p->life.execed || p->life.fork_image_shipped) {
		close_image(g, p, ts_boot_ns, x);
		fill_image_from_exec(g, p, x);
	} else {
		fill_image_from_exec(g, p, x);
	}
	p->life.execed = true;
	if (runmark_is_tracer_daemon(p->row.exe)) {
		struct run *r = p->in.run;
		if (r && r->row.launcher_pid == p->row.ppid) {
			launch_not_the_command(r, p);
			correlate_join(&g->corr, p, NULL);
		}
	}
done:
	launch_note_launcher(g, p, x->argv, x->n_argv);
	{
		/* The parent process (not the previous image): engines look at it. */
		struct proc *par = x->has_parent_start_ns
				       ? proc_find(&g->table, x->ppid, x->parent_start_ns, true)
				       : proc_by_pid(&g->table, x->ppid);
		correlate_exec(&g->corr, p, par, x->argv, x->n_argv, proc_epoch_ns(p, ts_boot_ns));
	}
	if (p->in.denied)
		g->stats.denied_images++;
	hold_settle(g, p);
	insight_activity(&g->insight, p, ts_boot_ns, proc_epoch_ns(p, ts_boot_ns));
	ingest_touch(g, p);
}

void on_exit_event(struct ingest *g, uint64_t ts_boot_ns, const Tracer__ExitEvent *x)
{
	struct proc *p = proc_find(&g->table, x->pid, x->start_ns, false);
	struct raw_counters end = raw_counters_from(x->totals);
	struct exit_status st = exit_status_decode(x->wait_status);

	if (!p) {
		/* Exited before we saw it start (e.g. between attach and snapshot). */
		g->stats.unmatched_exits++;
		p = new_entry(g, x->pid, x->start_ns, false, ts_boot_ns);
		if (!p)
			return;
		struct proc *parent = x->has_ppid ? proc_by_pid(&g->table, x->ppid) : NULL;
		copy_string(p->row.comm, sizeof(p->row.comm), x->comm ? x->comm : "");
		link_parent(g, p, parent && !parent->life.exited ? parent : NULL, x->ppid);
	} else if (p->life.exited) {
		g->stats.late_events++;
		return;
	}
	if (p->start_coarse)
		make_start_precise(p, x->start_ns);
	p->row.end_epoch_ns = proc_epoch_ns(p, ts_boot_ns);
	p->row.state = "exited";
	p->row.has_exit_code = st.exited;
	p->row.exit_code = st.code;
	p->row.has_signal = !st.exited;
	p->row.signal = st.signal;
	p->row.core_dumped = st.core_dumped;
	if (!st.exited && x->has_killer_pid && x->killer_pid) {
		/* A task name is whatever bytes a program set (prctl): valid UTF-8 here. */
		char *name = utf8_sanitize(x->killer_comm ? x->killer_comm : "",
					   x->killer_comm ? strlen(x->killer_comm) : 0);
		p->row.killed_by_pid = x->killer_pid;
		copy_string(p->row.killed_by_comm, sizeof(p->row.killed_by_comm),
			    name ? name : "?");
		free(name);
	}
	p->row.has_metrics = x->totals != NULL;
	metrics_between(&end, &p->life.base, &p->row.m);
	p->row.m.has_max_rss = x->totals != NULL;
	p->row.m.max_rss_kb = x->totals ? x->totals->peak_rss_kb : 0;
	metrics_set_presence(&p->row.m, x->totals);
	p->row.m.ru_maxrss_kb = x->totals ? x->totals->signal_maxrss_kb : 0;
	p->life.exit_utime_ns = end.utime_ns;
	p->life.exit_stime_ns = end.stime_ns;
	p->life.exit_runtime_ns = end.runtime_ns;
	p->life.has_exit_walk_seq = x->has_walk_seq;
	p->life.exit_walk_seq = x->walk_seq;
	p->life.exited = true;
	correlate_exit(&g->corr, p);
	insight_process_exit(&g->insight, p, p->row.end_epoch_ns);
	launch_finish_command(g, p);
	if (p->life.launched)
		launch_end_launcher(g, p);
	hold_settle(g, p);
	ingest_touch(g, p);
	proc_retire(&g->table, p, ts_boot_ns);
}

static uint64_t minus(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/*
 * What a thread of the process used after the exit event, up to its last
 * switch-out (its exit path: freeing memory, closing files): the last
 * thread's, and one for each thread still exiting beside it. Added to the
 * last image, its step and its run, so they match wait4. A tail stamped with
 * another read of the totals than the exit's is of a thread released while
 * they were read: its time is in them already, and it is left out.
 */
void on_exit_tail(struct ingest *g, const Tracer__ExitTailEvent *x)
{
	struct proc *p = proc_find(&g->table, x->pid, x->start_ns, false);
	struct proc_metrics *m;
	uint64_t user, sys;

	if (!p || !p->life.exited || !p->row.has_metrics) {
		g->stats.tails_unmatched++;
		return;
	}
	if (x->has_walk_seq && p->life.has_exit_walk_seq && x->walk_seq != p->life.exit_walk_seq)
		return;
	m = &p->row.m;
	p->life.exit_utime_ns += x->utime_ns;
	p->life.exit_stime_ns += x->stime_ns;
	p->life.exit_runtime_ns += x->runtime_ns;
	cputime_adjust(minus(p->life.exit_utime_ns, p->life.base.utime_ns),
		       minus(p->life.exit_stime_ns, p->life.base.stime_ns),
		       minus(p->life.exit_runtime_ns, p->life.base.runtime_ns), &user, &sys);
	int64_t added = (int64_t)(user + sys) - (int64_t)(m->cpu_user_ns + m->cpu_sys_ns);
	m->cpu_user_ns = user;
	m->cpu_sys_ns = sys;
	correlate_exit_tail(&g->corr, p, added);
	if (!ingest_recordable(g, p) || p->links.dirty)
		return; /* not written, or written whole with the next commit */
	struct process_update u = {
	    .id = p->row.id, .cpu = true, .cpu_user_ns = user, .cpu_sys_ns = sys};
	if (!vec_push(&g->pending.row_updates, u))
		g->stats.oom++;
}
