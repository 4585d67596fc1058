/*
 * What the files of correlate/ share, and nothing outside correlate/ may use:
 *   correlate.c  fork, exec, exit and samples: which run and step a process is in
 *   runs.c       runs: created, joined, weak or strong
 *   steps.c      steps: created, joined, named
 *   names.c      tool and pipeline ids
 *   cgroups.c    the cgroup id -> path map and what a path says
 *   scope.c      the cgroup subtree recorded (--scope-cgroup)
 *   write.c      writing changed runs, steps, tools and pipelines
 *   setup.c      start (with what the database already knows), reload, free
 * Engines (engines.c and one file per engine) and tool lists (tools.c) say
 * what a process is; these files decide what it belongs to.
 */
#ifndef TRACER_CORRELATE_INTERNAL_H
#define TRACER_CORRELATE_INTERNAL_H

#include "aggregator/correlate/cgroup_path.h"
#include "aggregator/correlate/correlate.h"
#include "aggregator/correlate/engines.h"
#include "aggregator/model/proctable.h"

/* names.c: the id of a name, a new one if unseen (0: out of memory). */
int64_t pipeline_id(struct correlator *c, const char *name);
/* The tool's id; *kept_name its name, kept as long as the correlator lives. */
int64_t tool_id(struct correlator *c, const struct tool_identity *t, const char **kept_name);
void names_load(struct correlator *c);
int names_write(struct correlator *c);
bool names_pending(const struct correlator *c);
void names_committed(struct correlator *c);
void names_free(struct correlator *c);

/* cgroups.c */
const char *cgroup_path_of(const struct correlator *c, uint64_t id, bool v1_memory);
/* Container, pod, Slurm job and unit from both hierarchies (v1 memory wins on hybrid hosts). */
void cgroup_context_of(struct correlator *c, const struct process_row *r,
		       struct cgroup_context *out);
void cgroups_load(struct correlator *c);
void cgroups_free(struct correlator *c);

/* runs.c */
struct run *new_run(struct correlator *c, enum run_source source, const char *engine,
		    const char *pipeline, struct proc *p);
/* A run recognised from a script or a Slurm job: what starts inside it with
 * stronger evidence (an engine, another job's cgroup) gets its own run. */
bool weak_run(const struct run *r);
void set_run(struct proc *p, struct run *r);
/* Is p the process (pid, start) names? */
bool same_process(uint32_t pid, uint64_t start, const struct proc *p);
void free_run(struct run *r);

/* steps.c */
/* Where the step runs, from its root's cgroups: container, Slurm job, limits. */
void step_where(struct correlator *c, struct step *s, const struct proc *root);
void set_step(struct proc *p, struct step *s);
struct step *find_step(struct run *r, const char *key);
struct step *new_step(struct correlator *c, struct run *r, const struct step_spec *spec,
		      struct proc *root);

#endif
