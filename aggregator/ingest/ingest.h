/*
 * Applying validated events to the process table and the runs, and writing
 * what changed. Nothing here touches the socket; receiver.c feeds frames in
 * and commits. internal.h maps the files of ingest/.
 */
#ifndef TRACER_INGEST_H
#define TRACER_INGEST_H

#include <stdbool.h>
#include <stdint.h>

#include "aggregator/correlate/correlate.h"
#include "aggregator/insight/insight.h"
#include "aggregator/model/proctable.h"
#include "aggregator/store/store.h"
#include "common/vec.h"
#include "tracer.pb-c.h"

enum ingest_scope {
	SCOPE_ALL,  /* every process on the host */
	SCOPE_RUNS, /* only processes that belong to a run */
};

struct file_update {
	int64_t id;
	uint32_t count, failed, flags;
};

struct pending_sample {
	struct sample_row row;
	bool held; /* written, not queued for the shipper yet */
};

/* A process row to write at the commit, and whether it is shipped then. */
struct row_to_write {
	struct process_row *row;
	bool ship;
};

/* Records waiting for the next commit (kept until it succeeds). */
struct pending {
	VEC(struct file_row) files;
	VEC(struct file_update) file_updates;
	VEC(struct oom_row) ooms;
	VEC(struct cgroup_row) cgroups;
	VEC(struct pending_sample) samples;
	VEC(int64_t) releases; /* processes whose held samples go to the outbox */
	VEC(struct host_sample_row) hosts;
	VEC(struct energy_sample_row) energy;
	VEC(struct process_update) row_updates; /* rows written before these facts came */
	VEC(struct row_to_write) rows; /* scratch, rebuilt by each write: its rows in id order */
};

/* A process with held samples, by identity: its hold ends on time even if it idles. */
struct held_proc {
	uint32_t pid;
	bool coarse;
	uint64_t start_boot_ns;
};

struct ingest {
	struct proctable table;
	struct store *store;
	struct correlator corr;
	struct insight insight;
	enum ingest_scope scope;
	uint64_t gen; /* bumped per new collector stream */
	/* Whether a `tracer run` lookalike's exe is root's (path_root_only; tests
	 * give their made-up paths another answer). */
	bool (*launcher_trusted)(const char *exe);
	/* A new stream's blind window: snapshot processes started after this
	 * boot-clock time were not seen starting (0: none open). */
	uint64_t blind_since_boot_ns, blind_processes;
	/* Context of the frame being applied. */
	int64_t offset_ns;
	bool has_offset; /* offset_ns holds for boot_id (it moves only at a clock step) */
	char boot_id[33];
	char host_id[64];
	char hostname[256];
	char machine[65];	   /* the collector's uname -m */
	uint32_t memory_hierarchy; /* v1 hierarchy id of the memory controller, 0 if none */
	int64_t next_file_id;
	struct pending pending;
	struct ingest_stats stats;
	VEC(struct held_proc) held;
	/* `tracer run`'s own aggregator: only this launcher starts a run. */
	bool own_launcher;
	uint32_t own_launcher_pid;
	uint64_t own_launcher_start_boot_ns;
};

/* Queues a host sample for the next commit. */
void ingest_host_sample(struct ingest *g, const struct host_sample_row *row);

/* Tool lists may be NULL (no categories, nothing ignored); signals NULL: defaults. */
int ingest_init(struct ingest *g, struct store *store, enum ingest_scope scope,
		const char *tools_allow, const char *tools_deny,
		const struct insight_config *signals);
/* Periodic checks that need no event: stalls, steps running longer than usual. */
void ingest_tick(struct ingest *g, uint64_t now_boot_ns, int64_t now_ns);
void ingest_free(struct ingest *g);

/* Loads processes and runs a previous aggregator left running. */
int ingest_load_state(struct ingest *g);

/* A new collector started: its snapshot will say who is still alive. */
void ingest_new_generation(struct ingest *g);
/* Counts the snapshot's new processes started after since_boot_ns ... */
void ingest_begin_blind_window(struct ingest *g, uint64_t since_boot_ns);
/* ... until the snapshot is done: how many there were. */
uint64_t ingest_end_blind_window(struct ingest *g);
void ingest_set_frame_context(struct ingest *g, const Tracer__Frame *f);
void ingest_event(struct ingest *g, const Tracer__Event *ev);
/* The snapshot is complete: live entries it did not confirm are lost. */
void ingest_snapshot_done(struct ingest *g, uint64_t now_boot_ns);

/*
 * `tracer run`'s own aggregator, stopping because its launcher died: the run
 * it recorded, its command still running unwatched, ends now as unknown.
 */
void ingest_orphaned(struct ingest *g, int64_t now_epoch_ns);

/* Writes everything changed since the last commit (inside a transaction). */
int ingest_write(struct ingest *g);
/* Is anything waiting to be written? */
bool ingest_has_pending(const struct ingest *g);
/* After a successful commit: forget what was written, free old entries. */
void ingest_committed(struct ingest *g, uint64_t now_boot_ns);

#endif
