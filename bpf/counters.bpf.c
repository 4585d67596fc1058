// SPDX-License-Identifier: GPL-2.0
/*
 * A process's counters read from its task and signal structs: CPU of its
 * threads (live and exited), I/O, delays, faults, and what the other programs
 * accumulated for it (proc_acc). process.bpf.c reads them at exec and exit.
 * `direct` as there: plain loads in tp_btf programs, helper copies otherwise.
 */
#include "common.bpf.h"

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
