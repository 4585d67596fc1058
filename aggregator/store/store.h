/*
 * SQLite storage. Rows are always written whole (INSERT OR REPLACE by id), so
 * a transaction that fails (disk full, I/O error) can be retried later from
 * the in-memory state with the same result. The store knows rows, not runs,
 * steps or processes: the layers above fill the rows. internal.h maps the
 * files of store/.
 */
#ifndef TRACER_STORE_H
#define TRACER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

/*
 * Time blocked on the network: in all, then by what for (docs/schema.md).
 * One name from the protobuf Counters to the SQLite columns.
 */
#define NET_WAIT_COUNTERS(X)                                                                       \
	X(net_wait_ns)                                                                             \
	X(net_wait_recv_ns)                                                                        \
	X(net_wait_send_ns)                                                                        \
	X(net_wait_connect_ns)                                                                     \
	X(net_wait_accept_ns)                                                                      \
	X(net_wait_poll_ns)
#define NET_WAIT_FIELD(name) uint64_t name;
/* A process's I/O as the kernel accounts it (task_io_accounting), a column each. */
#define IO_COUNTERS(X)                                                                             \
	X(rchar)                                                                                   \
	X(wchar)                                                                                   \
	X(syscr)                                                                                   \
	X(syscw)                                                                                   \
	X(read_bytes)                                                                              \
	X(write_bytes)                                                                             \
	X(cancelled_write_bytes)
/* What our hooks add up for a process (bpf proc_accs) and its run delay, a column each. */
#define HOOK_COUNTERS(X)                                                                           \
	X(runq_ns)                                                                                 \
	X(iowait_ns)                                                                               \
	X(reclaim_ns)                                                                              \
	X(net_tx_bytes)                                                                            \
	X(net_rx_bytes)                                                                            \
	X(sys_file)                                                                                \
	X(sys_net)                                                                                 \
	X(sys_mem)                                                                                 \
	X(sys_proc)                                                                                \
	X(sys_other)                                                                               \
	X(sys_failed)                                                                              \
	NET_WAIT_COUNTERS(X)

struct proc_metrics {
	uint64_t cpu_user_ns, cpu_sys_ns;
	uint64_t max_rss_kb, ru_maxrss_kb;
	bool has_max_rss;
	uint64_t rchar, wchar, syscr, syscw, read_bytes, write_bytes, cancelled_write_bytes;
	uint64_t vol_ctxsw, invol_ctxsw, min_faults, maj_faults;
	uint64_t runq_ns, iowait_ns, reclaim_ns, net_tx_bytes, net_rx_bytes;
	uint64_t sys_file, sys_net, sys_mem, sys_proc, sys_other, sys_failed;
	NET_WAIT_COUNTERS(NET_WAIT_FIELD)
	/* The longest single network wait's peer: AF_INET/AF_INET6 and port (0: none). */
	uint32_t net_wait_peer_family, net_wait_peer_port;
	/* Which probe groups reported: absent ones are stored as NULL. */
	bool has_iowait, has_reclaim, has_net, has_sys, has_net_wait;
};

struct process_row {
	int64_t id;
	int64_t run_id;	   /* 0: none */
	int64_t parent_id; /* 0: unknown */
	uint32_t pid, ppid;
	uint32_t image;
	int64_t start_epoch_ns, end_epoch_ns; /* end 0 while running */
	uint64_t proc_start_boot_ns;
	char boot_id[33];
	char comm[17];
	char *exe, *argv_json, *cwd; /* owned, may be NULL */
	bool argv_truncated;
	uint32_t argv_redactions;
	bool has_ids;
	uint32_t uid, gid;
	uint64_t cgroup_id, cgroup1_id;
	const char *state; /* running, exited, exec, lost */
	bool has_exit_code, has_signal;
	int exit_code, signal;
	bool core_dumped;
	bool has_metrics;
	struct proc_metrics m;
	bool from_snapshot;
	bool oom_killed;
	uint32_t files_overflow;
	/* Killed by a signal another process sent: that process (v13); pid 0: none known. */
	uint32_t killed_by_pid;
	char killed_by_comm[48]; /* 15 bytes, each at worst U+FFFD (3 bytes) */
	/* Correlation (v3). */
	int64_t step_id, tool_id; /* 0: none */
	bool helper;
	char container_runtime[16];
	char container_id[80];
	char pod_uid[40];
	char slurm_job[32];
	char slurm_step[24];
	char systemd_unit[128];
	bool stored; /* written once (maybe in a transaction that failed): replace, not insert */
};

