/*
 * The live process table. A process is identified by (pid, start time), so a
 * reused PID never merges two processes. Each entry holds the row of its
 * current image; an exec in place closes that row and opens the next one.
 * Exited entries stay a short while so late duplicates (a zombie seen by the
 * /proc snapshot, a resent frame) are recognised, then are freed.
 */
#ifndef TRACER_PROCTABLE_H
#define TRACER_PROCTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aggregator/model/procslab.h"
#include "aggregator/store/store.h"

/* /proc start times have clock-tick (10 ms) resolution. */
#define START_TOLERANCE_NS 11000000ULL

/*
 * Counters whose per-image value is the difference of the kernel's running
 * totals at the image's end and start. Each has one name from the BPF record
 * to the SQLite column (bpf/events.h, proto/tracer.proto, struct proc_metrics,
 * the processes table): adding one means adding it to each of those and here,
 * or to store.h's IO_COUNTERS or HOOK_COUNTERS, which the table's columns share.
 */
#define DELTA_COUNTERS(X)                                                                          \
	X(vol_ctxsw)                                                                               \
	X(invol_ctxsw)                                                                             \
	X(min_faults)                                                                              \
	X(maj_faults)                                                                              \
	IO_COUNTERS(X)                                                                             \
	HOOK_COUNTERS(X)

/* The kernel's totals at the start of the current image (exec in place). The
 * CPU clocks are raw: cputime_adjust() splits runtime_ns like getrusage. */
struct raw_counters {
	uint64_t utime_ns, stime_ns, runtime_ns;
#define RAW_COUNTER_FIELD(name) uint64_t name;
	DELTA_COUNTERS(RAW_COUNTER_FIELD)
#undef RAW_COUNTER_FIELD
};

struct run;

/* Where the table keeps an entry. Writers: model/proctable.c, model/procslab.c. */
struct proc_links {
	struct proc *hash_next;
	struct proc *dirty_next;
	struct proc *gc_next;
	struct proc *live_prev, *live_next; /* not exited yet (see proctable.live) */
	bool dirty;
	bool in_gc;
	uint64_t exited_boot_ns; /* when it was retired */
	struct proc_slab *slab;	 /* the memory it lives in (procslab.c) */
};

/* The process's life as events tell it. Writers: ingest/. */
struct proc_life {
	bool execed; /* the current image came from an exec or the snapshot */
	bool exited;
	/* Exited and committed: the row's strings are freed, so a fact that comes
	 * later (file counts, an OOM mark) is an UPDATE of its column, never the
	 * whole row again, which would write exe, argv and cwd as NULL. */
	bool row_final;
	uint64_t snapshot_boot_ns; /* when /proc was read; 0 if never */
	int64_t epoch_offset_ns;   /* wall clock minus boot clock when first seen */
	uint64_t seen_gen;	   /* the collector stream that last mentioned it */
	struct raw_counters base;  /* totals when the current image started */
	struct run *launched;	   /* this process is a `tracer run` launcher */
	/* Samples of a fork child before its exec wait in outbox_held until the
	 * exec shows whether it is recorded; after SAMPLE_HOLD_NS they are shipped,
	 * and an exec then keeps the pre-exec image as a row of its own. */
	bool samples_held;
	bool fork_image_shipped;
	bool had_children;	       /* forked at least once */
	uint64_t parent_start_boot_ns; /* the parent's start, if its fork was seen (else 0) */
	/* The CPU clocks of the exit event plus the exit tails that came after it. */
	uint64_t exit_utime_ns, exit_stime_ns, exit_runtime_ns;
	bool has_exit_walk_seq; /* the exit event stamped its read of the totals */
	uint32_t exit_walk_seq;
	uint64_t last_sample_io;
	char *cwd;	   /* the cwd now, if it changed since exec (chdir); owned */
	int64_t *file_ids; /* files rows by the kernel's slot number */
	uint32_t n_file_ids;
};

