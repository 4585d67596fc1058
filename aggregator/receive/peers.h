/*
 * The connections to the aggregator's socket and whether each proved it is
 * the collector (ipc_auth.h). Anyone who can reach the socket may connect;
 * until a connection sends the key as its first message nothing it sends is
 * applied, and one that has not within IPC_AUTH_TIMEOUT_NS is closed: an
 * impostor can neither forge a frame nor keep the real collector out.
 * nng's threads add and remove pipes; the receiver's loop asks and decides.
 */
#ifndef TRACER_PEERS_H
#define TRACER_PEERS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <nng/nng.h>

#include "common/ipc.h"
#include "common/ipc_auth.h"

/* More than a host ever needs: the oldest unproven pipe makes room for a new one. */
#define PEERS_MAX 256

struct peer {
	uint32_t pipe;
	bool proven;
	uint32_t messages; /* received before it proved itself */
	uint64_t since_ns;
};

struct peers {
	pthread_mutex_t lock;
	struct peer slot[PEERS_MAX];
	unsigned n;
	uint8_t key[IPC_KEY_LEN];
	bool require_key; /* false only in unit tests that speak raw frames */
	uint64_t refused; /* connections closed unproven after sending or timing out */
};

void peers_init(struct peers *p, const uint8_t key[IPC_KEY_LEN]);
/* nng's pipe callback (ipc_peer_policy.on_pipe). */
void peers_on_pipe(nng_pipe pipe, nng_pipe_ev ev, void *arg);

enum peer_verdict { PEER_FRAME, PEER_PROVEN_NOW, PEER_DROP };
/*
 * A message from pipe: a frame to apply (the pipe proved itself earlier), the
 * key that proves it now, or something to drop (an unproven pipe's message).
 */
enum peer_verdict peers_judge(struct peers *p, uint32_t pipe, const void *buf, size_t len);
/* Closes the pipes that did not prove themselves in time. */
void peers_expire(struct peers *p, uint64_t now_ns);
/* The proven pipes, at most max; their number. */
unsigned peers_proven(struct peers *p, uint32_t *out, unsigned max);

/* A reply to one connection (0: nng's choice, as for a raw test peer). */
void peers_send(nng_socket sock, uint32_t pipe, const void *buf, size_t len);
/* To every proven connection (a heartbeat): an impostor hears nothing from us. */
void peers_broadcast(struct peers *p, nng_socket sock, const void *buf, size_t len);

/* peerconf.c. --make-key: the key file exists afterwards; an exit status. */
int peers_make_key(const char *path);
/* Before the privilege drop: the key from fd (>= 0) or file (made if missing, as root). 0 or -1. */
int peers_load_key(const char *file, int fd, uint8_t key[IPC_KEY_LEN]);
/*
 * Only these users (and root) may even try; with none, any connection may,
 * and the key decides. No uid is trusted by default: `nobody` is shared by
 * unrelated services. 0, or -1 for an unknown user.
 */
int peers_allow_users(const char *const *users, unsigned n, struct ipc_peer_policy *policy);

#endif
