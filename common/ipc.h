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
};

/*
 * Listens on path (creating the socket file with mode), rejecting peers whose
 * uid is not allowed. Returns 0 or an nng error.
 */
int ipc_listen(nng_socket *sock, const char *path, int mode, struct ipc_peer_policy *policy);
/*
 * Dials path: synchronously if someone listens now, else in the background;
 * reconnects forever. on_connect runs (on an nng thread) for every new pipe.
 */
int ipc_dial(nng_socket *sock, const char *path, nng_pipe_cb on_connect, void *arg);
/* Is something accepting connections on path right now? */
bool ipc_probe(const char *path);

#endif
