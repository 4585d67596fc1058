/*
 * The collector <-> aggregator channel: nng pair1 over an ipc:// Unix socket.
 * Frames flow collector -> aggregator; a fixed 24-byte ack (stream id + seq)
 * flows back once a frame is committed to SQLite, so the collector can keep
 * and resend what was not yet acknowledged. Frames are applied strictly in
 * sequence; gaps are only skipped where the frame says the collector dropped
 * them (oldest_seq). An ack with an all-zero stream id
 * is the aggregator's heartbeat (every IPC_HEARTBEAT_NS, even while it cannot
 * commit): a collector that hears nothing for IPC_STALL_NS drops the connection
 * and dials again.
 */
#ifndef TRACER_IPC_H
#define TRACER_IPC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <nng/nng.h>

#define IPC_ACK_LEN 24
/* A resend request: an ack plus one byte (1). */
#define IPC_RESEND_LEN 25

/*
 * seq: every frame up to it is committed. With resend set, seq + 1 is the
 * frame the aggregator needs next: it refused a later one that came first
 * (frames resent after a reconnect can overtake), so the collector sends
 * again from there.
 */
struct ipc_ack {
	uint8_t stream_id[16];
	uint64_t seq;
	bool resend;
};

#define IPC_HEARTBEAT_NS (1000ULL * 1000000ULL)
/* Long enough for the aggregator's longest batch under ASan. */
#define IPC_STALL_NS (15000ULL * 1000000ULL)
/* How long the aggregator waits to hand an ack to a busy pipe. */
#define IPC_SEND_TIMEOUT_MS 50
/* Messages nng queues for our reader (see set_receive_queue): acks are tiny and
 * the collector's queue is what holds frames, so the server keeps fewer. */
#define IPC_CLIENT_RECV_QUEUE 8192
#define IPC_SERVER_RECV_QUEUE 32
/*
 * Frames nng may hold for the collector's pipe while it writes the one before.
 * With none, a non-blocking send found the pipe busy and the frame waited for
 * the next turn of the collector's loop: one frame a turn, so in an exec storm
 * (a frame at each ring-buffer wake-up, plus the timer's) frames queued up and
 * reached the aggregator 1.3 s late on average. Each is at most 1 MiB, and the
 * sender keeps its own copy until acknowledged: a stalled aggregator costs at
 * most this many MiB more.
 */
#define IPC_CLIENT_SEND_QUEUE 4
/* How long a collector stays without a connection before it replaces its dialer. */
#define IPC_REDIAL_NS (5000ULL * 1000000ULL)

/* Returns the length written: IPC_ACK_LEN, or IPC_RESEND_LEN for a resend request. */
size_t ipc_ack_pack(const struct ipc_ack *ack, uint8_t out[IPC_RESEND_LEN]);
/* 0, or -1 when it is neither an ack nor a resend request. */
int ipc_ack_unpack(const void *buf, size_t len, struct ipc_ack *ack);
bool ipc_ack_is_heartbeat(const struct ipc_ack *ack);

/*
 * Who may connect to the aggregator's socket: with n_allowed 0 any uid may
 * try (the key decides, see ipc_auth.h); else only those uids.
 */
struct ipc_peer_policy {
	uid_t allowed_uids[4];
	unsigned n_allowed;
	/* Told of every pipe admitted (NNG_PIPE_EV_ADD_POST) and gone (REM_POST). */
	nng_pipe_cb on_pipe;
	void *on_pipe_arg;
	uint64_t refused; /* updated from nng's callback thread */
	uint64_t accepted;
	/* Our own probes of the listener (see ipc_listener_check): not counted above. */
	pid_t self_pid;
	uint64_t self_checks;
};

/* The aggregator's end: the socket, its listener and what rebuilding it needs. */
struct ipc_server {
	nng_socket sock;
	nng_listener listener;
	char path[4096];
	int mode;
	struct ipc_peer_policy *policy;
	uint64_t checks_seen; /* policy->self_checks when the last probe went out */
	int probe_fd;	      /* our probe connection, open until admitted */
	uint64_t probe_since_ns;
	uint64_t restarts;
};

/* How long our probe may wait for admission before the listener counts as stuck. */
#define IPC_ADMISSION_GRACE_NS (6ULL * 1000000000ULL)

/*
 * Listens on path (creating the socket file with mode), rejecting peers whose
 * uid is not allowed. The socket is pair1 polyamorous: a peer that connects
 * and never proves itself cannot hold the only slot; replies name their pipe
 * (nng_msg_set_pipe). Returns 0 or an nng error.
 */
int ipc_listen(struct ipc_server *srv, const char *path, int mode, struct ipc_peer_policy *policy);
/*
 * Keeps the listener alive. nng 1.5's listener stops admitting connections after
 * one peer hangs up in the middle of the SP handshake (nanomsg/nng#1518): any
 * local process able to connect could silence us. Call every few seconds: it keeps
 * one probe connection of our own open until the admission callback has seen it;
 * if that takes longer than IPC_ADMISSION_GRACE_NS the listener is rebuilt (its
 * stuck connections close; peers redial). Returns 1 when it rebuilt it.
 */
int ipc_listener_check(struct ipc_server *srv, uint64_t now_ns);
/*
 * Closes sock, waiting at most timeout_ms: nng 1.5's close
 * can deadlock when peers come and go during it (nanomsg/nng#1543, fixed after
 * 1.5.2). Returns 0 when closed, -1 when it gave up; the close then goes on in a
 * detached thread and the caller should exit without nng_fini.
 */
int ipc_close_within(nng_socket sock, unsigned timeout_ms);
/* The same for the aggregator's socket, then our probe. */
int ipc_server_close_within(struct ipc_server *srv, unsigned timeout_ms);
/* The collector's end. */
struct ipc_client {
	nng_socket sock;
	nng_dialer dialer;
	char path[4096];
};

/*
 * Dials path: synchronously if someone listens now, else in the background;
 * reconnects forever. on_pipe runs (on an nng thread) before a new pipe is
 * admitted (NNG_PIPE_EV_ADD_PRE: it may close it), for every new pipe
 * (NNG_PIPE_EV_ADD_POST) and every pipe gone (NNG_PIPE_EV_REM_POST).
 */
int ipc_dial(struct ipc_client *c, const char *path, nng_pipe_cb on_pipe, void *arg);
/*
 * Replaces the dialer with a new one dialing in the background. nng 1.5's
 * dialer can stop redialing for good when the listener dies mid-handshake
 * (seen when the aggregator restarts under load); the caller notices the
 * long disconnection and calls this.
 */
int ipc_redial(struct ipc_client *c);
/* Is something accepting connections on path right now? Completes the SP
 * handshake before hanging up, so the probe itself never trips nng#1518. */
bool ipc_probe(const char *path);

#endif
