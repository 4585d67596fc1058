// SPDX-License-Identifier: GPL-2.0
/*
 * Process lifecycle: fork, exec and exit of whole processes (not threads),
 * with the kernel's exact per-process totals read at the last thread's exit.
 *
 * Each hook exists twice: a tp_btf flavour (typed arguments, preferred) and a
 * classic tracepoint flavour for kernels without BTF-typed tracepoints. The
 * collector probes the kernel and disables the flavour it does not use. Both
 * share one source: `direct` (a constant per flavour) picks plain loads through
 * the tp_btf arguments or helper copies (KREAD in common.bpf.h).
 */
#include "common.bpf.h"

/* Peak RSS of the image being replaced, stashed by sched_prepare_exec. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u64);
} prev_peak SEC(".maps");

static __always_inline void add_task_io(struct tracer_counters *c, struct task_struct *t,
					bool direct)
{
	c->rchar += KREAD(direct, t, ioac.rchar);
	c->wchar += KREAD(direct, t, ioac.wchar);
	c->syscr += KREAD(direct, t, ioac.syscr);
	c->syscw += KREAD(direct, t, ioac.syscw);
	c->read_bytes += KREAD(direct, t, ioac.read_bytes);
	c->write_bytes += KREAD(direct, t, ioac.write_bytes);
	c->cancelled_write_bytes += KREAD(direct, t, ioac.cancelled_write_bytes);
}

/* CPU time, switches and faults: what a thread adds to signal_struct when it is released. */
struct group_cpu {
	__u64 utime;
	__u64 stime;
	__u64 runtime;
	__u64 vol_ctxsw;
	__u64 invol_ctxsw;
	__u64 min_faults;
	__u64 maj_faults;
};

static __always_inline void add_thread_cpu(struct group_cpu *g, struct task_struct *t, bool direct)
{
	g->utime += KREAD(direct, t, utime);
	g->stime += KREAD(direct, t, stime);
	g->runtime += KREAD(direct, t, se.sum_exec_runtime);
	g->vol_ctxsw += KREAD(direct, t, nvcsw);
	g->invol_ctxsw += KREAD(direct, t, nivcsw);
	g->min_faults += KREAD(direct, t, min_flt);
	g->maj_faults += KREAD(direct, t, maj_flt);
}

static __always_inline void add_group_cpu(struct group_cpu *g, const struct group_cpu *more)
{
	g->utime += more->utime;
	g->stime += more->stime;
	g->runtime += more->runtime;
	g->vol_ctxsw += more->vol_ctxsw;
	g->invol_ctxsw += more->invol_ctxsw;
	g->min_faults += more->min_faults;
	g->maj_faults += more->maj_faults;
}

/* What released threads left in signal_struct. */
static __always_inline void signal_cpu(struct group_cpu *g, struct signal_struct *sig, bool direct)
{
	g->utime = KREAD(direct, sig, utime);
	g->stime = KREAD(direct, sig, stime);
	g->runtime = KREAD(direct, sig, sum_sched_runtime);
	g->vol_ctxsw = KREAD(direct, sig, nvcsw);
	g->invol_ctxsw = KREAD(direct, sig, nivcsw);
	g->min_faults = KREAD(direct, sig, min_flt);
	g->maj_faults = KREAD(direct, sig, maj_flt);
}

static __always_inline void set_group_cpu(struct tracer_counters *c, const struct group_cpu *g)
{
	c->utime_ns = g->utime;
	c->stime_ns = g->stime;
	c->runtime_ns = g->runtime;
	c->vol_ctxsw = g->vol_ctxsw;
	c->invol_ctxsw = g->invol_ctxsw;
	c->min_faults = g->min_faults;
	c->maj_faults = g->maj_faults;
}

/* Run delay and I/O: for dead threads these come from dead_threads, not signal_struct. */
static __always_inline void add_task_delay_io(struct tracer_counters *c, struct task_struct *t,
					      bool direct)
{
	c->runq_ns += KREAD(direct, t, sched_info.run_delay);
	add_task_io(c, t, direct);
}

/*
 * The exiting thread's own clocks as they went into its process's totals. Its
 * exit note must start from these, not from a second read: a tick between the
 * two reads moves its clock (up to 4 ms), and the tail, counted from the
 * second, would miss what the tick added.
 */
struct thread_clocks {
	__u64 runtime;
	__u64 utime;
	__u64 stime;
};

static __always_inline void keep_clocks(struct thread_clocks *c, const struct group_cpu *g)
{
	c->runtime = g->runtime;
	c->utime = g->utime;
	c->stime = g->stime;
}

/* Threads on the group's list, not yet released; list pointers are read with probe reads. */
struct thread_walk {
	struct list_head *head;
	struct list_head *pos;
	struct group_cpu cpu;
	__u64 start_ns; /* the process's, for exit notes; 0: leave none */
	__u64 self;	/* the exiting thread, noted by its exit event instead */
	struct thread_clocks self_clocks;
	__u32 tgid;
	__u32 seq; /* stats_lock's sequence as this attempt began: stamps its notes */
};

