/*
 * Snakemake: the snakemake process is the run; its Snakefile (or working
 * directory) names the pipeline. Each job is a step: the `bash -c 'set -euo
 * pipefail; ...'` it starts for a shell rule, a `.snakemake/scripts/` script,
 * the `/bin/sh -c "... snakemake --target-jobs 'rule:...'"` of a `run:` rule,
 * or in cluster and Slurm modes the snakemake subprocess with --target-jobs
 * 'rule:...'. The rule name is in argv only in those last cases.
 */
#include <stdio.h>
#include <string.h>

#include "aggregator/correlate/engines.h"
#include "common/strutil.h"

static bool is_run(const struct process_view *v, char *pipeline, size_t size)
{
	const char *file, *dir;

	if (strcmp(v->tool->program, "snakemake") != 0)
		return false;
	/* Subprocesses for single jobs are steps, not runs. */
	if (argv_value(v, "--target-jobs") || argv_value(v, "--allowed-rules"))
		return false;
	file = argv_value(v, "--snakefile");
	if (!file)
		file = argv_value(v, "-s");
	dir = argv_value(v, "--directory");
	if (!dir)
		dir = argv_value(v, "-d");
	pipeline_from_file(file ? file : "Snakefile", dir ? dir : v->cwd, pipeline, size);
	return true;
}

/* 'rule:wildcard=value,...' or 'rule' -> rule */
static void rule_name(const char *spec, char *out, size_t size)
{
	size_t n = strcspn(spec, ": ,'\"");
	snprintf(out, size, "%.*s", (int)n, spec);
}

/*
 * A `run:` job in Snakemake 7: `/bin/sh -c "cd DIR && python3 -m snakemake
 * --target-jobs 'rule:...' ..."`. The rule is inside the shell's string.
 */
static bool shell_target(const struct process_view *v, char *name, size_t size)
{
	const char *code = v->argc >= 3 && !strcmp(v->argv[1], "-c") ? v->argv[2] : NULL;
	const char *at = code && strstr(code, "snakemake") ? strstr(code, "--target-jobs") : NULL;

	if (!v->tool->interpreter[0] || !at)
		return false;
	at += strlen("--target-jobs");
	at += strspn(at, " =\t'\"");
	rule_name(at, name, size);
	return name[0] != '\0';
}

static bool step(const struct process_view *v, unsigned seq, struct step_spec *out)
{
	const char *target, *script;

	if (!v->parent_is_engine || v->in_step)
		return false;
	snprintf(out->kind, sizeof(out->kind), "snakemake-job");
	snprintf(out->key, sizeof(out->key), "job-%u", seq);
	out->name[0] = '\0';
	/* The job's command (rule and wildcards) and work dir are the root's argv and cwd. */
	out->root_is_job = true;
	target = argv_value(v, "--target-jobs");
	if (!target)
		target = argv_value(v, "--allowed-rules");
	if (target) {
		rule_name(target, out->name, sizeof(out->name));
		return true;
	}
	if (shell_target(v, out->name, sizeof(out->name)))
		return true;
	/* snakejob.<rule>.<jobid>.sh (cluster jobscripts) */
	for (size_t i = 0; i < v->argc; i++) {
		const char *base = strrchr(v->argv[i], '/');
		base = base ? base + 1 : v->argv[i];
		if (!strncmp(base, "snakejob.", 9)) {
			rule_name(base + 9, out->name, sizeof(out->name));
			char *dot = strchr(out->name, '.');
			if (dot)
				*dot = '\0';
			return true;
		}
	}
	/* run:/script: rules: .snakemake/scripts/tmpXXXX.<name>.py */
	for (size_t i = 1; i < v->argc; i++) {
		script = strstr(v->argv[i], ".snakemake/scripts/");
		if (script) {
			const char *base = strrchr(script, '/') + 1;
			const char *dot = strchr(base, '.');
			copy_string(out->name, sizeof(out->name), dot ? dot + 1 : base);
			return true;
		}
	}
	/* A shell rule: bash -c 'set -euo pipefail; ...' */
	return v->tool->interpreter[0] && v->argc >= 3 && !strcmp(v->argv[1], "-c") &&
	       strstr(v->argv[2], "set -euo pipefail");
}

const struct engine engine_snakemake = {"snakemake", is_run, step, false};
