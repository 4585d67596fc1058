/*
 * Workflow engines, recognised from what the OS shows (argv, exe, cwd, the
 * process tree, cgroup paths): never environment variables, never file
 * contents, never engine plugins. Each engine answers two questions:
 *   - is this process a run of mine (and which pipeline)?
 *   - inside my run, does this process start a step (and which)?
 */
#ifndef TRACER_ENGINES_H
#define TRACER_ENGINES_H

#include <stdbool.h>
#include <stddef.h>

#include "aggregator/correlate/cgroup_path.h"
#include "aggregator/correlate/tools.h"

#define PIPELINE_NAME_MAX 256

struct process_view {
	char *const *argv;
	size_t argc;
	const char *exe;
	const char *cwd;
	const struct tool_identity *tool;
	const struct cgroup_context *cgroup;
	bool parent_is_engine;	      /* direct child of the run's engine (or script) process */
	bool in_step;		      /* already inside a step */
	const char *parent_argv_json; /* the parent's argv as stored, or NULL */
};

struct step_spec {
	char key[96];
	char name[256]; /* "" if the engine cannot tell: the main tool names it later */
	char kind[24];
	bool helper;  /* engine instrumentation, not the step's work */
	bool wrapper; /* the engine's own task script: never names the step */
	/* The engine's id of the job (Toil's job store id) and where the engine
	 * keeps its jobs (Toil's job store): the keys that join a job to its run,
	 * and a retry to its failed attempt. "" if the engine shows none. */
	char job[128];
	char job_store[256];
	/* The step's root shows the job's identity (rule and wildcards in its
	 * command, its work dir): an attempt with the same argv and cwd is a retry. */
	bool root_is_job;
};

struct engine {
	const char *name;
	bool (*is_run)(const struct process_view *v, char *pipeline, size_t size);
	bool (*step)(const struct process_view *v, unsigned seq, struct step_spec *out);
	/* Steps start when the engine forks, not when the child execs: a subshell
	 * that never execs is a step too (plain scripts). */
	bool steps_at_fork;
};

extern const struct engine engine_snakemake, engine_nextflow, engine_cwltool, engine_toil,
    engine_script, engine_slurm, engine_make;

/* A Toil worker being started (`_toil_worker NAME STORE ID`, or `/bin/sh -c`
 * running it): its job's name, store and id (toil.c). */
struct toil_worker {
	char name[128], store[256], id[128];
};
bool toil_worker_launch(const struct process_view *v, struct toil_worker *out);
/* Toil's own bookkeeping jobs (CWLWorkflow, CWLScatter, ...): the engine's work, not a step. */
bool toil_own_job(const char *name);
/* The .cwl file in argv names the pipeline (cwl.c). */
bool cwl_pipeline(const struct process_view *v, char *pipeline, size_t size);

/* The engine whose run this process starts, or NULL. */
const struct engine *engine_detect(const struct process_view *v, char *pipeline, size_t size);
const struct engine *engine_by_name(const char *name);

/* Helpers shared by the engines. */
const char *argv_value(const struct process_view *v, const char *option);
bool argv_has(const struct process_view *v, const char *word);
/* "Snakefile" -> its directory's name; "rnaseq.nf" -> "rnaseq". */
void pipeline_from_file(const char *file, const char *cwd, char *out, size_t size);
/* A direct child of the run's engine process, not yet in a step, starts step
 * number seq of this kind, named later after its main tool (scripts, make). */
bool direct_child_step(const struct process_view *v, unsigned seq, const char *kind,
		       struct step_spec *out);

#endif