/*
 * A thread still on the group's list: its clocks, and, if it is still exiting
 * on another CPU, an exit note with them, so its last switch-out sends the
 * rest (sched.bpf.c), which wait4 counts too. Only one past exit_notify() and
 * off the CPU is done: a group leader that is a zombie still on its CPU has up
 * to a tick of runtime its clock does not show yet (4 ms short, as often as 1
 * in 300 of such exits). The note is written before the thread is looked at
 * again: one whose last switch-out (TASK_DEAD, off the CPU) came between
 * reading its clocks and the note found no note to send, and the clocks read
 * may lag its end by up to a tick; it is read again, now final, and the note
 * left for no one removed. (One merely preempted in its exit path is not
 * TASK_DEAD yet and keeps its note.)
 */
static __always_inline void add_walked_thread(struct thread_walk *w, struct task_struct *t)
{
	struct group_cpu one = {};

	add_thread_cpu(&one, t, false);
	if ((__u64)t == w->self) {
		keep_clocks(&w->self_clocks, &one);
	} else if (w->start_ns && !(BPF_CORE_READ(t, exit_state) && !BPF_CORE_READ(t, on_cpu))) {
		__u32 tid = BPF_CORE_READ(t, pid);
		struct exit_note n = {
		    .start_ns = w->start_ns,
		    .thread_start_ns = BPF_CORE_READ(t, start_boottime),
		    .runtime = one.runtime,
		    .utime = one.utime,
		    .stime = one.stime,
		    .tgid = w->tgid,
		    .walk_seq = w->seq,
		};
		bpf_map_update_elem(&exit_notes, &tid, &n, BPF_ANY);
		if ((BPF_CORE_READ(t, __state) & TASK_DEAD) && !BPF_CORE_READ(t, on_cpu) &&
		    bpf_map_lookup_elem(&exit_notes, &tid)) {
			bpf_map_delete_elem(&exit_notes, &tid);
			one = (struct group_cpu){};
			add_thread_cpu(&one, t, false);
		}
	}
	add_group_cpu(&w->cpu, &one);
}

/* Bounds the walk; a group with more threads still unreleased at its end is undercounted. */
#define MAX_THREADS_WALKED 16384

static long add_next_thread(__u64 i, void *ctx)
{
	struct thread_walk *w = ctx;
	struct list_head *pos = w->pos;
	struct list_head *next = BPF_CORE_READ(pos, next);

	(void)i;
	if (!next || next == w->head)
		return 1;
	w->pos = next;
	struct task_struct *t =
	    (void *)next - bpf_core_field_offset(struct task_struct, thread_node);
	add_walked_thread(w, t);
	return 0;
}

/*
 * The group's CPU time at its last thread's exit: signal_struct's sums plus
 * every thread not yet released. Other threads may be exiting on other
 * CPUs at this moment, still on the list with their time not yet added
 * (exit_group: a thread killed as the process ends). The kernel moves a
 * thread's time into signal_struct and unlinks it in one write section of
 * stats_lock, so a read between two equal even sequence numbers is
 * consistent, as in thread_group_cputime(). With start_ns set, each thread
 * still exiting gets an exit note stamped with the attempt's sequence number,
 * which is returned: a thread released during a failed attempt keeps that
 * attempt's note, while its time is in signal_struct by the next one, so its
 * exit tail would count again what it ran since the note (up to a tick, its
 * clock being read while it ran elsewhere). The aggregator drops a tail whose
 * stamp is not its exit event's.
 */
static __noinline __u32 read_group_cpu(struct signal_struct *sig, struct task_struct *self,
				       struct group_cpu *out, struct thread_clocks *self_out,
				       __u64 start_ns)
{
	__u32 tgid = ns_tgid_x(self, false);
	__u32 seq = 0;

	for (int attempt = 0; attempt < 3; attempt++) {
		struct thread_walk w = {
		    .start_ns = exit_tails_on ? start_ns : 0, .self = (__u64)self, .tgid = tgid};

		seq = BPF_CORE_READ(sig, stats_lock.seqcount.seqcount.sequence);
		w.seq = seq;
		w.head = (void *)sig + bpf_core_field_offset(struct signal_struct, thread_head);
		w.pos = w.head;
		signal_cpu(&w.cpu, sig, false);
		bpf_loop(MAX_THREADS_WALKED, add_next_thread, &w, 0);
		*out = w.cpu;
		*self_out = w.self_clocks;
		if (!(seq & 1) && seq == BPF_CORE_READ(sig, stats_lock.seqcount.seqcount.sequence))
			break;
	}
	return seq;
}

