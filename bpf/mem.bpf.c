// SPDX-License-Identifier: GPL-2.0
/*
 * Memory: the exact victim of every OOM kill (with its RSS and the memory
 * cgroup limit it lived under), and time spent in direct reclaim per
 * process (global or memory-cgroup limit reclaim): memory pressure.
 */
#include "common.bpf.h"

static __always_inline __u64 pages_kb(__u64 pages)
{
	return pages * page_kb;
}

SEC("tp_btf/mark_victim")
int BPF_PROG(oom_victim, struct task_struct *task, uid_t uid)
{
	struct tracer_oom_event *e = event_reserve(sizeof(*e));
	struct mm_struct *mm;
	struct cgroup_subsys_state *css;

	if (!e) {
		count_drop(TRACER_EV_OOM);
		return 0;
	}
	fill_header(&e->h, TRACER_EV_OOM, task);
	mm = BPF_CORE_READ(task, mm);
	e->total_vm_kb = mm ? pages_kb(BPF_CORE_READ(mm, total_vm)) : 0;
	e->anon_rss_kb = mm ? pages_kb(counter_pages(mm, MM_ANONPAGES, false)) : 0;
	e->file_rss_kb = mm ? pages_kb(counter_pages(mm, MM_FILEPAGES, false)) : 0;
	e->shmem_rss_kb = mm ? pages_kb(counter_pages(mm, MM_SHMEMPAGES, false)) : 0;
	e->cgroup_id = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
	e->cgroup1_id = memcg_v1_id(task);
	e->memcg_limit_kb = 0;
	e->memcg_usage_kb = 0;
	css = memory_css(task);
	if (css) {
		struct mem_cgroup *memcg =
		    (void *)css - bpf_core_field_offset(struct mem_cgroup, css);
		__u64 max = BPF_CORE_READ(memcg, memory.max);
		/* PAGE_COUNTER_MAX means no limit. */
		if (max < (1ULL << 50))
			e->memcg_limit_kb = pages_kb(max);
		e->memcg_usage_kb = pages_kb(BPF_CORE_READ(memcg, memory.usage.counter));
	}
	e->oom_score_adj = BPF_CORE_READ(task, signal, oom_score_adj);
	e->uid = uid;
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	event_submit(ctx, e, sizeof(*e), TRACER_EV_OOM);
	return 0;
}

static __always_inline int reclaim_begin(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 now = bpf_ktime_get_ns();

	bpf_map_update_elem(&reclaim_since, &tid, &now, BPF_ANY);
	return 0;
}

static __always_inline int reclaim_end(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *since = bpf_map_lookup_elem(&reclaim_since, &tid);
	struct proc_acc *a;
	__u64 spent;

	if (!since)
		return 0;
	spent = bpf_ktime_get_ns() - *since;
	bpf_map_delete_elem(&reclaim_since, &tid);
	if (group_ended((struct task_struct *)bpf_get_current_task()))
		return 0;
	a = current_acc();
	if (a)
		a->reclaim_ns += spent;
	return 0;
}

SEC("tp_btf/mm_vmscan_direct_reclaim_begin")
int BPF_PROG(reclaim_direct_begin, int order, gfp_t gfp)
{
	return reclaim_begin();
}

SEC("tp_btf/mm_vmscan_direct_reclaim_end")
int BPF_PROG(reclaim_direct_end, unsigned long nr_reclaimed)
{
	return reclaim_end();
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_begin")
int BPF_PROG(reclaim_memcg_begin, int order, gfp_t gfp)
{
	return reclaim_begin();
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_end")
int BPF_PROG(reclaim_memcg_end, unsigned long nr_reclaimed)
{
	return reclaim_end();
}
