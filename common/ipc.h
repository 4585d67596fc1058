/*
 * The collector <-> aggregator channel: nng pair1 over an ipc:// Unix socket.
 * Frames flow collector -> aggregator; a fixed 24-byte ack (stream id + seq)
 * flows back once a frame is committed to SQLite, so the collector can keep
 * and resend what was not yet acknowledged.
 */
#ifndef TRACER_IPC_H
#define TRACER_IPC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <nng/nng.h>

#define IPC_ACK_LEN 24

struct ipc_ack {
	uint8_t stream_id[16];
	uint64_t seq;
};

void ipc_ack_pack(const struct ipc_ack *ack, uint8_t out[IPC_ACK_LEN]);
/* 0, or -1 when len is not exactly IPC_ACK_LEN. */
int ipc_ack_unpack(const void *buf, size_t len, struct ipc_ack *ack);

/* Who may connect to the aggregator's socket. */
struct ipc_peer_policy {
	uid_t allowed_uids[4];
	unsigned n_allowed;
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
 * uid is not allowed. Returns 0 or an nng error.
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
/*
 * Dials path: synchronously if someone listens now, else in the background;
 * reconnects forever. on_connect runs (on an nng thread) for every new pipe.
 */
int ipc_dial(nng_socket *sock, const char *path, nng_pipe_cb on_connect, void *arg);
/* Is something accepting connections on path right now? Completes the SP
 * handshake before hanging up, so the probe itself never trips nng#1518. */
bool ipc_probe(const char *path);

#endif
