/*
 * Toil: the leader is the run, each job a step. The leader starts every job
 * as `/bin/sh -c '_toil_worker NAME STORE ID'` (its single-machine batch
 * system; a worker may also be started directly), where NAME is the job's
 * name (a Python workflow's function or class, `CWLJob` for a CWL tool),
 * STORE the job store every worker of the run shares and ID the job's own
 * id, kept across retries. toil-cwl-runner is known at its exec; a Python
 * workflow (`python3 flow.py JOBSTORE`, `Job.Runner.startToil`) shows Toil
 * only when its first worker starts (correlate/toil_run.c).
 */
#include <stdio.h>
#include <string.h>

#include "aggregator/correlate/engines.h"
#include "common/fileutil.h"
#include "common/strutil.h"

/* Jobs Toil runs for itself: a CWL workflow's plumbing, a Python workflow's wrappers. */
bool toil_own_job(const char *name)
{
	static const char *const own[] = {"CWLWorkflow",     "CWLScatter",    "CWLGather",
					  "ResolveIndirect", "CWLJobWrapper", "SelfJob",
					  "EncapsulatedJob"};

	for (size_t i = 0; i < sizeof(own) / sizeof(*own); i++)
		if (!strcmp(name, own[i]))
			return true;
	return false;
}

/* The words after `_toil_worker` in text (a shell's command string). */
static bool worker_words(const char *text, struct toil_worker *out)
{
	const char *at = strstr(text, "_toil_worker ");
	int n = 0;

	if (!at || (at != text && at[-1] != '/' && at[-1] != ' '))
		return false;
	n = sscanf(at + strlen("_toil_worker "), "%127s %255s %127s", out->name, out->store,
		   out->id);
	return n == 3;
}

bool toil_worker_launch(const struct process_view *v, struct toil_worker *out)
{
	memset(out, 0, sizeof(*out));
	if (v->argc >= 3 && v->tool->interpreter[0] && !strcmp(v->argv[1], "-c") &&
	    tool_is_shell(v->tool->interpreter))
		return worker_words(v->argv[2], out);
	if (strcmp(v->tool->program, "_toil_worker") != 0)
		return false;
	for (size_t i = 0; i + 3 < v->argc; i++) {
		if (strcmp(path_basename(v->argv[i]), "_toil_worker") != 0)
			continue;
		copy_string(out->name, sizeof(out->name), v->argv[i + 1]);
		copy_string(out->store, sizeof(out->store), v->argv[i + 2]);
		copy_string(out->id, sizeof(out->id), v->argv[i + 3]);
		return true;
	}
	return false;
}

static bool toil_run(const struct process_view *v, char *pipeline, size_t size)
{
	if (strcmp(v->tool->program, "toil-cwl-runner") != 0 &&
	    strcmp(v->tool->program, "toil-wdl-runner") != 0)
		return false;
	return cwl_pipeline(v, pipeline, size);
}

/* `du -s` of the job's scratch dir, run by the worker to measure its disk use. */
static bool worker_probe(const struct process_view *v)
{
	return v->parent_argv_json && strstr(v->parent_argv_json, "_toil_worker") &&
	       !strcmp(v->tool->program, "du");
}

static bool toil_step(const struct process_view *v, unsigned seq, struct step_spec *out)
{
	struct toil_worker w;

	if (worker_probe(v))
		out->helper = true;
	if (!toil_worker_launch(v, &w)) {
		/* Another child of the leader (nodejs for a CWL expression): its work. */
		if (!v->parent_is_engine || v->in_step)
			return false;
		snprintf(out->kind, sizeof(out->kind), "toil-job");
		snprintf(out->key, sizeof(out->key), "job-%u", seq);
		return true;
	}
	out->wrapper = true; /* the worker never names its step: its tool or its job does */
	if (v->in_step || !v->parent_is_engine || toil_own_job(w.name))
		return false;
	snprintf(out->kind, sizeof(out->kind), "toil-job");
	snprintf(out->key, sizeof(out->key), "job-%u", seq);
	copy_string(out->job, sizeof(out->job), w.id);
	copy_string(out->job_store, sizeof(out->job_store), w.store);
	/* A CWL tool is named by the tool it runs; a Python job by its function. */
	if (strcmp(w.name, "CWLJob") != 0)
		copy_string(out->name, sizeof(out->name), w.name);
	return true;
}

const struct engine engine_toil = {"toil", toil_run, toil_step, false};