static __always_inline void add_acc(struct tracer_counters *c, const struct proc_acc *a)
{
	c->iowait_ns += a->iowait_ns;
	c->reclaim_ns += a->reclaim_ns;
	c->net_tx_bytes += a->net_tx_bytes;
	c->net_rx_bytes += a->net_rx_bytes;
	for (int i = 0; i < TRACER_SYS_CLASSES; i++)
		c->sys[i] += a->sys[i];
	c->sys_failed += a->sys_failed;
	for (int i = 0; i < TRACER_NET_WAIT_KINDS; i++)
		c->net_wait_ns[i] += a->net_wait_ns[i];
	c->net_wait_max_ns = a->net_wait_max_ns;
	c->net_wait_max_peer = a->net_wait_max_peer;
}

/* What read_counters says beside the counters. */
struct counters_read {
	__u32 flags;	/* TRACER_F_* */
	__u32 walk_seq; /* at the final exit: the thread walk's stamp (read_group_cpu), or 0 */
	struct thread_clocks self; /* the current thread's clocks as counted */
};

/* Which of a process's map entries read_counters found: only those need deleting at exit. */
#define HAD_DEAD_THREADS 1U
#define HAD_ACC 2U

/* The only thread not yet released (short processes): nothing else to sum. */
static __always_inline bool alone_in_group(struct signal_struct *sig, struct task_struct *task)
{
	void *mine = (void *)task + bpf_core_field_offset(struct task_struct, thread_node);

	return BPF_CORE_READ(sig, thread_head.next) == mine &&
	       BPF_CORE_READ(sig, thread_head.prev) == mine;
}

/*
 * Whole-process totals: what released threads left in signal_struct plus the
 * threads still around: at exec only the current one and the group leader
 * (exec waits for the others to be released); at the final exit every
 * thread still on the list (read_group_cpu). I/O, run delay and our own
 * accumulators of dead threads come from dead_threads instead. task is
 * always the current task here (exec and exit run in its context).
 */
static __always_inline __u32 read_counters(struct task_struct *task, struct tracer_counters *c,
					   struct counters_read *rd, bool final_exit,
					   __u64 start_ns, bool direct)
{
	struct signal_struct *sig = KREAD(direct, task, signal);
	struct task_struct *leader = KREAD(direct, task, group_leader);
	struct mm_struct *mm = KREAD(direct, task, mm);

	struct group_cpu cpu;
	if (final_exit && !alone_in_group(sig, task)) {
		rd->walk_seq = read_group_cpu(sig, task, &cpu, &rd->self, start_ns);
	} else {
		struct group_cpu own = {};

		signal_cpu(&cpu, sig, direct);
		add_thread_cpu(&own, task, direct);
		keep_clocks(&rd->self, &own);
		add_group_cpu(&cpu, &own);
		if (leader != task)
			add_thread_cpu(&cpu, leader, direct);
	}
	set_group_cpu(c, &cpu);
	__u32 tgid = KREAD(direct, task, tgid);
	struct dead_acc *dead = bpf_map_lookup_elem(&dead_threads, &tgid);
	c->rchar = c->wchar = c->syscr = c->syscw = 0;
	c->read_bytes = c->write_bytes = c->cancelled_write_bytes = 0;
	c->runq_ns = 0;
	if (dead && dead->start_ns == KREAD(direct, leader, start_boottime)) {
		c->rchar = dead->rchar;
		c->wchar = dead->wchar;
		c->syscr = dead->syscr;
		c->syscw = dead->syscw;
		c->read_bytes = dead->read_bytes;
		c->write_bytes = dead->write_bytes;
		c->cancelled_write_bytes = dead->cancelled_write_bytes;
		c->runq_ns = dead->runq_ns;
	}
	add_task_delay_io(c, task, direct);
	if (leader != task)
		add_task_delay_io(c, leader, direct);
	struct proc_acc acc;
	bool had_acc = proc_acc_sum(tgid, &acc);
	c->iowait_ns = c->reclaim_ns = c->net_tx_bytes = c->net_rx_bytes = c->sys_failed = 0;
	for (int i = 0; i < TRACER_SYS_CLASSES; i++)
		c->sys[i] = 0;
	for (int i = 0; i < TRACER_NET_WAIT_KINDS; i++)
		c->net_wait_ns[i] = 0;
	add_acc(c, &acc);

	c->signal_maxrss_kb = KREAD(direct, sig, maxrss) * page_kb;
	if (mm) {
		c->peak_rss_kb = mm_peak_kb_x(mm, direct);
	} else {
		/* Kernels before 6.16 fire sched_process_exit after exit_mm(). */
		c->peak_rss_kb = c->signal_maxrss_kb;
		rd->flags |= TRACER_F_PEAK_FROM_SIGNAL;
	}
	return (dead ? HAD_DEAD_THREADS : 0) | (had_acc ? HAD_ACC : 0);
}

