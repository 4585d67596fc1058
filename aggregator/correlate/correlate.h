/*
 * Correlation: from processes to pipeline -> run -> step -> tool, using only
 * what the OS shows. Called by ingest/ as processes fork, exec, exit and are
 * sampled; owns runs, steps, tool and pipeline ids, and the cgroup id -> path
 * map used to recognise containers and Slurm jobs. internal.h maps its files.
 */
#ifndef TRACER_CORRELATE_H
#define TRACER_CORRELATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aggregator/model/groups.h"
#include "aggregator/correlate/cgroup_path.h"
#include "aggregator/correlate/tools.h"
#include "aggregator/store/store.h"
#include "common/strmap.h"

struct proc;
struct container_state;
struct batch_state;

struct name_id {
	char *name;
	int64_t id;
	bool written;
};

/* Names to ids (tools, pipelines), a growable array (common/vec.h) with a
 * hash index: a host's database gathers thousands of tool names, and every
 * exec looks its name up. */
struct name_ids {
	struct name_id *items;
	size_t n, cap;
	struct strmap index; /* name -> id */
	bool unindexed;	     /* memory ran out for the index: lookups scan */
};

struct cgroup_entry {
	struct cgroup_entry *next;
	uint64_t id;
	bool v1_memory;
	char *path;
	struct cgroup_context context; /* the path parsed once, not at every exec in it */
};

struct correlator {
	struct store *store;
	struct tool_lists lists;
	struct name_ids tools, pipelines;
	int64_t next_tool_id, next_pipeline_id, next_step_id;
	struct cgroup_entry *cgroups[1024];
	struct run *runs;
	struct batch_state *batch; /* batch submissions and jobs (batch.c); NULL: none yet */
	bool explicit_only;	   /* only `tracer run` runs (a self-hosted aggregator) */
	struct insight *insight;   /* failure signals; NULL: none */
	const char *cgroup_root;   /* where cgroupfs is mounted, for limits */
	const char *host_id, *hostname, *machine; /* of the frame being applied (ingest's) */
	char scope_cgroup[256]; /* record only this cgroup subtree ("": all; scope.c) */
	size_t scope_cgroup_len;
	uint64_t engine_runs, script_runs, slurm_runs; /* counters for the log */
	struct container_state *containers;	       /* containers.c; NULL until one is seen */
};

int correlator_init(struct correlator *c, struct store *store, const char *allow_path,
		    const char *deny_path);
void correlator_free(struct correlator *c);
/* Reloads the tool lists (SIGHUP). 0, or -1 with the reason logged. */
int correlator_reload(struct correlator *c);

/* A cgroup seen (created, or found at collector start). */
void correlate_cgroup(struct correlator *c, uint64_t id, bool v1_memory, const char *path);

/* Creates an explicit run for a `tracer run` launcher. */
struct run *correlate_explicit_run(struct correlator *c, const struct run_row *row);

/* Puts a process in a run (or, with NULL, takes it out). */
void correlate_join(struct correlator *c, struct proc *p, struct run *r);
/* After fork: the child inherits its parent's run, step and helper status. */
void correlate_fork(struct correlator *c, struct proc *child, struct proc *parent);
/* After an exec (or a snapshot): container, tool, engine run, step. */
void correlate_exec(struct correlator *c, struct proc *p, struct proc *parent, char *const *argv,
		    size_t argc, int64_t ts_ns);
/* An exec ended an image of the process: what it used counts in its step and run. */
void correlate_image_end(struct correlator *c, struct proc *p, const struct process_row *image);
/* CPU a process used after its exit event (its exit path): added to its step and run. */
void correlate_exit_tail(struct correlator *c, struct proc *p, int64_t cpu_ns);
/* At exit: rollups, step and run status. */
void correlate_exit(struct correlator *c, struct proc *p);
/*
 * A live sample: RSS and CPU rollups of the process's step and run. boot_ns is
 * the sampling pass's boot-clock time, which all samples of one pass share (a
 * wall-clock time would not: each process keeps its own clock, ingest/clock.c).
 */
void correlate_sample(struct correlator *c, struct proc *p, uint64_t boot_ns, uint64_t rss_kb,
		      uint64_t cpu_ns);
/* Should this process be written at all (not deny-listed noise)? */
bool correlate_recordable(const struct proc *p);
/* Records only the processes of this cgroup subtree (--scope-cgroup). 0, or -1
 * with the reason in err. */
int correlate_set_scope_cgroup(struct correlator *c, const char *path, char *err, size_t size);
/* Is the process in the recorded scope (its cgroups at its last fork or exec)? */
bool correlate_in_scope(const struct correlator *c, const struct process_row *r);

/* Writes changed runs, steps, new tools and pipelines (inside a transaction). */
int correlate_write(struct correlator *c);
/* After a commit: clean flags, free finished runs nobody points at. */
void correlate_committed(struct correlator *c);
bool correlate_has_pending(const struct correlator *c);
struct run *correlate_run_by_id(struct correlator *c, int64_t id);
/* A resumed process is back in its stored step (aggregator restart). */
void correlate_resume_step(struct proc *p, struct step *s);
/* A run is ending (its command's exit, or its tracer run's): the attempts of a retried
 * job take one name before the run's end judges and closes their signals. */
void correlate_run_ending(struct correlator *c, struct run *r);
/* Puts a new step first in its run's list and in the run's index by key. */
void correlate_add_step(struct run *r, struct step *s);
/* Drops a process's references to its run and step (entry being freed). */
void correlate_release(struct proc *p);

#endif
