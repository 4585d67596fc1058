/*
 * What the files of ingest/ share, and nothing outside ingest/ may use:
 *   ingest.c   lifecycle, event dispatch, the snapshot's end, commit bookkeeping
 *   scope.c    which processes are written (the files below call it, never ingest.c)
 *   process.c  fork, exec and exit: process entries and their image rows
 *   launch.c   runs started by a `tracer run` launcher
 *   counters.c kernel totals to per-image metrics
 *   data.c     OOM kills, files, cgroups, samples and RAPL energy counters
 *   clock.c    the wall clock of the frame and of each process
 *   hold.c     the outbox's hold on a fork child's samples until its exec
 *   write.c    the batch writer (inside the receiver's transaction)
 *   resume.c   processes, runs and steps a previous aggregator left running
 */
#ifndef TRACER_INGEST_INTERNAL_H
#define TRACER_INGEST_INTERNAL_H

#include "aggregator/ingest/ingest.h"
#include "common/timeutil.h"

/* How long exited entries stay to recognise late duplicates. */
#define EXITED_GRACE_NS (10 * NSEC_PER_SEC)
/* How long a fork child's samples wait for its exec before they are shipped
 * anyway: fork-to-exec is microseconds to milliseconds; a child that works on
 * its own for longer is a worker in its own right. */
#define SAMPLE_HOLD_NS (5 * NSEC_PER_SEC)

/* scope.c */
/* Is the process written at all (in scope, not deny-listed)? */
bool ingest_recordable(const struct ingest *g, const struct proc *p);
/* The process changed: it is written with the next commit if recorded. */
void ingest_touch(struct ingest *g, struct proc *p);

/* clock.c: the wall clock (epoch ns) of a boot-clock time. */
int64_t frame_epoch_ns(const struct ingest *g, uint64_t boot_ns);
int64_t proc_epoch_ns(const struct proc *p, uint64_t boot_ns);

/* counters.c */
struct raw_counters raw_counters_from(const Tracer__Counters *c);
/* What this image used: totals now minus totals when it started. */
void metrics_between(const struct raw_counters *end, const struct raw_counters *base,
		     struct proc_metrics *m);
/* Counters of probe groups that were off are absent: NULL, not zero. */
void metrics_set_presence(struct proc_metrics *m, const Tracer__Counters *c);

/* launch.c */
/* A `tracer run` launcher exec'ed: it starts a run. */
void launch_note_launcher(struct ingest *g, struct proc *p, char *const *argv, size_t argc);
/* The first non-daemon child of a launcher is the run's command. */
void launch_join_run(struct ingest *g, struct proc *child, struct proc *launcher);
/* p, a child of r's launcher, execs a tracer daemon: it is not r's command. */
void launch_not_the_command(struct run *r, const struct proc *p);
/* The run's command exited: the run ends with its status. */
void launch_finish_command(struct ingest *g, struct proc *p);
/* A launcher exited. Its run ended with its command; with none started it is
 * dropped, and with the command's end never seen it ends with the launcher's. */
void launch_end_launcher(struct ingest *g, struct proc *launcher);
/* A run whose launcher ended before starting a command: nothing ran, no run is kept. */
void launch_abandon(struct run *r);

/* process.c */
void on_fork(struct ingest *g, uint64_t ts_boot_ns, const Tracer__ForkEvent *f);
void on_exec(struct ingest *g, uint64_t ts_boot_ns, const Tracer__ExecEvent *x);
void on_exit_event(struct ingest *g, uint64_t ts_boot_ns, const Tracer__ExitEvent *x);
void on_exit_tail(struct ingest *g, const Tracer__ExitTailEvent *x);
void on_cwd(struct ingest *g, const Tracer__CwdEvent *x);

/* data.c */
void on_oom(struct ingest *g, uint64_t ts_boot_ns, const Tracer__OomEvent *x);
void on_file(struct ingest *g, uint64_t ts_boot_ns, const Tracer__FileEvent *x);
void on_file_counts(struct ingest *g, const Tracer__FileCountsEvent *x);
void on_cgroup(struct ingest *g, uint64_t ts_boot_ns, const Tracer__CgroupEvent *x);
void on_sample(struct ingest *g, uint64_t ts_boot_ns, const Tracer__SampleEvent *x);
void on_energy(struct ingest *g, uint64_t ts_boot_ns, const Tracer__EnergyEvent *x);

/* hold.c */
/* Whether the process is recorded is now known: its held samples are queued
 * with the next commit, or it is forgotten (samples and all) by the next write. */
void hold_settle(struct ingest *g, struct proc *p);
/* Is this sample of a fork child held until the child's exec? */
bool hold_sample(struct ingest *g, struct proc *p, uint64_t ts_boot_ns);
/* Ends the holds that are due. */
void hold_release_due(struct ingest *g, uint64_t now_boot_ns);

/* write.c */
/* Empties the queue; release also frees its arrays. */
void pending_clear(struct pending *q, bool release);

#endif