/* What it belongs to. Writers: correlate/. */
struct proc_membership {
	struct run *run; /* its run and step (counted references) */
	struct step *step;
	bool denied; /* deny-listed system noise: kept for the tree, not written */
	/* Deny-listed, or started by such a program, inside a run (`apt-get` in a
	 * script step, and its `http` helper): written, counted, marked helper. */
	bool noise;
	bool plumbing; /* a shell running inline code, a launcher, an engine wrapper */
	bool launcher; /* timeout, time, flock, runuser ...: runs its command as its child */
	/* The tool its exec identified ("samtools sort", "align.py", "cwltool"),
	 * kept by the correlator; NULL until it execs (a fork child runs its
	 * parent's program). */
	const char *tool_name;
	bool script; /* a shell running a script file (a Slurm batch script, x.sh) */
	struct container_cli *container_cli; /* a live `docker run` (correlate/containers.c) */
	int64_t last_sample_boot_ns;
	uint64_t last_sample_cpu, last_sample_rss;
};

/* Whether it makes progress. Writers: insight/. */
struct proc_activity {
	uint64_t last_activity_boot_ns; /* last CPU, I/O, exec or fork seen */
	int64_t stall_signal_id;	/* an active `stalled` signal, 0 if none */
	uint64_t child_mark;		/* has a live child (insight tick generation) */
};

/*
 * A process entry. Identity (pid and start) is set by proctable.c when the
 * entry is added, and made precise by ingest/ when an event brings the exact
 * start. The row is the current image's: ingest/ writes what the process did,
 * correlate/ the context columns (run, step, tool, container, job, unit).
 */
struct proc {
	/* Identity and the hash link first, in one cache line: a lookup walks
	 * entries of other processes and reads nothing else of them. */
	uint32_t pid;
	bool start_coarse; /* from /proc or a fork hook without the child's start */
	uint64_t start_boot_ns;
	struct proc_links links;
	struct proc_life life;
	struct proc_membership in;
	struct proc_activity act;
	struct process_row row;
};

struct closed_row {
	struct closed_row *next;
	struct process_row row;
};

struct proctable {
	struct proc **buckets;
	size_t n_buckets;
	size_t count;
	struct proc *dirty;		/* entries whose row must be written */
	struct closed_row *closed;	/* finished images waiting to be written */
	struct proc *gc_head, *gc_tail; /* exited entries, oldest first */
	/* Entries not retired yet. The hash also holds exited ones for a grace
	 * period (an exec storm's last 10 s), which per-second scans need not visit. */
	struct proc *live;
	void (*on_free)(struct proc *p); /* drops references the entry holds */
	struct proc_slabs slabs;
};

int proctable_init(struct proctable *t);
void proctable_free(struct proctable *t);

/* Same process? Exact start times, or within a tick when one side is coarse. */
bool proc_same_start(uint64_t a, bool a_coarse, uint64_t b, bool b_coarse);
/* The entry for pid whatever its start time, or NULL. */
struct proc *proc_by_pid(struct proctable *t, uint32_t pid);
/* The entry for this identity (coarse: start may be tick-rounded), or NULL. */
struct proc *proc_find(struct proctable *t, uint32_t pid, uint64_t start_boot_ns, bool coarse);
/* Adds a new entry; the caller has removed any other entry with this pid. */
struct proc *proc_add(struct proctable *t, uint32_t pid, uint64_t start_boot_ns, bool coarse);
/* Unlinks from the hash (the entry stays valid until freed). */
void proc_unhash(struct proctable *t, struct proc *p);

void proc_mark_dirty(struct proctable *t, struct proc *p);
/* Takes the next entry off the dirty list (written: clean again), NULL once none is left. */
struct proc *proc_pop_dirty(struct proctable *t);
/* Queues the entry for freeing once it is old enough; it leaves the live list. */
void proc_retire(struct proctable *t, struct proc *p, uint64_t now_boot_ns);
/* Keeps a finished image row (takes ownership of its strings). */
int proctable_add_closed(struct proctable *t, const struct process_row *row);

/* Frees retired entries older than grace_ns that need no write. */
void proctable_gc(struct proctable *t, uint64_t now_boot_ns, uint64_t grace_ns);

void process_row_free_strings(struct process_row *r);
/* What it runs, for messages: its tool ("samtools sort", "align.py"), else its
 * executable's base name (a fork child that has not exec'd: "bash"). */
void proc_program_name(const struct proc *p, char *out, size_t size);
/* Deep copy of the owned strings. 0 or -1. */
int process_row_copy(struct process_row *dst, const struct process_row *src);

#endif
