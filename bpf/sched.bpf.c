// SPDX-License-Identifier: GPL-2.0
/*
 * I/O wait: time a thread spends blocked in io_schedule(), from switching out
 * to being woken. Run-queue delay needs no hook at all: the kernel keeps it
 * per thread in sched_info.run_delay, read at exit and in samples.
 */
#include "common.bpf.h"

SEC("tp_btf/sched_switch")
int BPF_PROG(iowait_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u32 tid;
	__u64 now;

	/* Only a task going to sleep inside io_schedule() is waiting for I/O. */
	if (preempt || !prev_state || !BPF_CORE_READ_BITFIELD_PROBED(prev, in_iowait))
		return 0;
	tid = prev->pid;
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&iowait_since, &tid, &now, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(iowait_wakeup, struct task_struct *p)
{
	__u32 tid = p->pid;
	__u64 *since = bpf_map_lookup_elem(&iowait_since, &tid);
	struct proc_acc *a;
	__u64 waited;

	if (!since)
		return 0;
	waited = bpf_ktime_get_ns() - *since;
	bpf_map_delete_elem(&iowait_since, &tid);
	a = proc_acc_get(p->tgid);
	if (a)
		a->iowait_ns += waited;
	return 0;
}
