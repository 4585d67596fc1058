/*
 * The outbox: finished records queued for the shipper, appended in the same
 * transaction that writes them (a crash never leaves one without the other).
 * Bounded: past the size limit the least valuable records go first (raw
 * samples and RAPL readings, then host samples, then processes; summaries last), each drop
 * counted in outbox_drops and logged.
 */
#ifndef TRACER_OUTBOX_H
#define TRACER_OUTBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

enum outbox_kind {
	OUTBOX_PROCESSES,
	OUTBOX_STEPS,
	OUTBOX_RUNS,
	OUTBOX_SIGNALS,
	OUTBOX_SAMPLES,
	OUTBOX_HOST_SAMPLES,
	OUTBOX_COLLECTOR_STATS,
	OUTBOX_TOOLS, /* the names and categories processes.tool_id points at */
	/* Both sides of a batch job's link, for the fleet's cross-host join. */
	OUTBOX_BATCH_SUBMISSIONS,
	OUTBOX_BATCH_JOBS,     /* a: the row's rowid (INSERT OR REPLACE gives a new one) */
	OUTBOX_ENERGY_SAMPLES, /* RAPL readings: a the zone, b the time, text the host id */
	OUTBOX_KINDS
};

struct outbox {
	sqlite3 *db;
	uint64_t max_bytes;
	/* The shipper's progress: what it has delivered is forgotten here. */
	const char *shipper_state;
	sqlite3 *state;
	int64_t forgotten_through;
	uint64_t next_check_ns;
	sqlite3_stmt *put[OUTBOX_KINDS];
	sqlite3_stmt *put_samples_of, *hold, *unhold;
	sqlite3_stmt *refresh_process;
	sqlite3_stmt *size, *trim, *count_drop;
	/* live.c: what runs now, and the tombstones of what was taken back */
	sqlite3_stmt *live_clear, *live_now[3], *live_coalesce, *live_put;
	sqlite3_stmt *withdraw, *withdraw_live, *live_forget;
	/* requeue.c: rows rewritten after they were queued */
	sqlite3_stmt *requeue, *mark;
	uint64_t queued, dropped;
};

/* Builds the statements from the tables' columns and releases what an earlier
 * aggregator held. -1 with the reason logged.
 * shipper_state: the shipper's state database (read only), or NULL. */
int outbox_open(struct outbox *o, sqlite3 *db, uint64_t max_bytes, const char *shipper_state);
void outbox_close(struct outbox *o);
/* Queue one written row by its key, at now_ns (realtime). 0, or -1 logged. */
int outbox_add_process(struct outbox *o, int64_t process_id, int64_t now_ns);
int outbox_add_step(struct outbox *o, int64_t step_id, int64_t now_ns);
int outbox_add_run(struct outbox *o, int64_t run_id, int64_t now_ns);
int outbox_add_signal(struct outbox *o, int64_t signal_id, int64_t now_ns);
int outbox_add_tool(struct outbox *o, int64_t tool_id, int64_t now_ns);
/* A process's sample, keyed by the process and the sample's time. */
int outbox_add_sample(struct outbox *o, int64_t process_id, int64_t ts_epoch_ns, int64_t now_ns);
int outbox_add_host_sample(struct outbox *o, int64_t ts_epoch_ns, int64_t now_ns);
/* A RAPL reading, keyed by its host id, zone and time (energy_samples' key). */
int outbox_add_energy_sample(struct outbox *o, const char *host_id, int64_t zone,
			     int64_t ts_epoch_ns, int64_t now_ns);
int outbox_add_collector_stats(struct outbox *o, const char *stream_id, int64_t now_ns);
int outbox_add_batch_submission(struct outbox *o, int64_t submission_id, int64_t now_ns);
/* A batch job by its rowid (INSERT OR REPLACE gives a rewritten row a new one). */
int outbox_add_batch_job(struct outbox *o, int64_t rowid, int64_t now_ns);
/* A process row changed after it was queued (a late fact): its record, if still
 * queued, takes the row as it is now. */
int outbox_refresh_process(struct outbox *o, int64_t process_id);
/* The newest record's id (0: none yet): whatever is queued later has a larger one. */
int64_t outbox_mark(struct outbox *o);
/*
 * Process rows rewritten after they were queued, which the sink must see (a
 * dissolved helper step's processes: their step id is gone). Each record queued
 * after `since` that the shipper has not taken takes the row as it is now; a
 * row without one (sent, or being sent) is queued again, a newer version.
 */
int outbox_requeue_processes(struct outbox *o, const int64_t *ids, size_t n, int64_t since,
			     int64_t now_ns);
/*
 * Samples written but not queued yet (a fork child before its exec: it may turn
 * out to be deny-listed noise, and the sink cannot take a sample back). Hold
 * marks the process in outbox_held; release queues every sample it has and
 * clears the mark (store_forget_process deletes both samples and mark).
 */
int outbox_hold_samples(struct outbox *o, int64_t process_id);
int outbox_release_samples(struct outbox *o, int64_t process_id, int64_t now_ns);
/* Queues every held sample, in its own transaction: at start (what a crashed
 * predecessor held) and at stop (a successor may never come). */
int outbox_release_held(struct outbox *o);
/*
 * What runs now (docs/shipping.md, "Live rows and tombstones"): queues a live
 * copy of each running process of a run, open step and open run whose row
 * changed since its last live copy (priority 1; a pending live copy of the
 * same row not yet sent is replaced, so one waits per row). The final row,
 * queued later, supersedes them at the sink.
 */
int outbox_add_live(struct outbox *o, int64_t now_ns);
/*
 * A row the aggregator takes back (a process forgotten as noise, a script's
 * helper step, an abandoned run), before it is deleted: a tombstone (the same
 * key, {"id": ID, "_withdrawn": 1}) is queued when the sink may hold a copy
 * (any step or run; a process of a run, or one shipped live). Its pending live
 * copy goes.
 */
int outbox_withdraw(struct outbox *o, enum outbox_kind kind, int64_t id, int64_t now_ns);
/* Inside the same transaction, after adding: forgets what the shipper delivered
 * (at most once a second) and applies the size limit. */
int outbox_trim(struct outbox *o, int64_t now_ns);
/*
 * --outbox-when: the outbox queues only while its file (the shipper's
 * configuration) exists, so a host with no shipper keeps no queue nobody
 * reads. Whether it is on now: no file named (NULL) is always on.
 */
bool outbox_gate_open(const char *when_path);
/* The table a kind ships (also its name at the sink). */
const char *outbox_table(enum outbox_kind kind);

#endif
