// SPDX-License-Identifier: GPL-2.0
/*
 * Working directory changes (part of the files group): the exec event carries
 * the cwd at exec, and a relative open after a chdir is relative to the new
 * one. chdir is rare next to open, so the new cwd is walked here, once.
 */

static __always_inline int emit_cwd(void *ctx, long ret)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct fs_struct *fs = BPF_CORE_READ(task, fs);
	struct tracer_cwd_event *e;
	__u32 flags = 0;

	if (ret != 0 || !fs)
		return 0;
	e = event_reserve(sizeof(*e));
	if (!e) {
		count_drop(TRACER_EV_CWD);
		return 0;
	}
	fill_header(&e->h, TRACER_EV_CWD, task);
	e->cwd_depth = 0;
	e->cwd_len =
	    walk_path(BPF_CORE_READ(fs, pwd.dentry), BPF_CORE_READ(fs, pwd.mnt), e->cwd,
		      sizeof(e->cwd), &e->cwd_depth, &flags, TRACER_F_CWD_TRUNCATED, false);
	e->h.flags |= flags;
	event_submit(ctx, e, sizeof(*e), TRACER_EV_CWD);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_chdir")
int cwd_chdir_exit(struct trace_event_raw_sys_exit *ctx)
{
	return emit_cwd(ctx, ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_fchdir")
int cwd_fchdir_exit(struct trace_event_raw_sys_exit *ctx)
{
	return emit_cwd(ctx, ctx->ret);
}
