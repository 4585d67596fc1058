/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every tracer BPF program shares: the output buffers, the loss
 * counters, the per-thread and per-process accumulators, and small helpers.
 * All programs are built as one object (tracer.bpf.c) so they share maps.
 */
#ifndef TRACER_COMMON_BPF_H
#define TRACER_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "events.h"

/* Set by the collector before load. */
const volatile __u32 page_kb = 4;
const volatile __u64 wakeup_bytes = 1 << 20;
/* Kernels without BPF ring buffers (< 5.8): per-CPU perf buffers instead. */
const volatile bool use_perfbuf = false;
/* The scheduler group is loaded: exits leave a note for their exit tail (sched.bpf.c). */
const volatile bool exit_tails_on = false;
/*
 * A collector inside a container with its own PID namespace (pidns_inum, set
 * before load; 0 on the host) reports pids as that namespace numbers them,
 * as its /proc and its `tracer run` see them, and nothing of tasks outside it.
 */
const volatile __u32 pidns_inum = 0;

/* include/linux/sched/signal.h; stable since 2.6 */
#define SIGNAL_GROUP_EXIT 0x00000004
/* include/linux/sched.h */
#define PF_KTHREAD 0x00200000
/* enum mm_counter */
#define MM_FILEPAGES 0
#define MM_ANONPAGES 1
#define MM_SHMEMPAGES 3

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} perf_events SEC(".maps");

/* Perf buffers copy from memory we own: one slot per CPU, as big as any event. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tracer_exec_event);
} perf_scratch SEC(".maps");

/* include/linux/sched.h: set by a task's last schedule() */
#define TASK_DEAD 0x00000080

/*
 * The last thread of a process that exited, by tid: its own CPU clocks at the
 * exit tracepoint, so its last switch-out can send what it used since. LRU:
 * a note whose switch-out was never seen is dropped, never piles up.
 */
struct exit_note {
	__u64 start_ns;	       /* the leader's, as in the exit event */
	__u64 thread_start_ns; /* the noted thread's own: a note whose switch-out was missed
				  must not be taken by a later thread with its number */
	__u64 runtime, utime, stime;
	__u32 tgid;
	__u32 walk_seq; /* the group walk that left it: a tail counts only with its exit's */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct exit_note);
} exit_notes SEC(".maps");

/* Failed reservations per event type; .bss is mmap'ed, so the collector reads
 * it without a bpf() syscall after dropping privileges. */
__u64 drop_counts[TRACER_DROP_SLOTS]; /* by event type */
/* The collector's, for the next collector of a pin set (events.h). */
struct tracer_handover handover;

/*
 * Counters the hot hooks keep per process: a per-CPU LRU hash keyed by tgid.
 * Per-CPU values need no atomics; a hash lookup is far cheaper than
 * task-local storage on the syscall path (measured: docs/performance.md).
 * Summed over CPUs at exit and by the sampling iterator. LRU bounds entries
 * left by processes whose exit we missed.
 */
struct proc_acc {
	__u64 iowait_ns;
	__u64 reclaim_ns;
	__u64 net_tx_bytes;
	__u64 net_rx_bytes;
	__u64 sys[TRACER_SYS_CLASSES];
	__u64 sys_failed;
	__u64 net_wait_ns[TRACER_NET_WAIT_KINDS]; /* blocked on the network, by kind */
	__u64 net_wait_max_ns;			  /* the longest single network wait ... */
	__u32 net_wait_max_peer;		  /* ... its peer: family << 16 | port */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 65536); /* sized by the collector for the CPU count */
	__type(key, __u32);
	__type(value, struct proc_acc);
} proc_accs SEC(".maps");

/*
 * Gives a kernel pointer its BTF type (read-only, faults caught); the
 * verifier turns the call into a plain move. Linux 6.2+: only programs the
 * collector loads where vmlinux BTF has it may call it (probes.c).
 */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __weak __ksym;

/* Possible CPUs, for summing per-CPU values (set by the collector). */
const volatile __u32 nr_cpus = 1;
#define TRACER_MAX_CPUS 4096

/* What a sleeping thread waits for (sched.bpf.c, netwait.bpf.c). */
enum wait_kind { TRACER_WAIT_IO = 0, TRACER_WAIT_NET = 1 /* + tracer_net_wait_kind */ };

struct wait_mark {
	__u64 since;
	__u8 kind; /* wait_kind */
	__u8 pad;
	__u16 family; /* network waits: the peer's address family and port */
	__u32 port;
};

/*
 * Since when a thread sleeps in io_schedule() or on the network / is in direct
 * reclaim. Network sleeps can be long (an idle server's threads): room for
 * 65536 sleeping threads at once; beyond that the oldest marks are evicted and
 * their waits not counted.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct wait_mark);
} wait_since SEC(".maps");

/* Network waits that could not be attributed (TRACER_NETW_*); read by the collector. */
__u64 net_wait_stats[TRACER_NETW_STATS];

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} reclaim_since SEC(".maps");

