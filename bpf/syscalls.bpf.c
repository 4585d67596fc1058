// SPDX-License-Identifier: GPL-2.0
/*
 * Syscalls per process by class (file, network, memory, process, other) and
 * how many failed, counted in the thread's own storage on syscall exit. The
 * collector fills syscall_class for this architecture.
 */
#include "common.bpf.h"

/* Where sock:sock_*_length are missing (< 6.3), count socket syscalls here. */
const volatile bool net_via_syscalls = false;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TRACER_SYSCALL_MAX);
	__type(key, __u32);
	__type(value, __u8);
} syscall_class SEC(".maps");

/* x86_64 socket syscalls that return a byte count (the fallback only). */
#define NR_SENDTO 44
#define NR_RECVFROM 45
#define NR_SENDMSG 46
#define NR_RECVMSG 47

SEC("tp_btf/sys_exit")
int BPF_PROG(count_syscall, struct pt_regs *regs, long ret)
{
	struct thread_acc *a = current_acc(true);
	__u32 nr, cls = TRACER_SYS_OTHER;
	__u8 *c;

	if (!a)
		return 0;
#if defined(__TARGET_ARCH_x86)
	nr = (__u32)BPF_CORE_READ(regs, orig_ax);
#elif defined(__TARGET_ARCH_arm64)
	nr = (__u32)BPF_CORE_READ(regs, syscallno);
#else
	nr = TRACER_SYSCALL_MAX;
#endif
	c = bpf_map_lookup_elem(&syscall_class, &nr);
	if (c && *c < TRACER_SYS_CLASSES)
		cls = *c;
	if (cls < TRACER_SYS_CLASSES)
		a->sys[cls]++;
	if (ret < 0 && ret >= -4095)
		a->sys_failed++;
	if (net_via_syscalls && ret > 0) {
		if (nr == NR_SENDTO || nr == NR_SENDMSG)
			a->net_tx_bytes += ret;
		else if (nr == NR_RECVFROM || nr == NR_RECVMSG)
			a->net_rx_bytes += ret;
	}
	return 0;
}
