/*
 * A Toil Python workflow (`python3 flow.py JOBSTORE`, which calls
 * Job.Runner.startToil) looks like any Python program until it starts its
 * first worker: then its leader, the worker's parent, is the run's engine.
 */
#include "aggregator/correlate/internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"

/* "flow.py" -> "flow": the leader's script names the pipeline. */
static void leader_pipeline(const struct proc *leader, char *out, size_t size)
{
	copy_string(out, size, leader->in.tool_name ? leader->in.tool_name : "toil");
	char *dot = strrchr(out, '.');
	if (dot && dot != out && !strcmp(dot, ".py"))
		*dot = '\0';
}

/* The leader of run r (an explicit or script run) is now Toil's. */
static void learn_toil(struct correlator *c, struct run *r, struct proc *leader)
{
	char pipeline[PIPELINE_NAME_MAX];

	copy_string(r->engine, sizeof(r->engine), "toil");
	if (!r->row.pipeline || r->pipeline_guessed) {
		leader_pipeline(leader, pipeline, sizeof(pipeline));
		free(r->row.pipeline);
		r->row.pipeline = strdup(pipeline);
		r->pipeline_id = pipeline_id(c, pipeline);
		r->pipeline_guessed = true;
	}
	r->dirty = true;
}

bool toil_found_leader(struct correlator *c, struct proc *p, struct proc *leader,
		       const struct process_view *v)
{
	struct toil_worker w;
	struct run *r = leader ? leader->in.run : NULL;
	char pipeline[PIPELINE_NAME_MAX];

	if (!leader || !toil_worker_launch(v, &w))
		return false;
	/* An explicit run learns the engine; an engine's run (Toil's own, or one
	 * whose step runs the workflow) keeps it; a script's or Slurm job's run
	 * gives way to it, as to any engine. */
	if (r && !weak_run(r) && r->engine[0] && strcmp(r->engine, "script") != 0)
		return false;
	if (r && r->source == RUN_EXPLICIT) {
		learn_toil(c, r, leader);
	} else {
		if (c->explicit_only)
			return false;
		leader_pipeline(leader, pipeline, sizeof(pipeline));
		r = new_run(c, RUN_ENGINE, "toil", pipeline, leader);
		if (!r)
			return false;
		c->engine_runs++;
		set_step(leader, NULL);
		set_run(leader, r);
	}
	r->engine_pid = leader->pid;
	r->engine_start_boot_ns = leader->start_boot_ns;
	r->engine_process_id = leader->row.id;
	set_step(leader, NULL); /* the leader leaves the script's step, as an engine does */
	set_step(p, NULL);
	set_run(p, r);
	return true;
}
