/* Starting tracer's own daemons for the length of a `tracer run`. */
#ifndef TRACER_LAUNCH_H
#define TRACER_LAUNCH_H

#include <stdint.h>
#include <sys/types.h>

struct daemon_proc {
	pid_t pid;
	const char *name;
};

/*
 * The read end of a pipe whose write end only this process holds (close on
 * exec, so the traced command does not): when we die, even by SIGKILL, the
 * daemons we started see it hang up and stop (--exit-with-fd). -1 until made.
 */
int daemon_lifeline(void);

/*
 * Runs argv (argv[0] is the path) in its own session, appending --ready-fd
 * and, once daemon_lifeline() made one, --exit-with-fd, and waits up to
 * timeout_ms for it to say it is ready. With a key, --key-fd too: a pipe
 * holding the key's 32 bytes, never argv or a file. 0 or -1.
 */
int daemon_start(struct daemon_proc *d, const char *name, char **argv, int timeout_ms,
		 const uint8_t *key);
/*
 * An id that no account or group has and no running process holds as its
 * uid, gid or a supplementary group (systemd's DynamicUser range): tracer
 * run's collector runs as it (no other process can signal it) and its
 * aggregator keeps it as a group, the only one that may write the socket
 * directory. 0 when none is found.
 */
unsigned unused_id(void);
/* SIGTERM, then SIGKILL after timeout_ms. Returns its wait status or -1. */
int daemon_stop(struct daemon_proc *d, int timeout_ms);
/* Where tracer-aggregator and tracer-collector are (build tree or installed). 0 or -1. */
int daemons_directory(char *out, size_t size);

#endif
