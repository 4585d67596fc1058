/*
 * Failure signals, computed as data arrives: each names the process, tool,
 * step and run, with the numbers that triggered it and one line for humans.
 * Thresholds are in struct insight_config (docs/insight.md).
 */
#ifndef TRACER_INSIGHT_H
#define TRACER_INSIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aggregator/model/groups.h"
#include "aggregator/model/proctable.h"
#include "aggregator/store/store.h"

struct insight_config {
	uint64_t stall_ns;	    /* alive with no CPU, I/O or children this long: stalled */
	uint64_t io_wait_min_ns;    /* a process waited on I/O at least this long ... */
	double io_wait_share;	    /* ... and for at least this share of its wall time */
	uint64_t net_wait_min_ns;   /* blocked on the network at least this long ... */
	double net_wait_share;	    /* ... and for at least this share of its wall time */
	uint64_t runq_min_ns;	    /* waited for a CPU at least this long ... */
	double runq_share;	    /* ... and for this share of its CPU + waiting time */
	uint64_t reclaim_min_ns;    /* time in direct reclaim that means memory pressure */
	double near_limit_share;    /* peak memory at this share of the cgroup limit */
	double slow_factor;	    /* a step this many times its usual wall time ... */
	uint64_t slow_min_extra_ns; /* ... and at least this much longer: slower than usual */
	unsigned slow_min_history;  /* earlier successful runs of the step needed */
};

void insight_config_defaults(struct insight_config *cfg);
/* Applies "stall-seconds=30" and the like; -1 with a reason in err. */
int insight_config_set(struct insight_config *cfg, const char *assignment, char *err,
		       size_t err_size);

struct history_entry {
	int64_t pipeline_id, run_id;
	char *name;
	int64_t median_ns; /* 0: not enough history */
	unsigned samples;
};

struct insight {
	struct insight_config cfg;
	struct store *store;
	int64_t next_id;
	/* Signals to write with the next commit (active ones stay until they end). */
	struct signal_row *pending;
	size_t n_pending, cap_pending;
	struct signal_row *active;
	size_t n_active, cap_active;
	struct history_entry *history;
	size_t n_history, cap_history;
	uint64_t raised;
	uint64_t last_sample_boot_ns; /* any sample: sampling is on */
	uint64_t tick_gen;
};

int insight_init(struct insight *in, struct store *store, const struct insight_config *cfg);
void insight_free(struct insight *in);

/* A process ended (its row is final): killed, slow I/O, CPU contention, memory pressure. */
void insight_process_exit(struct insight *in, struct proc *p, int64_t now_ns);
/* The kernel's OOM killer chose a process (p may be NULL if never seen). */
void insight_oom(struct insight *in, const struct oom_row *oom, const struct proc *p,
		 int64_t now_ns);
/* A step started with the job's identity, or was named after its main tool:
 * is it a retry of a failed attempt of the same job? */
void insight_step_named(struct insight *in, struct step *s, int64_t now_ns);
/* Step s, an earlier attempt of a job, took its retry's name: its signals
 * that are still open say the new name. */
void insight_step_renamed(struct insight *in, const struct step *s, const char *old_name);
/* A run finished: what failed it, and the verdict on its processes' kills. */
void insight_run_end(struct insight *in, struct run *r, int64_t now_ns);
/* A step finished: which tool failed it, was it slower than usual, what a retry changed. */
void insight_step_end(struct insight *in, struct step *s, int64_t now_ns);
/* Periodic: stalled processes and steps running longer than usual, while they run. */
void insight_tick(struct insight *in, struct proctable *t, struct run *runs, uint64_t now_boot_ns,
		  int64_t now_ns);
/* A process showed activity (CPU, I/O, a child): ends its stall, if any. */
void insight_activity(struct insight *in, struct proc *p, uint64_t now_boot_ns, int64_t now_ns);
/* Is a step that has run wall_ns slower than usual? Fills s if so. */
bool insight_slow(struct insight *in, struct step *st, int64_t wall_ns, struct signal_row *s);
/* The step's character from where its processes' time went. */
const char *insight_character(const struct rollup *r);

int insight_write(struct insight *in);
bool insight_has_pending(const struct insight *in);
void insight_committed(struct insight *in);

#endif