/* One copy per flavour, each a subprogram shared by exec and exit. */
static __noinline __u32 read_counters_btf(struct task_struct *task, struct tracer_counters *c,
					  struct counters_read *rd, bool final_exit, __u64 start_ns)
{
	return read_counters(task, c, rd, final_exit, start_ns, true);
}

static __noinline __u32 read_counters_tp(struct task_struct *task, struct tracer_counters *c,
					 struct counters_read *rd, bool final_exit, __u64 start_ns)
{
	return read_counters(task, c, rd, final_exit, start_ns, false);
}

/* start_ns: the process's start at its final exit, for the exit notes of threads still exiting. */
static __always_inline __u32 read_counters_of(struct task_struct *task, struct tracer_counters *c,
					      struct counters_read *rd, bool final_exit,
					      __u64 start_ns, bool direct)
{
	if (direct)
		return read_counters_btf(task, c, rd, final_exit, start_ns);
	return read_counters_tp(task, c, rd, final_exit, start_ns);
}

/* One path walk in progress; bpf_loop() calls a walk step per component. */
struct path_walk {
	struct dentry *dentry;
	struct dentry *mnt_root;
	struct mount *mnt;
	struct mount *mnt_parent;
	char *buf;
	__u32 off;
	__u32 depth;
	__u32 done;
	__u32 pad;
};

/* Scratch for the path being built: ring buffer memory cannot be passed in. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[TRACER_CWD_MAX + TRACER_CWD_NAME_MAX]);
} path_scratch SEC(".maps");

/*
 * Pointers kept between walk steps lose their BTF type in the verifier's
 * eyes; bpf_rdonly_cast (common.bpf.h) gives it back. Only exec_btf uses
 * it: where the kernel lacks it the collector loads exec_tp instead.
 */
#define AS_KERNEL(direct, type, p)                                                                 \
	((direct) ? (type *)bpf_rdonly_cast((p), bpf_core_type_id_kernel(type)) : (type *)(p))

/*
 * Kernel reads go through plain locals, never through w->...: CO-RE would
 * try to relocate the fields of struct path_walk and fail the load.
 */
static __always_inline long walk_step_x(struct path_walk *w, bool direct)
{
	struct dentry *dentry = AS_KERNEL(direct, struct dentry, w->dentry);

	if (w->dentry == w->mnt_root) {
		struct mount *mnt = AS_KERNEL(direct, struct mount, w->mnt);

		if (w->mnt == w->mnt_parent) {
			w->done = 1;
			return 1;
		}
		/* Crossing a mount point: continue from where it is mounted. */
		w->dentry = KREAD(direct, mnt, mnt_mountpoint);
		mnt = AS_KERNEL(direct, struct mount, w->mnt_parent);
		w->mnt = mnt;
		w->mnt_parent = KREAD(direct, mnt, mnt_parent);
		w->mnt_root = KREAD(direct, mnt, mnt.mnt_root);
		return 0;
	}
	struct dentry *parent = KREAD(direct, dentry, d_parent);
	if (w->dentry == parent) {
		w->done = 1;
		return 1;
	}
	if (w->off >= TRACER_CWD_MAX)
		return 1;
	const unsigned char *name = KREAD(direct, dentry, d_name.name);
	long n = bpf_probe_read_kernel_str(&w->buf[w->off & (TRACER_CWD_MAX - 1)],
					   TRACER_CWD_NAME_MAX, name);
	if (n <= 0)
		return 1;
	w->off += n;
	w->depth++;
	w->dentry = parent;
	return 0;
}

static long walk_step_btf(__u64 index, void *ctx)
{
	return walk_step_x(ctx, true);
}

static long walk_step_tp(__u64 index, void *ctx)
{
	return walk_step_x(ctx, false);
}

/*
 * Write a path as NUL-separated components, leaf first; user space reverses
 * them. Crosses mount points up to the root of the task's mount namespace.
 * Returns bytes used.
 */
static __always_inline __u32 walk_path(struct dentry *dentry, struct vfsmount *vfsmnt, char *out,
				       __u32 out_size, __u32 *depth_out, __u32 *flags,
				       __u32 trunc_flag, bool direct)
{
	struct path_walk w = {};
	__u32 zero = 0;

	w.buf = bpf_map_lookup_elem(&path_scratch, &zero);
	if (!w.buf)
		return 0;
	w.dentry = dentry;
	w.mnt_root = KREAD(direct, vfsmnt, mnt_root);
	/* container_of(vfsmnt, struct mount, mnt), with the offset from BTF. */
	struct mount *mnt = AS_KERNEL(direct, struct mount,
				      (void *)vfsmnt - bpf_core_field_offset(struct mount, mnt));
	w.mnt = mnt;
	w.mnt_parent = KREAD(direct, mnt, mnt_parent);
	bpf_loop(TRACER_CWD_DEPTH * 2, direct ? walk_step_btf : walk_step_tp, &w, 0);
	if (!w.done)
		*flags |= trunc_flag;
	*depth_out = w.depth;
	__u32 len = w.off;
	if (len > out_size)
		len = out_size;
	barrier_var(len);
	if (len > TRACER_CWD_MAX + TRACER_CWD_NAME_MAX)
		return 0;
	bpf_probe_read_kernel(out, len, w.buf);
	return len;
}

