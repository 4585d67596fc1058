/*
 * Plain scripts and Slurm jobs without an engine.
 *   - A shell script a user starts (from a shell, sudo, ssh, tmux, a program
 *     such as a Python driver, or as the command of `tracer run`: script_run.c
 *     says which) is a run; each of its direct children is a step,
 *     from its fork: a subshell `( ... )` or a `| while read` loop that never
 *     execs holds the tools it runs.
 *   - A Slurm job (from its cgroup path) is a run of its own; each job step
 *     (batch, extern, 0, 1, ...) is a step.
 */
#include <stdio.h>
#include <string.h>

#include "aggregator/correlate/engines.h"
#include "common/strutil.h"

static bool script_run(const struct process_view *v, char *pipeline, size_t size)
{
	/* bash x.sh: the program is the script; bash -c '...' is not a script. */
	if (!tool_is_shell(v->tool->interpreter) || !strcmp(v->tool->program, v->tool->interpreter))
		return false;
	/* Here-documents and process substitution (bash /dev/fd/3) are not scripts. */
	for (size_t i = 1; i < v->argc; i++)
		if (!strncmp(v->argv[i], "/dev/", 5) || !strncmp(v->argv[i], "/proc/", 6))
			return false;
	copy_string(pipeline, size, v->tool->program);
	char *dot = strrchr(pipeline, '.');
	if (dot && dot != pipeline && (!strcmp(dot, ".sh") || !strcmp(dot, ".bash")))
		*dot = '\0';
	return true;
}

static bool script_step(const struct process_view *v, unsigned seq, struct step_spec *out)
{
	return direct_child_step(v, seq, "script-step", out);
}

static bool slurm_run(const struct process_view *v, char *pipeline, size_t size)
{
	if (!v->cgroup || !v->cgroup->slurm_job[0])
		return false;
	snprintf(pipeline, size, "slurm");
	return true;
}

static bool slurm_step(const struct process_view *v, unsigned seq, struct step_spec *out)
{
	if (!v->cgroup || !v->cgroup->slurm_job[0] || !v->cgroup->slurm_step[0])
		return false;
	snprintf(out->kind, sizeof(out->kind), "slurm-step");
	snprintf(out->key, sizeof(out->key), "%s.%s", v->cgroup->slurm_job, v->cgroup->slurm_step);
	snprintf(out->name, sizeof(out->name), "step %s", v->cgroup->slurm_step);
	return true;
}

const struct engine engine_script = {"script", script_run, script_step, true};
const struct engine engine_slurm = {"slurm", slurm_run, slurm_step, false};
