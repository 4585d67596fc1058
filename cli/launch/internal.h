/*
 * The files of launch/: the processes `tracer run` starts, and as whom. Only
 * verbs/ (cmd_run.c) uses them; they touch no other layer of the CLI and no
 * database (test/lint/layers.py checks both).
 *   command.c   the watched command: found on PATH, started as the invoking user
 *   launch.c    tracer's own daemons for the length of a run, and their stop
 *   runuser.c   who runs that aggregator (never root, never nobody) and its directory
 *   selfhosted.c tracer run's own collector and aggregator: a private socket, both started
 * Each file's header is its door; nothing is private to the folder yet.
 */
#ifndef TRACER_CLI_LAUNCH_INTERNAL_H
#define TRACER_CLI_LAUNCH_INTERNAL_H

#include "cli/launch/command.h"
#include "cli/launch/launch.h"
#include "cli/launch/runuser.h"
#include "cli/launch/selfhosted.h"

#endif
