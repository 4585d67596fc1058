// SPDX-License-Identifier: GPL-2.0
/*
 * Network bytes per process on IPv4 and IPv6 sockets (Unix sockets and
 * netlink are local IPC, not network). Sent: payload bytes through
 * sock_sendmsg, which splice and sendfile to a socket also go through.
 * Received: for TCP, the bytes the process consumed, however it read them
 * (recv, read, splice, zero-copy receive), from the socket's own counters;
 * for other protocols, what sock_recvmsg returned. io_uring's own paths are
 * not seen.
 */
#include "common.bpf.h"

#define AF_INET 2
#define AF_INET6 10
#define MSG_PEEK 2
#define IPPROTO_TCP 6
#define TCP_ESTABLISHED 1
#define TCP_CLOSE 7
#define RCV_SHUTDOWN 1

/* TCP reads are counted by net_tcp_read (the kernel has its tracepoints). */
const volatile bool tcp_by_consumption = false;

static __always_inline bool is_inet(struct sock *sk)
{
	__u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);

	return family == AF_INET || family == AF_INET6;
}

static __always_inline bool is_tcp(struct sock *sk)
{
	return BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol) == IPPROTO_TCP;
}

/*
 * Per TCP socket: how many bytes its readers had consumed at the last look.
 * Entered when a connection is established while we run; a socket found
 * without one predates us, and its first look only sets the baseline.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64);
} tcp_consumed SEC(".maps");

/*
 * Bytes the socket's readers consumed since it connected: received in order,
 * less unread. A FIN counts one in the sequence space; once the peer's FIN
 * is in (RCV_SHUTDOWN) and nothing is left unread, the reader consumed it too.
 */
static __always_inline __u64 tcp_consumed_total(struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	__u32 unread = BPF_CORE_READ(tp, rcv_nxt) - BPF_CORE_READ(tp, copied_seq);
	__u64 total = BPF_CORE_READ(tp, bytes_received) - unread;

	if (!unread && (BPF_CORE_READ_BITFIELD_PROBED(sk, sk_shutdown) & RCV_SHUTDOWN) && total)
		total--;
	return total;
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

	/* A peek does not consume: the same bytes are read again later. TCP is
	 * counted where its reads consume, below. */
	if (ret <= 0 || (flags & MSG_PEEK) || !is_inet(sk) || (tcp_by_consumption && is_tcp(sk)) ||
	    !(a = current_acc()))
		return 0;
	a->net_rx_bytes += ret;
	return 0;
}

/* Every TCP read (recvmsg, splice's tcp_read_sock, zero-copy) ends here, in the reader. */
SEC("tp_btf/tcp_rcv_space_adjust")
int BPF_PROG(net_tcp_read, struct sock *sk)
{
	__u64 key = (__u64)sk, now, *last;
	struct proc_acc *a;

	if (!is_inet(sk))
		return 0;
	now = tcp_consumed_total(sk);
	last = bpf_map_lookup_elem(&tcp_consumed, &key);
	if (!last) {
		bpf_map_update_elem(&tcp_consumed, &key, &now, BPF_NOEXIST);
		return 0;
	}
	if (now > *last && (a = current_acc()))
		a->net_rx_bytes += now - *last;
	*last = now;
	return 0;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(net_tcp_state, const struct sock *sk, int oldstate, int newstate)
{
	__u64 key = (__u64)sk, zero = 0;

	if (!is_tcp((struct sock *)sk))
		return 0;
	/* After the peer's FIN (CLOSE_WAIT) what is left is still read: forgotten at close. */
	if (newstate == TCP_ESTABLISHED)
		bpf_map_update_elem(&tcp_consumed, &key, &zero, BPF_ANY);
	else if (newstate == TCP_CLOSE)
		bpf_map_delete_elem(&tcp_consumed, &key);
	return 0;
}
