/*
 * SQLite storage. Rows are always written whole (INSERT OR REPLACE by id), so
 * a transaction that fails (disk full, I/O error) can be retried later from
 * the in-memory state with the same result.
 */
#ifndef TRACER_STORE_H
#define TRACER_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include <sqlite3.h>

struct proc_metrics {
	uint64_t cpu_user_ns, cpu_sys_ns;
	uint64_t max_rss_kb, ru_maxrss_kb;
	bool has_max_rss;
	uint64_t rchar, wchar, syscr, syscw, read_bytes, write_bytes, cancelled_write_bytes;
	uint64_t vol_ctxsw, invol_ctxsw, min_faults, maj_faults;
};

struct process_row {
	int64_t id;
	int64_t run_id;	   /* 0: none */
	int64_t parent_id; /* 0: unknown */
	uint32_t pid, ppid;
	uint32_t image;
	int64_t start_ns, end_ns; /* epoch; end 0 while running */
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
};

struct run_row {
	int64_t id;
	char *name, *pipeline; /* owned */
	char host_id[64], hostname[256], boot_id[33];
	int64_t start_ns, end_ns;
	bool has_exit_code, has_signal;
	int exit_code, signal;
	int64_t command_process_id;
	uint32_t launcher_pid;
	uint64_t launcher_start_ns;
};

struct stream_row {
	char stream_id[33];
	char boot_id[33], host_id[64], hostname[256];
	uint32_t collector_pid;
	int64_t first_seen_ns, last_seen_ns;
	uint64_t last_seq, watermark_boot_ns;
	uint64_t frames_received, duplicate_frames, events_received;
	uint64_t kernel_drops_fork, kernel_drops_exec, kernel_drops_exit, kernel_drops_other;
	uint64_t collector_drops, seq_gaps, decode_errors, snapshot_processes;
	bool final;
};

struct aggregator_stats_row {
	int64_t id;
	int64_t started_ns, updated_ns;
	uint32_t pid;
	uint64_t frames_received, bad_frames, refused_peers;
	char last_bad_frame[256];
};

struct store {
	sqlite3 *db;
	sqlite3_stmt *put_process, *put_run, *put_stream, *get_stream, *put_agg;
	int64_t next_process_id;
	int64_t next_run_id;
	bool in_tx;
};

/* Opens (creating and migrating) the database for writing. 0 or -1. */
int store_open(struct store *s, const char *path);
void store_close(struct store *s);

int store_begin(struct store *s);
/* 0, or the SQLite error code; on error the transaction is rolled back. */
int store_commit(struct store *s);
void store_rollback(struct store *s);

int store_put_process(struct store *s, const struct process_row *r);
int store_put_run(struct store *s, const struct run_row *r);
int store_put_stream(struct store *s, const struct stream_row *r);
/* 1 found, 0 not found, -1 error. */
int store_get_stream(struct store *s, const char *stream_id, struct stream_row *out);
int store_put_aggregator_stats(struct store *s, struct aggregator_stats_row *r);

/* Calls fn for every process row still marked running (aggregator restart). */
int store_each_running_process(struct store *s, void (*fn)(void *ctx, struct process_row *r),
			       void *ctx);

#endif
