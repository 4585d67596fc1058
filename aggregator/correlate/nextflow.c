/*
 * Nextflow: the launcher (nextflow run X, or the JVM running
 * nextflow.cli.Launcher run X) is the run and X names the pipeline. Each task
 * is the subtree under `bash .command.run`, whose cwd is <work>/<2 hex>/<30
 * hex>: that hash is the step key. In docker mode the task's processes run
 * in a container outside the launcher's tree, but in the same work
 * directory, which links them back. What .command.run starts besides
 * .command.sh (ps, sed, awk, date for its own tracing) is instrumentation.
 * The process name (NFCORE_X:ALIGN) appears only inside .command.run, a
 * file's contents, which we never read: the main tool names the step.
 */
#include <stdio.h>
#include <string.h>

#include "aggregator/correlate/engines.h"
#include "common/strutil.h"
#include "common/taskdir.h"

static bool is_run(const struct process_view *v, char *pipeline, size_t size)
{
	if (strcmp(v->tool->program, "nextflow") != 0)
		return false;
	for (size_t i = 1; i + 1 < v->argc; i++) {
		if (strcmp(v->argv[i], "run") != 0)
			continue;
		const char *what = v->argv[i + 1];
		size_t n = strlen(what);
		if (n > 3 && !strcmp(what + n - 3, ".nf"))
			pipeline_from_file(what, v->cwd, pipeline, size);
		else
			copy_string(pipeline, size, what); /* nf-core/rnaseq */
		return true;
	}
	return false;
}

/* The script a shell runs (bash -ue .command.sh), not an argument naming it
 * (docker run ... /bin/bash -ue <work>/.command.sh). */
static bool is_command_script(const struct process_view *v, const char *name)
{
	return v->tool && v->tool->interpreter[0] && !strcmp(v->tool->program, name);
}

static bool step(const struct process_view *v, unsigned seq, struct step_spec *out)
{
	char key[96];

	snprintf(out->kind, sizeof(out->kind), "nextflow-task");
	out->name[0] = '\0';
	out->helper = false;
	out->wrapper = is_command_script(v, ".command.run") || is_command_script(v, ".command.sh");
	if (v->in_step) {
		/* Inside a task, the wrapper (.command.run and its forked subshells) starts
		 * the work (.command.sh) and its own plumbing: ps, awk, sed, date for its
		 * tracing, tee for the logs, the docker CLI. The plumbing is instrumentation;
		 * its children inherit the mark. */
		out->helper = v->parent_argv_json && strstr(v->parent_argv_json, ".command.run") &&
			      !is_command_script(v, ".command.sh") &&
			      !is_command_script(v, ".command.run");
		return false;
	}
	if (!out->wrapper)
		return false;
	if (!nextflow_task_key(v->cwd, key, sizeof(key)))
		return false;
	copy_string(out->key, sizeof(out->key), key);
	return true;
}

const struct engine engine_nextflow = {"nextflow", is_run, step, false};
