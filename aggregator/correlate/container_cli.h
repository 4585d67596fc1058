/*
 * What a container engine's command line asks for, from its argv alone:
 * `docker|podman|nerdctl [global options] [container] run|create|start|exec
 * [options] IMAGE|CONTAINER [COMMAND...]`. The container's first program is
 * matched against it (containers.c); nothing here reads the engine's state.
 */
#ifndef TRACER_CONTAINER_CLI_H
#define TRACER_CONTAINER_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum container_verb { CLI_NONE, CLI_RUN, CLI_CREATE, CLI_START, CLI_EXEC, CLI_OTHER };

struct container_cli_args {
	char engine[16]; /* docker, podman, nerdctl */
	enum container_verb verb;
	const char *verb_word; /* "run", "images", "stats" ... (points into argv) */
	/* run, create: the image; exec: the container; start: the first container. */
	size_t target;		       /* argv index; 0: none */
	size_t cmd, ncmd;	       /* the command after the target: argv[cmd .. cmd + ncmd) */
	const char *entrypoint, *name; /* --entrypoint, --name; NULL if not given */
	bool has_user;		       /* --user / -u with a numeric uid */
	uint32_t user;
	bool detach; /* -d: the CLI ends once the container started */
};

/* The engine a program is (by its base name): "docker", "podman", "nerdctl", or NULL. */
const char *container_engine_of(const char *exe_or_argv0);
/* Parses argv of a container engine's CLI. false: not one (out->verb CLI_NONE). */
bool container_cli_parse(const char *exe, char *const *argv, size_t argc,
			 struct container_cli_args *out);

#endif