static __always_inline void read_argv(struct task_struct *task, struct tracer_exec_event *e)
{
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	unsigned long start = BPF_CORE_READ(mm, arg_start);
	unsigned long end = BPF_CORE_READ(mm, arg_end);
	__u64 len = end - start;

	if (end <= start) {
		e->h.flags |= TRACER_F_ARGV_ERROR;
		return;
	}
	if (len > TRACER_ARGV_MAX) {
		len = TRACER_ARGV_MAX;
		e->h.flags |= TRACER_F_ARGV_TRUNCATED;
	}
	barrier_var(len);
	if (len > TRACER_ARGV_MAX)
		return;
	if (bpf_probe_read_user(e->argv, len, (void *)start) < 0) {
		e->h.flags |= TRACER_F_ARGV_ERROR;
		return;
	}
	e->argv_len = len;
}

static __always_inline int emit_fork(void *ctx, struct task_struct *parent,
				     struct task_struct *child, bool direct)
{
	struct tracer_fork_event *e;

	/* Threads share the process: only new thread groups are processes. */
	if (child && KREAD(direct, child, pid) != KREAD(direct, child, tgid))
		return 0;
	/* Kernel threads are not workloads (the start-up snapshot skips them too). */
	if (child && (KREAD(direct, child, flags) & PF_KTHREAD))
		return 0;

	e = event_reserve(sizeof(*e));
	if (!e) {
		count_drop(TRACER_EV_FORK);
		return 0;
	}
	fill_header_x(&e->h, TRACER_EV_FORK, parent, direct);
	struct task_struct *real_parent = child ? KREAD(direct, child, real_parent) : parent;
	e->parent_pid = ns_tgid_x(real_parent, direct);
	e->parent_start_ns = leader_start_x(real_parent, direct);
	if (child) {
		e->h.pid = ns_tgid_x(child, direct);
		e->h.tid = e->h.pid;
		e->h.start_ns = KREAD(direct, child, start_boottime);
	}
	/* The child's own cgroups: its parent may have moved since its exec. */
	struct task_struct *in_cgroups = child ? child : parent;
	e->cgroup_id = BPF_CORE_READ(in_cgroups, cgroups, dfl_cgrp, kn, id);
	e->cgroup1_id = memcg_v1_id(in_cgroups);
	const struct cred *cred = KREAD(direct, parent, cred);
	e->uid = KREAD(direct, cred, uid.val);
	e->gid = KREAD(direct, cred, gid.val);
	e->pad = 0;
	BPF_CORE_READ_STR_INTO(&e->comm, parent, comm);
	event_submit(ctx, e, sizeof(*e), TRACER_EV_FORK);
	return 0;
}

static __always_inline int emit_exec(void *ctx, struct task_struct *task, __u32 old_tid,
				     bool direct)
{
	struct tracer_exec_event *e;
	__u32 flags = 0;

	e = event_reserve(sizeof(*e));
	if (!e) {
		count_drop(TRACER_EV_EXEC);
		bpf_map_delete_elem(&prev_peak, &old_tid);
		return 0;
	}
	fill_header_x(&e->h, TRACER_EV_EXEC, task, direct);
	e->old_tid = old_tid;
	struct task_struct *real_parent = KREAD(direct, task, real_parent);
	e->ppid = ns_tgid_x(real_parent, direct);
	e->parent_start_ns = leader_start_x(real_parent, direct);
	const struct cred *cred = KREAD(direct, task, cred);
	e->uid = KREAD(direct, cred, uid.val);
	e->gid = KREAD(direct, cred, gid.val);
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->cgroup1_id = memcg_v1_id(task);
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);

	__u64 *prev = bpf_map_lookup_elem(&prev_peak, &old_tid);
	e->prev_peak_rss_kb = 0;
	if (prev) {
		e->prev_peak_rss_kb = *prev;
		flags |= TRACER_F_PREV_PEAK_KNOWN;
		bpf_map_delete_elem(&prev_peak, &old_tid);
	}
	struct counters_read rd = {};
	read_counters_of(task, &e->at_exec, &rd, false, 0, direct);
	flags |= rd.flags;

	e->argv_len = 0;
	read_argv(task, e);

	/* exe: the file really mapped (resolves #! interpreters), absolute. */
	struct mm_struct *mm = KREAD(direct, task, mm);
	struct file *exe = mm ? KREAD(direct, mm, exe_file) : NULL;
	__u32 depth = 0;
	e->filename_len = 0;
	if (exe) {
		e->filename_len = walk_path(
		    KREAD(direct, exe, f_path.dentry), KREAD(direct, exe, f_path.mnt), e->filename,
		    sizeof(e->filename), &depth, &flags, TRACER_F_FILENAME_TRUNCATED, direct);
	}

	struct fs_struct *fs = KREAD(direct, task, fs);
	e->cwd_len = 0;
	e->cwd_depth = 0;
	if (fs) {
		e->cwd_len = walk_path(KREAD(direct, fs, pwd.dentry), KREAD(direct, fs, pwd.mnt),
				       e->cwd, sizeof(e->cwd), &e->cwd_depth, &flags,
				       TRACER_F_CWD_TRUNCATED, direct);
	} else {
		flags |= TRACER_F_CWD_ERROR;
	}
	e->h.flags |= flags;
	event_submit(ctx, e, sizeof(*e), TRACER_EV_EXEC);
	return 0;
}

