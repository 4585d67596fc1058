/*
 * cwltool (and toil-cwl-runner's pipeline name, toil.c): the engine process
 * is the run; the .cwl workflow names the pipeline; each tool invocation the
 * engine starts is a step. (Step names appear only in the engine's log, never
 * in argv: the tool names it.)
 */
#include <stdio.h>
#include <string.h>

#include "aggregator/correlate/container_cli.h"
#include "aggregator/correlate/engines.h"
#include "common/strutil.h"

bool cwl_pipeline(const struct process_view *v, char *pipeline, size_t size)
{
	for (size_t i = 1; i < v->argc; i++) {
		size_t n = strlen(v->argv[i]);
		if (n > 4 && !strcmp(v->argv[i] + n - 4, ".cwl")) {
			pipeline_from_file(v->argv[i], v->cwd, pipeline, size);
			return true;
		}
	}
	copy_string(pipeline, size, v->tool->program);
	return true;
}

static bool cwltool_run(const struct process_view *v, char *pipeline, size_t size)
{
	if (strcmp(v->tool->program, "cwltool") != 0)
		return false;
	return cwl_pipeline(v, pipeline, size);
}

static bool child_step(const struct process_view *v, unsigned seq, struct step_spec *out,
		       const char *kind)
{
	if (!v->parent_is_engine || v->in_step)
		return false;
	/* The engine's own helpers (nodejs for expressions, docker pulls) are steps
	 * too: they are the work it did. */
	copy_string(out->kind, sizeof(out->kind), kind);
	snprintf(out->key, sizeof(out->key), "step-%u", seq);
	out->name[0] = '\0';
	return true;
}

/*
 * With a DockerRequirement cwltool runs `docker images`, `inspect`, `pull`
 * and a `docker stats` monitor per job (which it kills when the job ends)
 * beside the job's `docker run`: the engine's plumbing, like Nextflow's
 * helpers, not steps. The `docker run` is the step; its container joins it.
 */
static bool cwltool_step(const struct process_view *v, unsigned seq, struct step_spec *out)
{
	struct container_cli_args cli;

	if (v->parent_is_engine && !v->in_step &&
	    container_cli_parse(v->exe, v->argv, v->argc, &cli) && cli.verb != CLI_RUN) {
		out->helper = true;
		return false;
	}
	return child_step(v, seq, out, "cwl-step");
}

const struct engine engine_cwltool = {"cwltool", cwltool_run, cwltool_step, false};
