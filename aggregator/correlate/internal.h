/*
 * What the files of correlate/ share, and nothing outside correlate/ may use:
 *   correlate.c  fork, exec, exit and samples: which run and step a process is in
 *   exits.c      a member's exit: its step's and run's status and failed tool; Slurm's
 *                own steps and jobs ending
 *   runs.c       runs: created, joined, weak or strong
 *   steps.c      steps: created, joined, named
 *   step_work.c  script steps: named by the tool that did their work; helpers dissolved
 *   names.c      tool and pipeline ids
 *   cgroups.c    the cgroup id -> path map and what a path says
 *   scope.c      the cgroup subtree recorded (--scope-cgroup)
 *   write.c      writing changed runs, steps, tools and pipelines
 *   setup.c      start (with what the database already knows), reload, free
 *   containers.c containers joined to the run and step whose CLI started them
 *                (container_cli.c reads the CLI's argv)
 *   batch.c      batch jobs joined to the run and step that submitted them
 *   batch_argv.c what submitters' and jobs' argv say (batch.h)
 *   script_run.c which shell scripts start a run: a user's, from a shell or a program
 *   toil_run.c   a Toil Python workflow's leader, known by its first worker
 *   noise.c      deny-listed programs inside a run: kept, counted, never a step's name
 * Engines (engines.c and one file per engine) and tool lists (tools.c) say
 * what a process is; these files decide what it belongs to.
 */
#ifndef TRACER_CORRELATE_INTERNAL_H
#define TRACER_CORRELATE_INTERNAL_H

#include "aggregator/correlate/cgroup_path.h"
#include "aggregator/correlate/correlate.h"
#include "aggregator/correlate/engines.h"
#include "aggregator/model/proctable.h"

/* exits.c: p, a member of step s (run r), ended; failed: by its exit code or signal. */
void correlate_step_exit(struct correlator *c, struct step *s, struct proc *p, bool failed);
void correlate_run_exit(struct correlator *c, struct run *r, struct proc *p, bool failed);

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
/* Before writing: each dirty retry's name goes to the job's earlier attempts. */
void steps_share_retry_names(struct correlator *c, struct run *r);

/* step_work.c: a finished image (or exit tail) of p adds to its script step's tally. */
void step_work_add(struct step *s, const struct proc *p, const struct process_row *image);
void step_work_tail(struct step *s, const struct proc *p, int64_t cpu_ns);
/* The step's root exec'd this: its command line, cut, names a step no tool dominates. */
void step_note_command(struct step *s, char *const *argv, size_t argc);
/* A script step's name: its dominant tool, or its command line. Until it ends
 * (final) a step whose ended work is under 20 ms keeps the name its last exec gave. */
void step_name_by_work(struct step *s, bool final);
/* Whether an exec still names the running script step: its ended work is too little to. */
bool step_named_by_exec(const struct step *s);
/* At its root's end: a helper of a few ms that succeeded, leaving nothing running. */
bool step_is_helper(const struct step *s, const struct proc *root);
/* The helper is no step: its processes are the script's own; the store forgets it. */
void step_dissolve(struct step *s, struct proc *root);
int steps_forget_write(struct correlator *c, const struct run *r);
/* After a commit: dissolved steps no process points at are freed. */
void steps_dissolved_committed(struct run *r);
void step_free(struct step *s);

/* containers.c */
/* p exec'd: a container CLI is kept while it lives. Whether p is one that starts
 * or enters a container (run, start, exec): plumbing, never a step's name. */
bool containers_cli_exec(struct correlator *c, struct proc *p, char *const *argv, size_t argc);
/* p exec'd in a container's cgroup: the container's first program is linked to
 * the CLI that started it; later ones join the container's run and step. */
void containers_exec(struct correlator *c, struct proc *p, char *const *argv, size_t argc,
		     int64_t ts_ns);
void containers_exit(struct correlator *c, struct proc *p);
/* p's entry is being freed: a CLI entry pointing at it goes. */
void containers_release(struct proc *p);
bool containers_pending(const struct correlator *c);
int containers_write(struct correlator *c);
void containers_committed(struct correlator *c);
void containers_free(struct correlator *c);
/* batch.c: hooks of correlate.c, write.c and setup.c (batch.h says how it links). */
/* A job's process: into its job's linked run and step. true: done, nothing else decides. */
bool batch_join(struct correlator *c, struct proc *p, const struct process_view *v);
/* After an exec: a submitter in a run waits for its job; a job's process may tell its step. */
void batch_note_submitter(struct correlator *c, struct proc *p, const char *program,
			  char *const *argv, size_t argc);
void batch_note_job_process(struct correlator *c, struct proc *p, const char *program,
			    char *const *argv, size_t argc);
void batch_submitter_exit(struct correlator *c, const struct proc *p);
int batch_write(struct correlator *c);
bool batch_pending(const struct correlator *c);
void batch_committed(struct correlator *c);
void batch_free(struct correlator *c);
/* script_run.c: whether the script v, started by parent, is a run of its own. */
bool script_starts_run(const struct proc *parent, const struct process_view *v);

/* toil_run.c: p starts a Toil worker; its parent, the leader, becomes (or
 * stays) the engine of a Toil run, which p joins. Whether it did. */
bool toil_found_leader(struct correlator *c, struct proc *p, struct proc *leader,
		       const struct process_view *v);

/* noise.c: after p's exec, whether it is deny-listed noise inside a run (or
 * what such a program started), marked helper and recorded. */
void noise_after_exec(struct proc *p, const struct proc *parent);

#endif
