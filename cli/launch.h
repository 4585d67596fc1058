/* Starting tracer's own daemons for the length of a `tracer run`. */
#ifndef TRACER_LAUNCH_H
#define TRACER_LAUNCH_H

#include <sys/types.h>

struct daemon_proc {
	pid_t pid;
	const char *name;
};

/*
 * Runs argv (argv[0] is the path) in its own session, appending --ready-fd,
 * and waits up to timeout_ms for it to say it is ready. 0 or -1.
 */
int daemon_start(struct daemon_proc *d, const char *name, char **argv, int timeout_ms);
/* SIGTERM, then SIGKILL after timeout_ms. Returns its wait status or -1. */
int daemon_stop(struct daemon_proc *d, int timeout_ms);
/* Where tracer-aggregator and tracer-collector are (build tree or installed). 0 or -1. */
int daemons_directory(char *out, size_t size);

#endif
