/*
 * Explicit runs: `tracer run [--pipeline P] [--run R] -- CMD` is visible to
 * the kernel as a process with that argv. The aggregator recognises it and
 * files CMD's process tree under a run named by those options, whether the
 * daemons were already running or tracer run started its own.
 */
#ifndef TRACER_RUNMARK_H
#define TRACER_RUNMARK_H

#include <stdbool.h>
#include <stddef.h>

#define RUNMARK_NAME_MAX 256

struct runmark {
	char pipeline[RUNMARK_NAME_MAX]; /* "" when not given */
	char run[RUNMARK_NAME_MAX];	 /* "" when not given */
	char command[RUNMARK_NAME_MAX];	 /* basename of CMD, for default names */
};

/* True when exe/argv is a `tracer run` launcher; fills out. */
bool runmark_parse(const char *exe, char *const *argv, size_t argc, struct runmark *out);
/* Is this the name of one of tracer's own daemons? */
bool runmark_is_tracer_daemon(const char *exe);

#endif