/*
 * What threads that already exited contributed, per process. signal_struct
 * cannot be used for I/O: the kernel also adds every reaped child's I/O to
 * it, so a shell would "read" everything its children read.
 */
struct dead_acc {
	__u64 rchar, wchar, syscr, syscw, read_bytes, write_bytes, cancelled_write_bytes;
	__u64 runq_ns;
	/* The process's start: a thread that reaches its exit tracepoint after the
	 * last one sent the process's exit leaves an entry behind, which a later
	 * process given the same pid must not read as its own. */
	__u64 start_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct dead_acc);
} dead_threads SEC(".maps");

/* The sampling iterator's change filter, per process leader. */
struct sample_mark {
	__u64 runtime;
	__u64 rss;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sample_mark);
} sample_marks SEC(".maps");

static __always_inline void count_drop(__u32 type)
{
	if (type < TRACER_DROP_SLOTS)
		__sync_fetch_and_add(&drop_counts[type], 1);
}

/* Wake the collector only when the buffer fills; it drains on a timer. */
static __always_inline __u64 submit_flags(void)
{
	__u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);

	return avail >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/* Room for one event: in the ring buffer, or in this CPU's scratch slot. */
static __always_inline void *event_reserve(__u64 size)
{
	__u32 zero = 0;

	if (use_perfbuf)
		return bpf_map_lookup_elem(&perf_scratch, &zero);
	return bpf_ringbuf_reserve(&events, size, 0);
}

static __always_inline void event_submit(void *ctx, void *e, __u64 size, __u32 type)
{
	/* A task outside the collector's PID namespace: not ours to report. A
	 * cgroup's creator may be, the cgroup is still the container's. */
	if (pidns_inum && !((struct tracer_event_header *)e)->pid && type != TRACER_EV_CGROUP) {
		if (!use_perfbuf)
			bpf_ringbuf_discard(e, 0);
		return;
	}
	if (use_perfbuf) {
		if (bpf_perf_event_output(ctx, &perf_events, BPF_F_CURRENT_CPU, e, size) < 0)
			count_drop(type);
		return;
	}
	bpf_ringbuf_submit(e, submit_flags());
}

/*
 * A field of a kernel struct. In tp_btf programs the arguments are BTF-typed
 * pointers the verifier lets us load through directly (a plain load, faults
 * caught); classic tracepoint programs only have untyped pointers and must
 * copy with a helper call, which costs ~30 ns per field. `direct` is a
 * compile-time constant in every caller, so each program gets one kind.
 */
#define KREAD(direct, src, field) ((direct) ? (src)->field : BPF_CORE_READ(src, field))

static __always_inline __u64 leader_start_x(struct task_struct *task, bool direct)
{
	struct task_struct *leader = KREAD(direct, task, group_leader);

	return KREAD(direct, leader, start_boottime);
}

static __always_inline __u64 leader_start(struct task_struct *task)
{
	return leader_start_x(task, false);
}

/* How deep a namespace is looked for: containers nest a level or two. */
#define PIDNS_MAX_LEVEL 8

/* pid's number in the collector's namespace; 0 when it has none there. */
static __always_inline __u32 pid_in_ns(struct pid *pid)
{
	unsigned int level = BPF_CORE_READ(pid, level);

	for (int l = 0; l < PIDNS_MAX_LEVEL; l++) {
		struct upid up;

		if (l > level)
			break;
		if (bpf_probe_read_kernel(&up, sizeof(up), &pid->numbers[l]) != 0)
			return 0;
		if (BPF_CORE_READ(up.ns, ns.inum) == pidns_inum)
			return up.nr;
	}
	return 0;
}

/* The task's process id as the collector's namespace sees it. */
static __always_inline __u32 ns_tgid_x(struct task_struct *task, bool direct)
{
	if (!pidns_inum)
		return KREAD(direct, task, tgid);
	return pid_in_ns(BPF_CORE_READ(task, group_leader, thread_pid));
}

/* The task's thread id as the collector's namespace sees it. */
static __always_inline __u32 ns_tid_x(struct task_struct *task, bool direct)
{
	if (!pidns_inum)
		return KREAD(direct, task, pid);
	return pid_in_ns(BPF_CORE_READ(task, thread_pid));
}

static __always_inline void fill_header_x(struct tracer_event_header *h, __u32 type,
					  struct task_struct *task, bool direct)
{
	h->type = type;
	h->flags = 0;
	h->ts_ns = bpf_ktime_get_boot_ns();
	h->pid = ns_tgid_x(task, direct);
	h->tid = ns_tid_x(task, direct);
	h->start_ns = leader_start_x(task, direct);
}