/* A thread (not the last) exits: keep what it contributed for the process total. */
static __always_inline void remember_dead_thread(struct task_struct *task,
						 struct signal_struct *sig, bool direct)
{
	struct task_struct *leader = KREAD(direct, task, group_leader);
	__u64 start_ns = KREAD(direct, leader, start_boottime);
	struct dead_acc zero = {.start_ns = start_ns}, *d;
	__u32 tgid = KREAD(direct, task, tgid);

	d = bpf_map_lookup_elem(&dead_threads, &tgid);
	if (!d || d->start_ns != start_ns) {
		/* None yet, or one left by an earlier process with this pid. */
		bpf_map_update_elem(&dead_threads, &tgid, &zero, d ? BPF_ANY : BPF_NOEXIST);
		d = bpf_map_lookup_elem(&dead_threads, &tgid);
		if (!d)
			return;
	}
	/*
	 * The group leader stays a zombie and its task counters are read at the
	 * final exit, unless another thread is exec'ing and about to replace it.
	 */
	if (task == leader) {
		if (!bpf_core_field_exists(sig->group_exec_task) ||
		    !KREAD(direct, sig, group_exec_task))
			return;
	}
	__sync_fetch_and_add(&d->rchar, KREAD(direct, task, ioac.rchar));
	__sync_fetch_and_add(&d->wchar, KREAD(direct, task, ioac.wchar));
	__sync_fetch_and_add(&d->syscr, KREAD(direct, task, ioac.syscr));
	__sync_fetch_and_add(&d->syscw, KREAD(direct, task, ioac.syscw));
	__sync_fetch_and_add(&d->read_bytes, KREAD(direct, task, ioac.read_bytes));
	__sync_fetch_and_add(&d->write_bytes, KREAD(direct, task, ioac.write_bytes));
	__sync_fetch_and_add(&d->cancelled_write_bytes,
			     KREAD(direct, task, ioac.cancelled_write_bytes));
	__sync_fetch_and_add(&d->runq_ns, KREAD(direct, task, sched_info.run_delay));
}

/* The exiting thread's clocks as counted: its last switch-out sends what it uses after. */
static __always_inline void note_exit(struct task_struct *task, __u32 tgid, __u64 start_ns,
				      const struct counters_read *rd, bool direct)
{
	__u32 tid = KREAD(direct, task, pid);
	struct exit_note n = {
	    .start_ns = start_ns,
	    .thread_start_ns = KREAD(direct, task, start_boottime),
	    .runtime = rd->self.runtime,
	    .utime = rd->self.utime,
	    .stime = rd->self.stime,
	    .tgid = tgid,
	    .walk_seq = rd->walk_seq,
	};

	bpf_map_update_elem(&exit_notes, &tid, &n, BPF_ANY);
}

/*
 * Who sent a process a signal that ends it by default. signal:signal_generate
 * runs in the sender's context; only signals a process sent with a syscall
 * (kill, tkill, sigqueue) are kept: the kernel's own (a fault, SIGPIPE, the
 * OOM killer's SIGKILL) have no sender worth naming. Read at the target's exit.
 */
