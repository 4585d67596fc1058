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
	struct thread_acc *a;

	/* Only a task going to sleep inside io_schedule() is waiting for I/O. */
	if (preempt || !prev_state || !BPF_CORE_READ_BITFIELD_PROBED(prev, in_iowait))
		return 0;
	a = bpf_task_storage_get(&thread_accs, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (a)
		a->iowait_start = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(iowait_wakeup, struct task_struct *p)
{
	struct thread_acc *a = bpf_task_storage_get(&thread_accs, p, 0, 0);
	__u64 start;

	if (!a || !(start = a->iowait_start))
		return 0;
	a->iowait_ns += bpf_ktime_get_ns() - start;
	a->iowait_start = 0;
	return 0;
}
