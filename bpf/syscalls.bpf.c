// SPDX-License-Identifier: GPL-2.0
/*
 * Syscalls per process by class (file, network, memory, process, other) and
 * how many failed. A hook on every syscall exit costs every syscall a BPF
 * call, so this group is off unless configured (docs/performance.md has the
 * measured cost). The collector fills syscall_class for this architecture.
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

#if defined(__TARGET_ARCH_x86)
#define SYSCALL_NR(regs) ((__u32)(regs)->orig_ax)
#define NR_SENDTO 44
#define NR_RECVFROM 45
#define NR_SENDMSG 46
#define NR_RECVMSG 47
#elif defined(__TARGET_ARCH_arm64)
#define SYSCALL_NR(regs) ((__u32)(regs)->syscallno)
#define NR_SENDTO 206
#define NR_RECVFROM 207
#define NR_SENDMSG 211
#define NR_RECVMSG 212
#else
#error "syscall numbers are defined for x86_64 and arm64"
#endif

SEC("tp_btf/sys_exit")
int BPF_PROG(count_syscall, struct pt_regs *regs, long ret)
{
	__u32 nr = SYSCALL_NR(regs), cls = TRACER_SYS_OTHER;
	struct proc_acc *a = current_acc();
	__u8 *c;

	if (!a)
		return 0;
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
