// SPDX-License-Identifier: GPL-2.0
/*
 * Network bytes per process: payload bytes through sock_sendmsg/recvmsg on
 * IPv4 and IPv6 sockets (Unix sockets and netlink are local IPC, not
 * network). sendfile/splice and io_uring zero-copy paths are not seen.
 */
#include "common.bpf.h"

#define AF_INET 2
#define AF_INET6 10
#define MSG_PEEK 2

static __always_inline bool is_inet(struct sock *sk)
{
	__u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);

	return family == AF_INET || family == AF_INET6;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(net_send, struct sock *sk, int ret, int flags)
{
	struct proc_acc *a;

	if (ret <= 0 || !is_inet(sk) || !(a = current_acc()))
		return 0;
	a->net_tx_bytes += ret;
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(net_recv, struct sock *sk, int ret, int flags)
{
	struct proc_acc *a;

	/* A peek does not consume: the same bytes are read again later. */
	if (ret <= 0 || (flags & MSG_PEEK) || !is_inet(sk) || !(a = current_acc()))
		return 0;
	a->net_rx_bytes += ret;
	return 0;
}
