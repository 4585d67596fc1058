// SPDX-License-Identifier: GPL-2.0
/*
 * The processes already running when the collector starts, one exec record
 * each, flagged TRACER_F_FROM_SNAPSHOT. The collector creates this iterator
 * as root, after attaching the exec and exit programs (a process is seen by
 * one or the other, never by neither), and reads it only after dropping its
 * privileges: the records are converted and redacted unprivileged, like the
 * ring buffer's. Sleepable (iter.s) for bpf_copy_from_user_task: argv is read
 * from the process's memory strictly between arg_start and arg_end, never
 * from the environment area after it (where /proc/PID/cmdline goes on when a
 * process overwrote its argv's last NUL).
 */
#include "common.bpf.h"

/* A sleepable program can be preempted on its CPU: its scratch is its own. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tracer_exec_event);
} snapshot_record SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[TRACER_CWD_MAX + TRACER_CWD_NAME_MAX]);
} snapshot_path SEC(".maps");

static __always_inline void snapshot_argv(struct task_struct *task, struct mm_struct *mm,
					  struct tracer_exec_event *e)
{
	unsigned long start;
	__u64 len = argv_span(mm, e, &start);

	e->argv_len = 0;
	barrier_var(len);
	if (len == 0 || len > TRACER_ARGV_MAX)
		return;
	if (bpf_copy_from_user_task(e->argv, len, (void *)start, task, 0) != 0) {
		e->h.flags |= TRACER_F_ARGV_ERROR;
		return;
	}
	e->argv_len = len;
}

static __always_inline void snapshot_paths(struct task_struct *task, struct mm_struct *mm,
					   struct tracer_exec_event *e)
{
	__u32 zero = 0, depth = 0, flags = 0;
	char *scratch = bpf_map_lookup_elem(&snapshot_path, &zero);
	struct file *exe = BPF_CORE_READ(mm, exe_file);
	struct fs_struct *fs = BPF_CORE_READ(task, fs);

	e->filename_len = e->cwd_len = e->cwd_depth = 0;
	if (!scratch)
		return;
	if (exe)
		e->filename_len =
		    walk_path_in(scratch, BPF_CORE_READ(exe, f_path.dentry),
				 BPF_CORE_READ(exe, f_path.mnt), e->filename, sizeof(e->filename),
				 &depth, &flags, TRACER_F_FILENAME_TRUNCATED, false);
	if (fs)
		e->cwd_len = walk_path_in(scratch, BPF_CORE_READ(fs, pwd.dentry),
					  BPF_CORE_READ(fs, pwd.mnt), e->cwd, sizeof(e->cwd),
					  &e->cwd_depth, &flags, TRACER_F_CWD_TRUNCATED, false);
	else
		flags |= TRACER_F_CWD_ERROR;
	e->h.flags |= flags;
}

SEC("iter.s/task")
int snapshot_tasks(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct tracer_exec_event *e;
	__u32 zero = 0;

	/* Processes (not threads), not kernel threads, not the already dead. */
	if (!task || task->pid != task->tgid || (task->flags & PF_KTHREAD) || task->exit_state)
		return 0;
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	e = bpf_map_lookup_elem(&snapshot_record, &zero);
	if (!e || !mm)
		return 0;
	fill_header_x(&e->h, TRACER_EV_EXEC, task, false);
	if (!e->h.pid) /* outside the namespace this collector records */
		return 0;
	e->h.flags = TRACER_F_FROM_SNAPSHOT;
	e->old_tid = e->h.pid;
	struct task_struct *parent = BPF_CORE_READ(task, real_parent);
	e->ppid = ns_tgid_x(parent, false);
	e->parent_start_ns = leader_start_x(parent, false);
	e->uid = BPF_CORE_READ(task, cred, uid.val);
	e->gid = BPF_CORE_READ(task, cred, gid.val);
	e->cgroup_id = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
	e->cgroup1_id = memcg_v1_id(task);
	e->prev_peak_rss_kb = 0;
	__builtin_memset(&e->at_exec, 0, sizeof(e->at_exec));
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	snapshot_argv(task, mm, e);
	snapshot_paths(task, mm, e);
	bpf_seq_write(ctx->meta->seq, e, sizeof(*e));
	return 0;
}