/*
 * Facts that came after a process's row was written for good: an exit tail's
 * CPU, or the file counts' overflow and an OOM mark. Only their columns are
 * rewritten: the row's strings are gone from memory by then.
 */
struct process_update {
	int64_t id;
	bool cpu; /* cpu_user_ns and cpu_sys_ns are set */
	uint64_t cpu_user_ns, cpu_sys_ns;
	bool late; /* files_overflow and oom_killed are set */
	uint32_t files_overflow;
	bool oom_killed;
};

struct file_row {
	int64_t id;
	int64_t process_id;
	char *path; /* owned */
	uint32_t open_flags;
	int32_t result; /* 0 or errno */
	uint32_t count, failed;
	int64_t first_epoch_ns;
	bool truncated;
};

struct oom_row {
	int64_t ts_epoch_ns;
	int64_t process_id;
	uint32_t pid;
	uint64_t proc_start_boot_ns;
	char boot_id[33];
	char comm[17];
	uint32_t uid;
	uint64_t total_vm_kb, anon_rss_kb, file_rss_kb, shmem_rss_kb;
	uint64_t cgroup_id, cgroup1_id, memcg_limit_kb, memcg_usage_kb;
	int32_t oom_score_adj;
};

struct signal_row {
	int64_t id;
	const char *kind;     /* static strings */
	const char *severity; /* info, warning, critical */
	int64_t detected_epoch_ns, at_epoch_ns;
	int64_t run_id, step_id, process_id, tool_id; /* 0: none */
	bool has_value, has_threshold;
	double value, threshold;
	const char *unit;
	char message[512];
	char details[1024]; /* JSON object, "" for none */
	bool active;
};

struct cgroup_row {
	char boot_id[33];
	uint32_t hierarchy;
	uint64_t id;
	char *controllers; /* owned, may be NULL */
	char *path;	   /* owned */
	uint32_t level;
	int64_t created_epoch_ns, removed_epoch_ns; /* 0: unknown */
};

struct sample_row {
	int64_t process_id;
	int64_t ts_epoch_ns;
	uint64_t cpu_user_ns, cpu_sys_ns, rss_kb, rchar, wchar, read_bytes, write_bytes;
	uint64_t runq_ns, iowait_ns, net_tx_bytes, net_rx_bytes, vol_ctxsw, invol_ctxsw;
	bool has_iowait, has_net;
	char state[2];
	uint32_t threads;
};

struct host_sample_row {
	int64_t ts_epoch_ns, interval_ns;
	char host_id[64];
	unsigned cpus;
	double cpu_busy_pct, cpu_user_pct, cpu_system_pct, cpu_iowait_pct, cpu_steal_pct, load1;
	uint64_t mem_total_kb, mem_available_kb, swap_used_kb;
	uint64_t disk_read_bytes, disk_write_bytes, net_rx_bytes, net_tx_bytes;
};

/* A RAPL counter as read (energy_samples). */
struct energy_sample_row {
	int64_t ts_epoch_ns;
	char host_id[64];
	uint32_t zone;
	char name[32];
	uint64_t energy_uj, max_range_uj;
	bool has_max_range;
};

/* The totals columns runs and steps share (from correlate's rollups). */
struct totals_row {
	uint32_t processes, failed;
	uint32_t images; /* every image of every process: an exec ends an image */
	uint64_t cpu_ns;
	bool has_avg_cores;
	double avg_cores;
	double peak_cores;   /* 0: unknown */
	int64_t peak_rss_kb; /* 0: unknown */
	uint64_t max_process_rss_kb;
	uint64_t rchar, wchar, read_bytes, write_bytes, net_tx_bytes, net_rx_bytes;
	uint64_t iowait_ns, runq_ns, reclaim_ns, sleep_ns;
	NET_WAIT_COUNTERS(NET_WAIT_FIELD)
};