static __always_inline void fill_header(struct tracer_event_header *h, __u32 type,
					struct task_struct *task)
{
	fill_header_x(h, type, task, false);
}

static __always_inline __u64 counter_pages(struct mm_struct *mm, int member, bool direct)
{
	__s64 v = KREAD(direct, mm, rss_stat[member].count);

	return v > 0 ? (__u64)v : 0;
}

static __always_inline __u64 mm_rss_kb_x(struct mm_struct *mm, bool direct)
{
	return (counter_pages(mm, MM_FILEPAGES, direct) + counter_pages(mm, MM_ANONPAGES, direct) +
		counter_pages(mm, MM_SHMEMPAGES, direct)) *
	       page_kb;
}

static __always_inline __u64 mm_rss_kb(struct mm_struct *mm)
{
	return mm_rss_kb_x(mm, false);
}

/* max(hiwater, current rss): hiwater_rss is only raised when RSS shrinks. */
static __always_inline __u64 mm_peak_kb_x(struct mm_struct *mm, bool direct)
{
	__u64 hiwater = KREAD(direct, mm, hiwater_rss) * page_kb;
	__u64 rss = mm_rss_kb_x(mm, direct);

	return hiwater > rss ? hiwater : rss;
}

static __always_inline struct cgroup_subsys_state *memory_css(struct task_struct *task)
{
	int id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);

	if (id < 0 || id >= CGROUP_SUBSYS_COUNT)
		return NULL;
	return BPF_CORE_READ(task, cgroups, subsys[id]);
}

/* The v1 memory cgroup's id; on a v2-only host, that of the default root. */
static __always_inline __u64 memcg_v1_id(struct task_struct *task)
{
	struct cgroup_subsys_state *css = memory_css(task);

	return css ? BPF_CORE_READ(css, cgroup, kn, id) : 0;
}

/*
 * The process's last thread has ended (its exit is sent, or being sent): what
 * its threads still wait for in their exit paths (closing a block device or
 * an NFS file flushes it) is not reported, and an accumulator created now
 * would outlive the process, for a later one given its pid to read as its own
 * (measured: 15-40 ms of I/O wait left behind by a process that wrote to a
 * block device and exited without closing it).
 */
static __always_inline bool group_ended(struct task_struct *t)
{
	return BPF_CORE_READ(t, signal, live.counter) == 0;
}

/* This CPU's slot of a process's accumulator, created on first use. */
static __always_inline struct proc_acc *proc_acc_get(__u32 tgid)
{
	struct proc_acc *a = bpf_map_lookup_elem(&proc_accs, &tgid);

	if (!a) {
		struct proc_acc zero = {};
		bpf_map_update_elem(&proc_accs, &tgid, &zero, BPF_NOEXIST);
		a = bpf_map_lookup_elem(&proc_accs, &tgid);
	}
	return a;
}

static __always_inline struct proc_acc *current_acc(void)
{
	return proc_acc_get(bpf_get_current_pid_tgid() >> 32);
}

struct acc_sum {
	__u32 tgid;
	struct proc_acc total;
};

static long add_cpu_slot(__u64 cpu, void *ctx)
{
	struct acc_sum *s = ctx;
	struct proc_acc *a = bpf_map_lookup_percpu_elem(&proc_accs, &s->tgid, (__u32)cpu);

	if (a) {
		s->total.iowait_ns += a->iowait_ns;
		s->total.reclaim_ns += a->reclaim_ns;
		s->total.net_tx_bytes += a->net_tx_bytes;
		s->total.net_rx_bytes += a->net_rx_bytes;
		for (int i = 0; i < TRACER_SYS_CLASSES; i++)
			s->total.sys[i] += a->sys[i];
		s->total.sys_failed += a->sys_failed;
		for (int i = 0; i < TRACER_NET_WAIT_KINDS; i++)
			s->total.net_wait_ns[i] += a->net_wait_ns[i];
		if (a->net_wait_max_ns > s->total.net_wait_max_ns) {
			s->total.net_wait_max_ns = a->net_wait_max_ns;
			s->total.net_wait_max_peer = a->net_wait_max_peer;
		}
	}
	return 0;
}

/*
 * A process's accumulator summed over all CPUs; false if it has none (a
 * per-CPU entry exists on every CPU or on none). Most short processes never
 * wait on I/O or reclaim: one lookup instead of one per CPU.
 */
static __always_inline bool proc_acc_sum(__u32 tgid, struct proc_acc *out)
{
	struct acc_sum s = {.tgid = tgid};
	bool found = bpf_map_lookup_elem(&proc_accs, &tgid) != NULL;

	if (found)
		bpf_loop(nr_cpus < TRACER_MAX_CPUS ? nr_cpus : TRACER_MAX_CPUS, add_cpu_slot, &s,
			 0);
	*out = s.total;
	return found;
}

#endif
