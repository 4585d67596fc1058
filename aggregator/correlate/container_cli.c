/*
 * Container engine command lines. Options are skipped by their shape: a
 * `--name=value` is one word; a lone option takes the next word as its value
 * unless it is one of the flags below (docker 20.10, podman 4, nerdctl 1: the
 * flags of their `run`, `create`, `exec` and `start` and the global ones).
 */
#include "aggregator/correlate/container_cli.h"

#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"

static const char *const engines[] = {"docker", "podman", "nerdctl"};

/* Options that take no value: before the subcommand, and of the subcommand. */
static const char *const global_flags[] = {
    "-D",	"--debug", "--tls",    "--tlsverify", "-v", "--version",
    "--syslog", "-r",	   "--remote", "--help",      NULL,
};
static const char *const flags[] = {
    "-d",
    "--detach",
    "-i",
    "--interactive",
    "-t",
    "--tty",
    "--rm",
    "--init",
    "--privileged",
    "--read-only",
    "-P",
    "--publish-all",
    "--no-healthcheck",
    "--oom-kill-disable",
    "-q",
    "--quiet",
    "--replace",
    "--rmi",
    "--no-hosts",
    "--sig-proxy",
    "--disable-content-trust",
    "--read-only-tmpfs",
    "--tls-verify",
    "--help",
    NULL,
};

const char *container_engine_of(const char *path)
{
	if (!path)
		return NULL;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(engines) / sizeof(*engines); i++)
		if (!strcmp(base, engines[i]))
			return engines[i];
	return NULL;
}

static bool is_flag(const char *const *list, const char *w)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(w, list[i]))
			return true;
	/* Bundled short flags: -it, -dit, -ti. */
	if (w[0] == '-' && w[1] && w[1] != '-' && w[2]) {
		for (const char *c = w + 1; *c; c++)
			if (!strchr("ditPq", *c))
				return false;
		return true;
	}
	return false;
}

/* -eFOO=1, -m64m: a short option with its value attached. */
static bool attached_value(const char *w)
{
	return w[0] == '-' && w[1] && w[1] != '-' && w[2];
}

static enum container_verb verb_of(const char *w)
{
	if (!strcmp(w, "run"))
		return CLI_RUN;
	if (!strcmp(w, "create"))
		return CLI_CREATE;
	if (!strcmp(w, "start"))
		return CLI_START;
	if (!strcmp(w, "exec"))
		return CLI_EXEC;
	return CLI_OTHER;
}

/* What an option of the subcommand says: its value, or the next word's. */
static void note_option(const char *opt, const char *value, struct container_cli_args *out)
{
	size_t n = strcspn(opt, "=");

	if (!value)
		return;
	if ((n == 2 && !strncmp(opt, "-u", 2)) || (n == 6 && !strncmp(opt, "--user", 6))) {
		char *end;
		unsigned long uid = strtoul(value, &end, 10);
		out->has_user = end != value && (*end == '\0' || *end == ':') && uid <= UINT32_MAX;
		out->user = (uint32_t)uid;
	} else if (n == 6 && !strncmp(opt, "--name", 6)) {
		out->name = value;
	} else if (n == 12 && !strncmp(opt, "--entrypoint", 12)) {
		out->entrypoint = value;
	}
}

/* Skips options from argv[i]; returns the index of the first word that is not one. */
static size_t skip_options(const char *const *list, char *const *argv, size_t argc, size_t i,
			   struct container_cli_args *out)
{
	while (i < argc && argv[i][0] == '-' && argv[i][1]) {
		const char *w = argv[i];
		if (!strcmp(w, "--"))
			return i + 1;
		if (!strcmp(w, "-d") || !strcmp(w, "--detach") ||
		    (is_flag(list, w) && w[1] != '-' && strchr(w, 'd')))
			out->detach = true;
		const char *eq = strchr(w, '=');
		if (eq || attached_value(w)) {
			if (!is_flag(list, w))
				note_option(w, eq ? eq + 1 : w + 2, out);
			i++;
		} else if (is_flag(list, w)) {
			i++;
		} else {
			note_option(w, i + 1 < argc ? argv[i + 1] : NULL, out);
			i += 2;
		}
	}
	return i;
}

bool container_cli_parse(const char *exe, char *const *argv, size_t argc,
			 struct container_cli_args *out)
{
	const char *engine = container_engine_of(exe);
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!engine && argc)
		engine = container_engine_of(argv[0]);
	if (!engine || argc < 2)
		return false;
	copy_string(out->engine, sizeof(out->engine), engine);
	struct container_cli_args globals = {0};
	i = skip_options(global_flags, argv, argc, 1, &globals);
	if (i < argc && !strcmp(argv[i], "container"))
		i++;
	if (i >= argc)
		return false;
	out->verb = verb_of(argv[i]);
	out->verb_word = argv[i];
	if (out->verb == CLI_OTHER)
		return true;
	i = skip_options(flags, argv, argc, i + 1, out);
	if (i >= argc)
		return true;
	out->target = i;
	if (out->verb != CLI_START) {
		out->cmd = i + 1;
		out->ncmd = argc - i - 1;
	}
	return true;
}