struct run_row {
	int64_t id;
	char *name, *pipeline; /* owned */
	char host_id[64], hostname[256], boot_id[33];
	char arch[65]; /* uname -m where it ran; "" unknown */
	int64_t start_epoch_ns, end_epoch_ns;
	bool has_exit_code, has_signal;
	int exit_code, signal;
	int64_t command_process_id;
	uint32_t launcher_pid;
	uint64_t launcher_start_boot_ns;
	const char *source; /* explicit, engine, script, slurm */
	/* v3: filled from struct run when written */
	int64_t pipeline_id;
	const char *engine;
	int64_t engine_process_id;
	const char *status;
	uint32_t steps;
	struct totals_row totals;
	const char *toil_job_store; /* v16; NULL: not a Toil run */
};

struct step_row {
	int64_t id, run_id;
	const char *key, *name, *kind, *status;
	int64_t start_epoch_ns, end_epoch_ns; /* end 0 while running */
	bool has_exit_code, has_signal;
	int exit_code, signal;
	int64_t root_process_id;
	const char *container_id, *slurm_job, *slurm_step;
	struct totals_row totals;
	const char *character;
	int64_t memory_limit_kb; /* 0: none */
	double cpu_limit;	 /* 0: none */
	const char *signature;
	const char *engine_job; /* v16 */
};

/*
 * A container and the run and step that started it (schema v14): how the
 * link was made, and the launcher's side of it (its process, image, command).
 */
struct container_link_row {
	int64_t id;
	char boot_id[33];
	const char *container_id;
	char runtime[16]; /* from the cgroup path: docker, podman, containerd */
	char engine[16];  /* the CLI: docker, podman, nerdctl */
	int64_t first_process_id, first_start_epoch_ns, first_exec_epoch_ns;
	int64_t run_id, step_id, launcher_process_id; /* 0: none (ambiguous) */
	uint32_t launcher_pid;
	const char *method;	    /* argv, entrypoint, ambiguous */
	char *image, *command_json; /* owned by the caller */
	uint32_t candidates;
};

/* A CLI whose command the container's first program ran (one row per CLI). */
struct container_link_candidate {
	int64_t run_id, step_id, launcher_process_id; /* 0: none */
	uint32_t launcher_pid;
};

struct stream_row {
	char stream_id[33];
	char boot_id[33], host_id[64], hostname[256];
	uint32_t collector_pid;
	int64_t first_seen_epoch_ns, last_seen_epoch_ns;
	uint64_t last_seq, watermark_boot_ns;
	uint64_t frames_received, duplicate_frames, events_received;
	uint64_t kernel_drops; /* every type, and kernel_drops_other */
	uint64_t kernel_drops_fork, kernel_drops_exec, kernel_drops_exit, kernel_drops_other;
	uint64_t collector_drops, seq_gaps, decode_errors, snapshot_processes;
	bool final;
	char probes_json[2048];
	uint64_t samples_taken;
	/* After another stream of the same boot: the unwatched time before this one
	 * and the processes its snapshot found started in it (schema v12). */
	bool has_blind;
	uint64_t blind_ns, blind_processes;
};

/*
 * What the aggregator did with the events of well-formed frames: kept by
 * ingest, stored as they are in aggregator_stats (schema v8).
 */
struct ingest_stats {
	uint64_t events;	    /* every event of a well-formed frame (events_ingested) */
	uint64_t samples_unmatched; /* sample of a process not in the table */
	uint64_t files_unmatched;
	uint64_t lost_processes;      /* gone without an exit event */
	uint64_t unmatched_exits;     /* exit of a process never seen starting */
	uint64_t late_events;	      /* for a process that had already exited */
	uint64_t missing_parents;     /* parent not in the table */
	uint64_t oom;		      /* allocation failures: event skipped (events_skipped) */
	uint64_t clock_steps;	      /* the wall clock jumped between two frames */
	uint64_t tails_unmatched;     /* exit tail of a process not exited or unknown */
	uint64_t foreign_launchers;   /* other `tracer run`s, left to their own daemons */
	uint64_t untrusted_launchers; /* `tracer run` lookalikes not installed by root */
	uint64_t denied_images;	      /* deny-listed system programs' images, not written */
	int64_t last_clock_step_ns;
};

struct aggregator_stats_row {
	int64_t id;
	int64_t started_epoch_ns, updated_epoch_ns;
	uint32_t pid;
	uint64_t frames_received, bad_frames, refused_peers;
	char last_bad_frame[256];
	struct ingest_stats events;
};

