// SPDX-License-Identifier: GPL-2.0
/*
 * Network wait: what a thread going to sleep waits for, read at its
 * switch-out from what it is doing (sched.bpf.c calls net_sleep_mark). No
 * syscall hook: the syscall in flight and its first argument are still in
 * the sleeping task's saved user registers, and the descriptor's file tells
 * a socket from a pipe or a disk file. A sleep counts as network wait when
 * - the syscall is a receive, send, connect or accept (read/write included)
 *   on an IPv4/IPv6 socket: the kind and the peer's port are the socket's;
 * - the syscall is poll, select or epoll_wait (any flavour) and the process
 *   has an IPv4/IPv6 socket among its first 64 descriptors (the polled set
 *   is in user memory, which we do not read): kind "poll".
 * Unix sockets are local IPC, not network (as in net.bpf.c).
 */

#include <bpf/bpf_endian.h>

#define NETW_S_IFSOCK 0140000
#define NETW_AF_INET 2
#define NETW_AF_INET6 10
#define NETW_FDS_LOOKED 64

#if defined(__TARGET_ARCH_x86)
#define NETW_SYSCALL_NR(regs) ((long)(regs)->orig_ax)
#define NR_read 0
#define NR_write 1
#define NR_poll 7
#define NR_readv 19
#define NR_writev 20
#define NR_select 23
#define NR_connect 42
#define NR_accept 43
#define NR_sendto 44
#define NR_recvfrom 45
#define NR_sendmsg 46
#define NR_recvmsg 47
#define NR_epoll_wait 232
#define NR_pselect6 270
#define NR_ppoll 271
#define NR_epoll_pwait 281
#define NR_accept4 288
#define NR_recvmmsg 299
#define NR_sendmmsg 307
#define NR_epoll_pwait2 441
#elif defined(__TARGET_ARCH_arm64)
#define NETW_SYSCALL_NR(regs) ((long)(regs)->syscallno)
#define NR_read 63
#define NR_write 64
#define NR_poll -100 /* arm64 has only the p- and epoll_pwait flavours */
#define NR_readv 65
#define NR_writev 66
#define NR_select -101
#define NR_connect 203
#define NR_accept 202
#define NR_sendto 206
#define NR_recvfrom 207
#define NR_sendmsg 211
#define NR_recvmsg 212
#define NR_epoll_wait -102
#define NR_pselect6 72
#define NR_ppoll 73
#define NR_epoll_pwait 22
#define NR_accept4 242
#define NR_recvmmsg 243
#define NR_sendmmsg 269
#define NR_epoll_pwait2 441
#else
#error "syscall numbers are defined for x86_64 and arm64"
#endif

/* What a syscall waits for; -1: not a network-capable syscall (no lookup at all). */
static __always_inline int net_syscall_kind(long nr)
{
	switch (nr) {
	case NR_read:
	case NR_readv:
	case NR_recvfrom:
	case NR_recvmsg:
	case NR_recvmmsg:
		return TRACER_NET_WAIT_RECV;
	case NR_write:
	case NR_writev:
	case NR_sendto:
	case NR_sendmsg:
	case NR_sendmmsg:
		return TRACER_NET_WAIT_SEND;
	case NR_connect:
		return TRACER_NET_WAIT_CONNECT;
	case NR_accept:
	case NR_accept4:
		return TRACER_NET_WAIT_ACCEPT;
	case NR_poll:
	case NR_ppoll:
	case NR_select:
	case NR_pselect6:
	case NR_epoll_wait:
	case NR_epoll_pwait:
	case NR_epoll_pwait2:
		return TRACER_NET_WAIT_POLL;
	}
	return -1;
}

/* The IPv4/IPv6 socket behind a file, or NULL (not a socket, or a local one). */
static __always_inline struct sock *inet_sock_of(struct file *file)
{
	struct socket *sock;
	struct sock *sk;
	__u16 family;

	if (!file || (BPF_CORE_READ(file, f_inode, i_mode) & 0170000) != NETW_S_IFSOCK)
		return NULL;
	sock = BPF_CORE_READ(file, private_data);
	sk = BPF_CORE_READ(sock, sk);
	if (!sk)
		return NULL;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	return family == NETW_AF_INET || family == NETW_AF_INET6 ? sk : NULL;
}

/*
 * The file of descriptor fd; *ok false when the table could not be read. fdt
 * comes from the switch's BTF task pointer: plain loads; the slot array is an
 * array of pointers, which the verifier cannot index, so it is copied.
 */
static __always_inline struct file *file_of_fd(struct fdtable *fdt, long fd, bool *ok)
{
	struct file *file = NULL, **slots = fdt->fd;

	*ok = fd >= 0 && fd < fdt->max_fds &&
	      bpf_probe_read_kernel(&file, sizeof(file), &slots[fd]) == 0;
	return file;
}

/* Family and port of the other end (for a listening socket: its own port). */
static __always_inline void mark_peer(struct wait_mark *m, struct sock *sk)
{
	m->family = BPF_CORE_READ(sk, __sk_common.skc_family);
	m->port = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (!m->port)
		m->port = BPF_CORE_READ(sk, __sk_common.skc_num);
}

/* An IPv4/IPv6 socket among the first NETW_FDS_LOOKED open descriptors. */
static __always_inline struct sock *first_inet_socket(struct fdtable *fdt)
{
	unsigned long *open_bits = fdt->open_fds, bits = 0;

	if (bpf_probe_read_kernel(&bits, sizeof(bits), open_bits) != 0)
		return NULL;
	for (int fd = 0; fd < NETW_FDS_LOOKED; fd++) {
		bool ok;
		struct sock *sk;

		if (!(bits >> fd))
			break;
		if (!((bits >> fd) & 1))
			continue;
		sk = inet_sock_of(file_of_fd(fdt, fd, &ok));
		if (sk)
			return sk;
	}
	return NULL;
}

/*
 * Whether the sleep starting now is network wait: fills m (kind, peer) and
 * returns true if so. A socket syscall whose descriptor could not be read is
 * counted in net_wait_stats, never guessed.
 */
static __always_inline bool net_sleep_mark(struct task_struct *t, struct wait_mark *m)
{
	struct pt_regs *regs;
	struct fdtable *fdt;
	struct sock *sk;
	bool ok = true;
	int kind;

	if (t->flags & PF_KTHREAD)
		return false;
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	kind = net_syscall_kind(NETW_SYSCALL_NR(regs));
	if (kind < 0)
		return false;
	fdt = t->files ? t->files->fdt : NULL;
	if (!fdt) {
		__sync_fetch_and_add(&net_wait_stats[TRACER_NETW_FD_UNREADABLE], 1);
		return false;
	}
	if (kind == TRACER_NET_WAIT_POLL)
		sk = first_inet_socket(fdt);
	else
		sk = inet_sock_of(file_of_fd(fdt, (int)SYSCALL_ARG1(regs), &ok));
	if (!ok)
		__sync_fetch_and_add(&net_wait_stats[TRACER_NETW_FD_UNREADABLE], 1);
	if (!sk)
		return false;
	m->kind = TRACER_WAIT_NET + kind;
	mark_peer(m, sk);
	return true;
}
