// SPDX-License-Identifier: GPL-2.0
/*
 * Cgroup creation and removal, with the path captured at that moment: so a
 * container's cgroup id still resolves to its path after the cgroup is gone,
 * and container start and stop times are known.
 */
#include "common.bpf.h"

static __always_inline int emit_cgroup(void *ctx, struct cgroup *cgrp, const char *path, __u32 op)
{
	struct tracer_cgroup_event *e = event_reserve(sizeof(*e));
	long n;

	if (!e) {
		count_drop(TRACER_EV_CGROUP);
		return 0;
	}
	fill_header(&e->h, TRACER_EV_CGROUP, (void *)bpf_get_current_task());
	e->id = BPF_CORE_READ(cgrp, kn, id);
	e->hierarchy = BPF_CORE_READ(cgrp, root, hierarchy_id);
	e->level = BPF_CORE_READ(cgrp, level);
	e->op = op;
	n = bpf_probe_read_kernel_str(e->path, sizeof(e->path), path);
	e->path_len = n > 0 ? n : 0;
	event_submit(ctx, e, sizeof(*e), TRACER_EV_CGROUP);
	return 0;
}

SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(cgroup_mkdir, struct cgroup *cgrp, const char *path)
{
	return emit_cgroup(ctx, cgrp, path, TRACER_CGROUP_MKDIR);
}

SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	return emit_cgroup(ctx, cgrp, path, TRACER_CGROUP_RMDIR);
}
