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

/*
 * How many bytes of argv to read (arg_start..arg_end, at most TRACER_ARGV_MAX,
 * truncation flagged), and from where; 0 (flagged) when the span is empty or
 * inverted. Also snapshot.bpf.c's, which reads it with another helper.
 */
static __always_inline __u64 argv_span(struct mm_struct *mm, struct tracer_exec_event *e,
				       unsigned long *start)
{
	unsigned long end = BPF_CORE_READ(mm, arg_end);
	__u64 len;

	*start = BPF_CORE_READ(mm, arg_start);
	if (end <= *start) {
		e->h.flags |= TRACER_F_ARGV_ERROR;
		return 0;
	}
	len = end - *start;
	if (len > TRACER_ARGV_MAX) {
		len = TRACER_ARGV_MAX;
		e->h.flags |= TRACER_F_ARGV_TRUNCATED;
	}
	return len;
}

static __always_inline void read_argv(struct task_struct *task, struct tracer_exec_event *e)
{
	unsigned long start;
	__u64 len = argv_span(BPF_CORE_READ(task, mm), e, &start);

	barrier_var(len);
	if (len == 0 || len > TRACER_ARGV_MAX)
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