/* Rows not written yet go in one INSERT this many at a time: per statement SQLite
 * opens a cursor per index and closes it again, a sixth of a lone row's insert. */
#define PROCESS_BATCH 15

struct param_memo;

struct store {
	sqlite3 *db;
	sqlite3_stmt *put_process, *insert_process, *insert_processes, *update_process, *put_run,
	    *put_stream, *get_stream, *put_agg;
	sqlite3_stmt *put_file, *update_file, *put_oom, *put_cgroup, *put_sample, *put_host,
	    *put_energy, *put_loss;
	sqlite3_stmt *put_step, *put_tool, *put_pipeline, *put_signal, *step_history;
	sqlite3_stmt *update_step, *update_stream; /* in place, by key (update_or_insert) */
	sqlite3_stmt *put_container_link, *put_container_candidate;
	sqlite3_stmt *begin, *commit;
	int64_t next_process_id;
	int64_t next_run_id;
	/* Rows waiting for store_flush_processes, and whether each is shipped then. */
	struct process_row *batch[PROCESS_BATCH];
	bool batch_ship[PROCESS_BATCH];
	int batch_n;
	struct param_memo *batch_params; /* what insert_processes holds bound (processes.c) */
	bool in_tx;
	struct outbox *outbox; /* NULL: shipping off */
};

/* Queue a written row for the shipper, by its key (no-ops with shipping off). */
int store_ship_process(struct store *s, int64_t process_id);
int store_ship_step(struct store *s, int64_t step_id);
int store_ship_run(struct store *s, int64_t run_id);
int store_ship_signal(struct store *s, int64_t signal_id);
int store_ship_tool(struct store *s, int64_t tool_id);
int store_ship_sample(struct store *s, int64_t process_id, int64_t ts_epoch_ns);
int store_ship_host_sample(struct store *s, int64_t ts_epoch_ns);
int store_ship_energy_sample(struct store *s, const struct energy_sample_row *r);
int store_ship_collector_stats(struct store *s, const char *stream_id);
int store_ship_batch_submission(struct store *s, int64_t submission_id);
int store_ship_batch_job(struct store *s, int64_t rowid);
/* Keeps a process's written samples from the shipper until released (the
 * outbox's sample hold; no-ops with shipping off). */
/* A process row updated after it was queued: its queued record, if still
 * there, takes the row as it is now (no-op without an outbox). */
int store_refresh_shipped_process(struct store *s, int64_t process_id);
/* The outbox's newest record id (0 with shipping off): see store_forget_step. */
int64_t store_outbox_mark(struct store *s);
/* Process rows rewritten after they were queued after `since`: the sink gets them as now. */
int store_reship_processes(struct store *s, const int64_t *ids, size_t n, int64_t since);
/* What runs now, queued as live copies (at most every few seconds: the receiver's). */
int store_ship_live(struct store *s);
/* A row taken back (forgotten) after it may have been shipped: its tombstone. The
 * store's own forget functions call these before deleting. */
int store_withdraw_process(struct store *s, int64_t process_id);
int store_withdraw_step(struct store *s, int64_t step_id);
int store_withdraw_run(struct store *s, int64_t run_id);
int store_hold_samples(struct store *s, int64_t process_id);
int store_release_samples(struct store *s, int64_t process_id);

/* Opens (creating and migrating) the database for writing. 0 or -1. */
int store_open(struct store *s, const char *path);
void store_close(struct store *s);

int store_begin(struct store *s);
/* 0, or the SQLite error code; on error the transaction is rolled back. */
int store_commit(struct store *s);
void store_rollback(struct store *s);

/* Inserts or replaces the row; sets r->stored. */
int store_put_process(struct store *s, struct process_row *r);
/*
 * The same, queued for the shipper too if ship, where a row not written yet
 * may wait for others (PROCESS_BATCH): r must stay as it is until
 * store_flush_processes, which writes what waits. On an error nothing waits.
 */
int store_write_process(struct store *s, struct process_row *r, bool ship);
int store_flush_processes(struct store *s);
/* Forgets what waits (the transaction failed and is rolled back). */
void store_drop_processes(struct store *s);
int store_put_signal(struct store *s, const struct signal_row *r);
int64_t store_max_signal_id(struct store *s);
/* Wall times of finished, successful steps named `name` in earlier runs of the
 * pipeline (not run `exclude_run`): their median and how many, newest 50. */
