/*
 * What makes a collector the collector: a 32-byte secret that root hands to
 * both daemons before they drop privileges (an inherited descriptor from
 * `tracer run`, or a file only root or the aggregator can read). A uid proves
 * nothing: another process may share it. The collector sends the secret as
 * the first message on every connection, and only to a listener whose
 * credentials it checked (see sender.c): no one else ever sees it.
 */
#ifndef TRACER_IPC_AUTH_H
#define TRACER_IPC_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IPC_KEY_LEN 32
#define IPC_AUTH_MAGIC "TRCAUTH1"
#define IPC_AUTH_MAGIC_LEN 8
#define IPC_AUTH_LEN (IPC_AUTH_MAGIC_LEN + IPC_KEY_LEN)
/* How long a new connection may take to prove itself before it is closed. */
#define IPC_AUTH_TIMEOUT_NS (1000ULL * 1000000ULL)

/* Reads exactly IPC_KEY_LEN bytes from fd, then closes it. 0 or -1 (err says why). */
int ipc_key_read_fd(int fd, uint8_t key[IPC_KEY_LEN], char *err, size_t err_size);
/*
 * Reads the key from path. The file must be a regular file of IPC_KEY_LEN
 * bytes, owned by root or by us, that no other user may read or write (its
 * group, if it may read, is root's or ours: systemd's credential files). With
 * create (the aggregator only: the collector's root window stays small), a
 * missing file is made first (random, 0600, atomically: two aggregators
 * starting together end up with the same key). 0 or -1.
 */
int ipc_key_load_file(const char *path, bool create, uint8_t key[IPC_KEY_LEN], char *err,
		      size_t err_size);
/* The same without ever creating it (the collector reads a key, never makes one). */
int ipc_key_read_file(const char *path, uint8_t key[IPC_KEY_LEN], char *err, size_t err_size);
/* The first message of a connection: the magic, then the key. */
void ipc_auth_pack(const uint8_t key[IPC_KEY_LEN], uint8_t out[IPC_AUTH_LEN]);
/* Whether buf is that message for key; compares in constant time. */
bool ipc_auth_check(const void *buf, size_t len, const uint8_t key[IPC_KEY_LEN]);

#endif
