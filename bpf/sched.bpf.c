// SPDX-License-Identifier: GPL-2.0
/*
 * I/O wait: time a thread spends blocked in io_schedule(), from switching out
 * to being woken; network wait (netwait.bpf.c) likewise, for sleeps on a socket. Run-queue delay
 * needs no hook at all: the kernel keeps it per thread in sched_info.run_delay, read at exit and in
 * samples.
 */
#include "common.bpf.h"

/*
 * A task's last switch-out: it is dead, its runtime final. If its process's
 * totals were read while it was still exiting (process.bpf.c left a note at the
 * final exit: for the last thread, and for others still exiting beside it),
 * send what its exit path used since: freeing a large address space alone can
 * be hundreds of milliseconds, which wait4 counts.
 */
static __always_inline void emit_exit_tail(void *ctx, struct task_struct *prev)
{
	__u32 tid = prev->pid;
	struct exit_note *n = bpf_map_lookup_elem(&exit_notes, &tid);
	struct tracer_exit_tail_event *e;

	if (!n)
		return;
	if (n->thread_start_ns != prev->start_boottime) {
		bpf_map_delete_elem(&exit_notes, &tid);
		return;
	}
	e = event_reserve(sizeof(*e));
	if (!e) {
		count_drop(TRACER_EV_EXIT_TAIL);
		bpf_map_delete_elem(&exit_notes, &tid);
		return;
	}
	e->h.type = TRACER_EV_EXIT_TAIL;
	e->h.flags = 0;
	e->h.ts_ns = bpf_ktime_get_boot_ns();
	e->h.pid = n->tgid; /* as the exit event reported it */
	e->h.tid = ns_tid_x(prev, true);
	e->h.start_ns = n->start_ns;
	e->runtime_ns = prev->se.sum_exec_runtime - n->runtime;
	e->utime_ns = prev->utime - n->utime;
	e->stime_ns = prev->stime - n->stime;
	e->walk_seq = n->walk_seq;
	e->pad = 0;
	event_submit(ctx, e, sizeof(*e), TRACER_EV_EXIT_TAIL);
	bpf_map_delete_elem(&exit_notes, &tid);
}

/* Sleeping: blocked, not stopped or traced (prev_state bits, include/linux/sched.h). */
#define SLEEP_STATES 0x0003 /* TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE */
#define STOP_STATES 0x000c  /* __TASK_STOPPED | __TASK_TRACED */

SEC("tp_btf/sched_switch")
int BPF_PROG(iowait_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct wait_mark m = {};
	__u32 tid;

	if (prev_state & TASK_DEAD) {
		if (exit_tails_on)
			emit_exit_tail(ctx, prev);
		return 0;
	}
	if (preempt || !(prev_state & SLEEP_STATES) || (prev_state & STOP_STATES))
		return 0;
	/* A task going to sleep inside io_schedule() waits for I/O; else maybe the network. */
	if (BPF_CORE_READ_BITFIELD_PROBED(prev, in_iowait))
		m.kind = TRACER_WAIT_IO;
	else if (!net_sleep_mark(prev, &m))
		return 0;
	tid = prev->pid;
	m.since = bpf_ktime_get_ns();
	/* A thread's mark is reused in place: an update takes the map's lock, a lookup none. */
	struct wait_mark *old = bpf_map_lookup_elem(&wait_since, &tid);
	if (old)
		*old = m;
	else
		bpf_map_update_elem(&wait_since, &tid, &m, BPF_ANY);
	return 0;
}

static __always_inline void add_net_wait(struct proc_acc *a, const struct wait_mark *m,
					 __u64 waited)
{
	__u32 kind = m->kind - TRACER_WAIT_NET;

	if (kind >= TRACER_NET_WAIT_KINDS)
		return;
	a->net_wait_ns[kind] += waited;
	if (waited > a->net_wait_max_ns) {
		a->net_wait_max_ns = waited;
		a->net_wait_max_peer = (__u32)m->family << 16 | (m->port & 0xffff);
	}
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(iowait_wakeup, struct task_struct *p)
{
	__u32 tid = p->pid;
	struct wait_mark *m = bpf_map_lookup_elem(&wait_since, &tid), mark;
	struct proc_acc *a;
	__u64 waited;

	if (!m || !m->since)
		return 0;
	mark = *m;
	waited = bpf_ktime_get_ns() - mark.since;
	m->since =
	    0; /* woken: kept for the thread's next sleep (LRU: a dead thread's goes first) */
	if (group_ended(p))
		return 0;
	a = proc_acc_get(p->tgid);
	if (!a) {
		if (mark.kind != TRACER_WAIT_IO)
			__sync_fetch_and_add(&net_wait_stats[TRACER_NETW_NO_ACC], 1);
		return 0;
	}
	if (mark.kind == TRACER_WAIT_IO)
		a->iowait_ns += waited;
	else
		add_net_wait(a, &mark, waited);
	return 0;
}