int store_step_history(struct store *s, int64_t pipeline_id, const char *name, int64_t exclude_run,
		       int64_t *median_ns, unsigned *count);
/* Rewrites the columns a fact that came after a process row was written sets. */
int store_update_process(struct store *s, const struct process_update *u);
/* Removes a process row (and its files, samples and sample hold) written
 * before the process turned out to be deny-listed noise. */
int store_forget_process(struct store *s, int64_t id);
int store_put_run(struct store *s, const struct run_row *r);
/* Deletes a run that never ran anything (its launcher ended before starting its command). */
int store_forget_run(struct store *s, int64_t id);
/* Deletes a step that turned out to be a script's helper: its processes
 * (rows already written, and queued for the shipper after outbox_since, the
 * outbox's mark when the step began) are outside any step, at the sink too. */
int store_forget_step(struct store *s, int64_t id, int64_t outbox_since);
int store_put_stream(struct store *s, const struct stream_row *r);
/* 1 found, 0 not found, -1 error. */
int store_get_stream(struct store *s, const char *stream_id, struct stream_row *out);
/* The latest watermark of any other stream of this boot; 0 if none. */
uint64_t store_boot_watermark(struct store *s, const char *boot_id, const char *stream_id);
int store_put_aggregator_stats(struct store *s, struct aggregator_stats_row *r);

int store_put_step(struct store *s, const struct step_row *r);
int store_put_container_link(struct store *s, const struct container_link_row *r,
			     const struct container_link_candidate *cands, size_t n);
int store_put_tool(struct store *s, int64_t id, const char *name, const char *program,
		   const char *category);
int store_put_pipeline(struct store *s, int64_t id, const char *name, int64_t first_seen_ns);
int store_put_file(struct store *s, const struct file_row *r);
int store_update_file_counts(struct store *s, int64_t id, uint32_t count, uint32_t failed,
			     uint32_t flags);
int store_put_oom(struct store *s, const struct oom_row *r);
int store_put_cgroup(struct store *s, const struct cgroup_row *r);
int store_put_sample(struct store *s, const struct sample_row *r);
int store_put_host_sample(struct store *s, const struct host_sample_row *r);
int store_put_energy_sample(struct store *s, const struct energy_sample_row *r);
int store_put_loss(struct store *s, const char *stream_id, const char *hop, const char *type,
		   uint64_t count);
int64_t store_max_id(struct store *s, const char *table);

/* Calls fn for every process row still marked running (aggregator restart). */
int store_each_running_process(struct store *s, void (*fn)(void *ctx, struct process_row *r),
			       void *ctx);

/* A run not ended yet, as stored (aggregator restart). row.name and
 * row.pipeline are the callback's to keep; source and engine point here. */
struct open_run {
	struct run_row row;
	char source[16], engine[16];
	char toil_job_store[256]; /* v16 */
};
/* Calls fn for every run not ended yet, until fn returns non-zero. */
int store_each_open_run(struct store *s, int (*fn)(void *ctx, struct open_run *r), void *ctx);

/* A step as stored (aggregator restart). */
struct stored_step {
	int64_t id, root_process_id, start_epoch_ns;
	char key[96], name[256], kind[24];
	char engine_job[128]; /* v16 */
};
/* Calls fn for every step of the run, until fn returns non-zero. */
int store_each_step_of_run(struct store *s, int64_t run_id,
			   int (*fn)(void *ctx, const struct stored_step *st), void *ctx);

/* Calls fn for every (id, name) of tools or pipelines (table), at start. */
int store_each_name(struct store *s, const char *table,
		    void (*fn)(void *ctx, int64_t id, const char *name), void *ctx);
/* Calls fn for every unified or v1-memory cgroup stored for this boot. */
int store_each_cgroup(struct store *s, const char *boot_id,
		      void (*fn)(void *ctx, uint64_t id, bool v1_memory, const char *path),
		      void *ctx);

/*
 * The wall-clock offset (epoch minus boot clock) a process started under, from
 * the row of its first image: 0 and *offset_ns set, or -1 if that row is gone.
 */
int store_first_image_offset(struct store *s, const struct process_row *r, int64_t *offset_ns);

#endif
