/*
 * What tool a process is: the executable's basename (never the 15-character
 * comm), with interpreters unwrapped (python x.py, python -m mod, java -jar
 * picard.jar, Rscript x.R, perl x.pl, bash x.sh) and subcommands kept where
 * they matter (samtools sort, bwa mem, gatk HaplotypeCaller). The allowlist
 * gives categories; the denylist names system noise not worth recording.
 * Both are plain data files, reloaded on SIGHUP.
 */
#ifndef TRACER_TOOLS_H
#define TRACER_TOOLS_H

#include <stdbool.h>
#include <stddef.h>

#define TOOL_NAME_MAX 128

struct tool_identity {
	char name[2 * TOOL_NAME_MAX];	 /* "samtools sort", "picard", "align.py" */
	char program[TOOL_NAME_MAX];	 /* "samtools": what the lists match */
	char interpreter[TOOL_NAME_MAX]; /* "python", "java", ... or "" */
};

struct tool_entry {
	char *name;	/* program name or pattern ("systemd-*") */
	char *category; /* allowlist only */
	unsigned line;	/* in its file: the first of equal names wins */
};

/*
 * Each list is sorted by name once loaded, so lookups are binary searches;
 * the denylist keeps its prefix patterns ("systemd-*") after the exact names.
 */
struct tool_lists {
	struct tool_entry *allow;
	size_t n_allow;
	struct tool_entry *deny;
	size_t n_deny;
	size_t n_deny_exact; /* deny[0 .. n_deny_exact) are exact names */
	char allow_path[512];
	char deny_path[512];
};

/* Identifies the tool from exe and argv (argv may be empty). */
void tool_identify(const char *exe, char *const *argv, size_t argc, struct tool_identity *out);

/* Programs that only start another one in their place (env, nohup, setsid,
 * taskset, timeout ...): never what a step is named after. */
bool tool_is_launcher(const char *program);
/*
 * Build and batch drivers (make, ninja, xargs, parallel): they exit non-zero
 * because a command they ran failed, so their own failure is never the cause
 * when one of their commands failed first.
 */
bool tool_is_driver(const char *program);
/* A shell interpreter: bash, sh, dash, zsh, ksh, fish, tcsh, csh. */
bool tool_is_shell(const char *interpreter);

/*
 * Loads both lists ("name<TAB or spaces>category" per line; # comments).
 * On error lists keeps what it had and err says file, line and problem.
 */
int tool_lists_load(struct tool_lists *lists, const char *allow_path, const char *deny_path,
		    char *err, size_t err_size);
void tool_lists_free(struct tool_lists *lists);
/* The allowlist category of a program, or NULL if not listed. */
const char *tool_category(const struct tool_lists *lists, const char *program);
/* Is this program system noise (denylist; '*' matches any suffix)? */
bool tool_denied(const struct tool_lists *lists, const char *program);

#endif
