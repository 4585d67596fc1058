/* The watched command of tracer run: found, and started as the invoking user. */
#ifndef TRACER_CLI_COMMAND_H
#define TRACER_CLI_COMMAND_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/privdrop.h"

/*
 * Whether execvp could find name at all (as the shell's "command not found"):
 * checked before anything is started, so a typo records no run.
 */
bool command_exists(const char *name);
/* Forks and execs command as as_user (NULL: as we are); the child's pid, or -1. */
pid_t start_command(char **command, const struct run_as *as_user);

#endif