struct kill_sender {
	__u64 target_start_ns; /* the target's start: its pid may be reused */
	__u32 pid;	       /* the sender's tgid, in the collector's namespace */
	__u32 sig;
	char comm[TRACER_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* the target's tgid */
	__type(value, struct kill_sender);
} kill_senders SEC(".maps");

/* Signals whose default action ends the process (not CHLD, CONT, STOP, TSTP, TTIN, TTOU, URG,
 * WINCH). */
static __always_inline bool ends_by_default(int sig)
{
	return sig > 0 && sig < 65 && (sig < 17 || sig > 23) && sig != 28;
}

#define SIGINFO_FROM_KERNEL 2 /* SEND_SIG_NOINFO (0) and SEND_SIG_PRIV (1) are not pointers */
#define SI_USER_CODE 0	      /* kill(2) */
#define SI_QUEUE_CODE (-1)    /* sigqueue(3) */
#define SI_TKILL_CODE (-6)    /* tkill(2), tgkill(2) */

SEC("tp_btf/signal_generate")
int BPF_PROG(signal_btf, int sig, struct kernel_siginfo *info, struct task_struct *task, int group,
	     int result)
{
	if (result != 0 || !ends_by_default(sig) || (unsigned long)info < SIGINFO_FROM_KERNEL)
		return 0;
	int code = BPF_CORE_READ(info, si_code);
	if (code != SI_USER_CODE && code != SI_QUEUE_CODE && code != SI_TKILL_CODE)
		return 0;
	struct task_struct *sender = bpf_get_current_task_btf();
	__u32 target = task->tgid;
	if (sender->tgid == target)
		return 0; /* raise(), abort(): the process itself */
	struct kill_sender k = {
	    .target_start_ns = leader_start_x(task, true),
	    .pid = ns_tgid_x(sender, true),
	    .sig = (__u32)sig,
	};
	BPF_CORE_READ_STR_INTO(&k.comm, sender, group_leader, comm);
	bpf_map_update_elem(&kill_senders, &target, &k, BPF_ANY);
	return 0;
}

/* The sender of the signal that ended the process, if it is the one recorded. */
static __always_inline void fill_killer(struct tracer_exit_event *e, __u32 tgid)
{
	int term = e->exit_code & 0x7f;

	if (!term || term == 0x7f)
		return; /* exited, or stopped */
	struct kill_sender *k = bpf_map_lookup_elem(&kill_senders, &tgid);
	if (!k)
		return;
	if (k->sig == (__u32)term && k->target_start_ns == e->h.start_ns) {
		e->killer_pid = k->pid;
		__builtin_memcpy(e->killer_comm, k->comm, sizeof(e->killer_comm));
	}
	bpf_map_delete_elem(&kill_senders, &tgid);
}

/*
 * Whether the process ends with this thread. Since 6.16 the tracepoint says
 * (group_dead, from the kernel's own decrement of signal->live); before, the
 * count is read here, after the decrement: two threads exiting at once can
 * both read 0, and each sends an exit, the later one counted late.
 */
static __always_inline bool group_dead_of(struct signal_struct *sig, int said, bool direct)
{
	return said >= 0 ? said : KREAD(direct, sig, live.counter) == 0;
}

static __always_inline int emit_exit(void *ctx, struct task_struct *task, int group_dead,
				     bool direct)
{
	struct tracer_exit_event *e;
	struct signal_struct *sig = KREAD(direct, task, signal);
	__u32 tgid = KREAD(direct, task, tgid);
	__u32 flags = 0;

	/*
	 * Kernel threads are not recorded, but one waiting on I/O has an
	 * accumulator: it goes, or a process reusing the pid would inherit it.
	 */
	if (KREAD(direct, task, flags) & PF_KTHREAD) {
		bpf_map_delete_elem(&proc_accs, &tgid);
		return 0;
	}
	/* A process ends when its last thread does. */
	if (!group_dead_of(sig, group_dead, direct)) {
		remember_dead_thread(task, sig, direct);
		return 0;
	}

	e = event_reserve(sizeof(*e));
	if (!e) {
		count_drop(TRACER_EV_EXIT);
		bpf_map_delete_elem(&dead_threads, &tgid);
		bpf_map_delete_elem(&proc_accs, &tgid);
		files_flush(ctx, task, tgid);
		return 0;
	}
	fill_header_x(&e->h, TRACER_EV_EXIT, task, direct);
	struct task_struct *leader = KREAD(direct, task, group_leader);
	if (KREAD(direct, sig, flags) & SIGNAL_GROUP_EXIT)
		e->exit_code = KREAD(direct, sig, group_exit_code);
	else
		e->exit_code = KREAD(direct, leader, exit_code);
	struct task_struct *real_parent = KREAD(direct, task, real_parent);
	e->ppid = ns_tgid_x(real_parent, direct);
	struct counters_read rd = {};
	__u32 had = read_counters_of(task, &e->totals, &rd, true, e->h.start_ns, direct);
	flags |= rd.flags;
	e->walk_seq = rd.walk_seq;
	BPF_CORE_READ_STR_INTO(&e->comm, leader, comm);
	e->killer_pid = 0;
	e->killer_comm[0] = '\0';
	fill_killer(e, tgid);
	e->h.flags |= flags;
	__u64 start_ns = e->h.start_ns;
	__u32 reported_pid = e->h.pid; /* the collector's namespace's number, 0: not reported */
	event_submit(ctx, e, sizeof(*e), TRACER_EV_EXIT);
	if (exit_tails_on && reported_pid)
		note_exit(task, reported_pid, start_ns, &rd, direct);
	/* A delete of a missing key still takes the bucket lock: skipped. */
	if (had & HAD_DEAD_THREADS)
		bpf_map_delete_elem(&dead_threads, &tgid);
	if (had & HAD_ACC)
		bpf_map_delete_elem(&proc_accs, &tgid);
	files_flush(ctx, task, tgid);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(fork_btf, struct task_struct *parent, struct task_struct *child)
{
	return emit_fork(ctx, parent, child, true);
}

/* How far back from the tail of a thread group's list a new thread is looked for. */
#define NEW_THREAD_LOOKBACK 8

/*
 * Whether child_pid is a thread the current task just added to its own
 * process. The classic fork tracepoint fires for threads too and gives no
 * child task, but clone appends a new thread to its group's list before the
 * tracepoint; threads cloned at the same moment by the group may follow it.
 */
static __always_inline bool is_new_thread(struct task_struct *parent, __u32 child_pid)
{
	struct signal_struct *sig = BPF_CORE_READ(parent, signal);
	void *head = (void *)sig + bpf_core_field_offset(struct signal_struct, thread_head);
	struct list_head *node = BPF_CORE_READ(sig, thread_head.prev);

	for (int i = 0; i < NEW_THREAD_LOOKBACK; i++) {
		if (!node || (void *)node == head)
			return false;
		struct task_struct *t =
		    (void *)node - bpf_core_field_offset(struct task_struct, thread_node);
		if ((__u32)BPF_CORE_READ(t, pid) == child_pid)
			return true;
		node = BPF_CORE_READ(node, prev);
	}
	return false;
}

SEC("tracepoint/sched/sched_process_fork")
int fork_tp(struct trace_event_raw_sched_process_fork *ctx)
{
	/* No child task here: its start time arrives with its exec or exit. */
	struct tracer_fork_event *e;
	struct task_struct *parent = (void *)bpf_get_current_task();

	/* Every kernel thread is a child of kthreadd (pid 2), and kthreadd forks nothing else. */
	if ((BPF_CORE_READ(parent, flags) & PF_KTHREAD) && BPF_CORE_READ(parent, tgid) == 2)
		return 0;
	/* Threads share the process: only new thread groups are processes. */
	if (is_new_thread(parent, (__u32)ctx->child_pid))
		return 0;
	e = event_reserve(sizeof(*e));
	if (!e) {
		count_drop(TRACER_EV_FORK);
		return 0;
	}
	fill_header(&e->h, TRACER_EV_FORK, parent);
	e->parent_pid = e->h.pid;
	e->parent_start_ns = e->h.start_ns;
	/* No child task to find its number in a container's namespace: its exec reports it. */
	e->h.pid = pidns_inum ? 0 : ctx->child_pid;
	e->h.tid = e->h.pid;
	e->h.start_ns = 0;
	e->uid = BPF_CORE_READ(parent, cred, uid.val);
	e->gid = BPF_CORE_READ(parent, cred, gid.val);
	e->pad = 0;
	/* A child starts in its parent's cgroups (clone3's CLONE_INTO_CGROUP aside). */
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->cgroup1_id = memcg_v1_id(parent);
	BPF_CORE_READ_STR_INTO(&e->comm, parent, comm);
	event_submit(ctx, e, sizeof(*e), TRACER_EV_FORK);
	return 0;
}

SEC("tp_btf/sched_prepare_exec")
int BPF_PROG(prepare_exec_btf, struct task_struct *task, struct linux_binprm *bprm)
{
	struct mm_struct *mm = task->mm;
	__u32 tid = task->pid;
	__u64 peak;

	if (!mm)
		return 0;
	peak = mm_peak_kb_x(mm, true);
	bpf_map_update_elem(&prev_peak, &tid, &peak, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec_btf, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	return emit_exec(ctx, task, old_pid, true);
}

SEC("tracepoint/sched/sched_process_exec")
int exec_tp(struct trace_event_raw_sched_process_exec *ctx)
{
	return emit_exec(ctx, (void *)bpf_get_current_task(), ctx->old_pid, false);
}

/* The tracepoint's record on kernels that have group_dead (6.16 and later). */
struct trace_event_raw_sched_process_exit___group_dead {
	bool group_dead;
} __attribute__((preserve_access_index));

static __always_inline bool exit_says_group_dead(void)
{
	return bpf_core_field_exists(struct trace_event_raw_sched_process_exit___group_dead,
				     group_dead);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(exit_btf, struct task_struct *task)
{
	/* The argument after task, where the kernel has it. */
	return emit_exit(ctx, task, exit_says_group_dead() ? (int)(__u8)ctx[1] : -1, true);
}

SEC("tracepoint/sched/sched_process_exit")
int exit_tp(void *ctx)
{
	struct trace_event_raw_sched_process_exit___group_dead *rec = ctx;

	return emit_exit(ctx, (void *)bpf_get_current_task(),
			 exit_says_group_dead() ? (int)BPF_CORE_READ(rec, group_dead) : -1, false);
}
