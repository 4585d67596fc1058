#include "aggregator/store.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/correlate/groups.h"
#include "aggregator/schema.h"
#include "common/log.h"
#include "common/sqlite_writer.h"

static const char *const process_columns =
    "id, run_id, parent_id, pid, ppid, image, start_ns, end_ns, proc_start_boot_ns, boot_id, "
    "comm, exe, argv, argv_truncated, argv_redactions, cwd, uid, gid, cgroup_id, cgroup1_id, "
    "state, exit_code, signal, core_dumped, cpu_user_ns, cpu_sys_ns, max_rss_kb, ru_maxrss_kb, "
    "rchar, wchar, syscr, syscw, read_bytes, write_bytes, cancelled_write_bytes, vol_ctxsw, "
    "invol_ctxsw, min_faults, maj_faults, from_snapshot, runq_ns, iowait_ns, reclaim_ns, "
    "net_tx_bytes, net_rx_bytes, sys_file, sys_net, sys_mem, sys_proc, sys_other, sys_failed, "
    "oom_killed, files_overflow, step_id, tool_id, helper, container_runtime, container_id, "
    "pod_uid, slurm_job, slurm_step, systemd_unit";
#define PROCESS_COLUMN_COUNT 62
#define PROCESS_OOM_COLUMN 51
#define PROCESS_FROM_SNAPSHOT_COLUMN 39

static const char sql_put_run[] =
    "INSERT OR REPLACE INTO runs (id, name, pipeline, host_id, hostname, start_ns, end_ns, "
    "exit_code, signal, command_process_id, launcher_pid, launcher_start_ns, boot_id, source, "
    "pipeline_id, engine, engine_process_id, status, steps, processes, failed_processes, cpu_ns, "
    "avg_cores, peak_cores, peak_rss_kb, max_process_rss_kb, rchar, wchar, read_bytes, "
    "write_bytes, net_tx_bytes, net_rx_bytes, iowait_ns, runq_ns, reclaim_ns, sleep_ns) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

#define STEP_COLUMNS                                                                               \
	"id, run_id, key, name, kind, start_ns, end_ns, status, exit_code, signal, "               \
	"root_process_id, container_id, slurm_job, slurm_step, processes, failed_processes, "      \
	"cpu_ns, avg_cores, peak_cores, peak_rss_kb, max_process_rss_kb, rchar, wchar, "           \
	"read_bytes, write_bytes, net_tx_bytes, net_rx_bytes, iowait_ns, runq_ns, reclaim_ns, "    \
	"sleep_ns, character, memory_limit_kb, cpu_limit, signature"
#define STEP_KEY_COLUMNS 3 /* id, run_id, key: fixed for a step's life */
static const char sql_put_step[] =
    "INSERT OR REPLACE INTO steps (" STEP_COLUMNS ") "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
static const char sql_put_tool[] =
    "INSERT INTO tools (id, name, program, category) VALUES (?,?,?,?) "
    "ON CONFLICT(id) DO UPDATE SET category = excluded.category";
static const char sql_put_pipeline[] =
    "INSERT OR IGNORE INTO pipelines (id, name, first_seen_ns) VALUES (?,?,?)";

#define STREAM_COLUMNS                                                                             \
	"stream_id, boot_id, host_id, hostname, collector_pid, first_seen_ns, last_seen_ns, "      \
	"last_seq, watermark_boot_ns, frames_received, duplicate_frames, events_received, "        \
	"kernel_drops, kernel_drops_fork, kernel_drops_exec, kernel_drops_exit, "                  \
	"kernel_drops_other, collector_drops, seq_gaps, decode_errors, snapshot_processes, "       \
	"final, "                                                                                  \
	"probes, samples_taken"
static const char sql_put_stream[] = "INSERT OR REPLACE INTO collector_stats (" STREAM_COLUMNS ") "
				     "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

static const char sql_put_file[] =
    "INSERT OR REPLACE INTO files (id, process_id, path, access, created, open_flags, result, "
    "count, failed, first_ns, path_truncated) VALUES (?,?,?,?,?,?,?,?,?,?,?)";
static const char sql_update_file[] =
    "UPDATE files SET count = ?2, failed = ?3, open_flags = ?4, "
    "access = CASE ?4 & 3 WHEN 0 THEN 'r' WHEN 1 THEN 'w' ELSE 'rw' END, "
    "created = (?4 & 64) != 0 WHERE id = ?1";
static const char sql_put_oom[] =
    "INSERT INTO oom_kills (ts_ns, process_id, pid, proc_start_boot_ns, boot_id, comm, uid, "
    "total_vm_kb, anon_rss_kb, file_rss_kb, shmem_rss_kb, rss_kb, cgroup_id, cgroup1_id, "
    "memcg_limit_kb, memcg_usage_kb, oom_score_adj) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
static const char sql_put_cgroup[] =
    "INSERT INTO cgroups (boot_id, hierarchy, id, controllers, path, level, created_ns, "
    "removed_ns) VALUES (?1,?2,?3,?4,?5,?6,?7,?8) ON CONFLICT (boot_id, hierarchy, id) DO UPDATE "
    "SET controllers = coalesce(excluded.controllers, controllers), "
    "path = coalesce(excluded.path, path), level = coalesce(excluded.level, level), "
    "created_ns = coalesce(created_ns, excluded.created_ns), "
    "removed_ns = coalesce(excluded.removed_ns, removed_ns)";
static const char sql_put_sample[] =
    "INSERT OR REPLACE INTO samples (process_id, ts_ns, cpu_user_ns, cpu_sys_ns, rss_kb, rchar, "
    "wchar, read_bytes, write_bytes, runq_ns, iowait_ns, net_tx_bytes, net_rx_bytes, vol_ctxsw, "
    "invol_ctxsw, state, threads) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
static const char sql_put_host[] =
    "INSERT OR REPLACE INTO host_samples (ts_ns, interval_ns, host_id, cpus, cpu_busy_pct, "
    "cpu_user_pct, cpu_system_pct, cpu_iowait_pct, cpu_steal_pct, load1, mem_total_kb, "
    "mem_available_kb, swap_used_kb, disk_read_bytes, disk_write_bytes, net_rx_bytes, "
    "net_tx_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
static const char sql_put_loss[] =
    "INSERT OR REPLACE INTO event_loss (stream_id, hop, event_type, count) VALUES (?,?,?,?)";

static const char sql_get_stream[] =
    "SELECT boot_id, host_id, hostname, collector_pid, first_seen_ns, last_seen_ns, last_seq, "
    "watermark_boot_ns, frames_received, duplicate_frames, events_received, kernel_drops, "
    "kernel_drops_fork, kernel_drops_exec, kernel_drops_exit, kernel_drops_other, "
    "collector_drops, seq_gaps, decode_errors, snapshot_processes, final FROM collector_stats "
    "WHERE stream_id = ?";

static const char sql_put_agg[] =
    "INSERT OR REPLACE INTO aggregator_stats (id, started_ns, updated_ns, aggregator_pid, "
    "frames_received, bad_frames, refused_peers, last_bad_frame, events_ingested, "
    "samples_unmatched, files_unmatched, late_events, unmatched_exits, missing_parents, "
    "lost_processes, events_skipped, clock_steps, last_clock_step_ns) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

static int exec_sql(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		log_error("sqlite: %s: %s", sql, err ? err : "?");
		sqlite3_free(err);
		return -1;
	}
	return 0;
}

int64_t store_max_id(struct store *s, const char *table);

static int64_t max_id(sqlite3 *db, const char *table)
{
	char sql[128];
	sqlite3_stmt *st;
	int64_t v = 0;

	snprintf(sql, sizeof(sql), "SELECT coalesce(max(id), 0) FROM %s", table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int prepare(struct store *s, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK) {
		log_error("sqlite prepare: %s", sqlite3_errmsg(s->db));
		return -1;
	}
	return 0;
}

/*
 * Prepares "UPDATE table SET c = ?N, ... WHERE k1 = ?1 AND ...": the first
 * n_key of columns (a comma-separated list) name the row, the rest are
 * written; parameters are numbered as in the INSERT over the same list, so one
 * binding function serves both.
 */
static int prepare_update(struct store *s, const char *table, const char *columns, int n_key,
			  sqlite3_stmt **st)
{
	char sql[2048], set[1536] = "", where[256] = "";
	size_t set_len = 0, where_len = 0;
	int i = 1;

	for (const char *c = columns; *c; i++) {
		size_t n = strcspn(c, ",");
		char *out = i <= n_key ? where : set;
		size_t *len = i <= n_key ? &where_len : &set_len;
		size_t room = (i <= n_key ? sizeof(where) : sizeof(set)) - *len;
		int w = snprintf(out + *len, room, "%s%.*s = ?%d",
				 *len ? (i <= n_key ? " AND " : ", ") : "", (int)n, c, i);
		if (w < 0 || (size_t)w >= room)
			return -1;
		*len += (size_t)w;
		c += n;
		c += strspn(c, ", ");
	}
	if (snprintf(sql, sizeof(sql), "UPDATE %s SET %s WHERE %s", table, set, where) >=
	    (int)sizeof(sql))
		return -1;
	return prepare(s, sql, st);
}

int store_open(struct store *s, const char *path)
{
	char sql[2048], err[512];

	memset(s, 0, sizeof(*s));
	/* Memory statistics take a global mutex on every SQLite allocation; we
	 * never read them. Only possible before SQLite initialises, so a second
	 * store_open in the same process gets SQLITE_MISUSE here, harmlessly. */
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	/*
	 * NOMUTEX: only the aggregator's main thread touches the connection.
	 * WAL: readers (tracer show, users' SQL) never block the writer.
	 *
	 * temp_store=MEMORY: statements that may abort halfway (INSERT OR REPLACE)
	 * keep a statement journal of the pages they touch; on disk that was two
	 * 4 KiB writes per process in an exec storm, most of the aggregator's time.
	 *
	 * wal_autocheckpoint=4000 pages (16 MiB of WAL): each commit rewrites the
	 * same last pages of the processes table and its indexes, and a
	 * checkpoint copies a page once however often the WAL holds it. At
	 * SQLite's default of 1000, checkpoints were ~5% of the aggregator's CPU
	 * in an exec storm.
	 */
	if (sqlite_open_writer(path, SQLITE_OPEN_NOMUTEX, 5000,
			       "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
			       "PRAGMA temp_store=MEMORY; PRAGMA wal_autocheckpoint=4000; "
			       "BEGIN IMMEDIATE; COMMIT;",
			       &s->db, err, sizeof(err)) != 0) {
		log_error("cannot open database %s", err);
		goto fail;
	}
	if (schema_migrate(s->db) != 0)
		goto fail;
	snprintf(sql, sizeof(sql), "INSERT OR REPLACE INTO processes (%s) VALUES (?",
		 process_columns);
	for (int i = 1; i < PROCESS_COLUMN_COUNT; i++)
		strcat(sql, ",?");
	strcat(sql, ")");
	if (prepare(s, sql, &s->put_process))
		goto fail;
	/* The same without OR REPLACE, for rows not written yet. */
	memmove(sql + strlen("INSERT "), sql + strlen("INSERT OR REPLACE "),
		strlen(sql) - strlen("INSERT OR REPLACE ") + 1);
	if (prepare(s, sql, &s->insert_process))
		goto fail;
	if (prepare(s, sql_put_run, &s->put_run) || prepare(s, sql_put_stream, &s->put_stream) ||
	    prepare(s, sql_get_stream, &s->get_stream) || prepare(s, sql_put_agg, &s->put_agg) ||
	    prepare(s, sql_put_file, &s->put_file) ||
	    prepare(s, sql_update_file, &s->update_file) || prepare(s, sql_put_oom, &s->put_oom) ||
	    prepare(s, sql_put_cgroup, &s->put_cgroup) ||
	    prepare(s, sql_put_sample, &s->put_sample) || prepare(s, sql_put_host, &s->put_host) ||
	    prepare(s, sql_put_loss, &s->put_loss) || prepare(s, sql_put_step, &s->put_step) ||
	    prepare(s, sql_put_tool, &s->put_tool) ||
	    prepare(s, sql_put_pipeline, &s->put_pipeline) ||
	    prepare(s, "BEGIN IMMEDIATE", &s->begin) || prepare(s, "COMMIT", &s->commit) ||
	    prepare_update(s, "steps", STEP_COLUMNS, STEP_KEY_COLUMNS, &s->update_step) ||
	    prepare_update(s, "collector_stats", STREAM_COLUMNS, 1, &s->update_stream))
		goto fail;
	s->next_process_id = max_id(s->db, "processes") + 1;
	s->next_run_id = max_id(s->db, "runs") + 1;
	if (s->next_process_id <= 0 || s->next_run_id <= 0)
		goto fail;
	return 0;
fail:
	store_close(s);
	return -1;
}

void store_close(struct store *s)
{
	sqlite3_finalize(s->put_process);
	sqlite3_finalize(s->insert_process);
	sqlite3_finalize(s->put_run);
	sqlite3_finalize(s->put_stream);
	sqlite3_finalize(s->get_stream);
	sqlite3_finalize(s->put_agg);
	sqlite3_finalize(s->put_file);
	sqlite3_finalize(s->update_file);
	sqlite3_finalize(s->put_oom);
	sqlite3_finalize(s->put_cgroup);
	sqlite3_finalize(s->put_sample);
	sqlite3_finalize(s->put_host);
	sqlite3_finalize(s->put_loss);
	sqlite3_finalize(s->put_step);
	sqlite3_finalize(s->update_step);
	sqlite3_finalize(s->update_stream);
	sqlite3_finalize(s->put_tool);
	sqlite3_finalize(s->put_pipeline);
	sqlite3_finalize(s->put_signal);
	sqlite3_finalize(s->step_history);
	sqlite3_finalize(s->begin);
	sqlite3_finalize(s->commit);
	if (s->db)
		sqlite3_close(s->db);
	memset(s, 0, sizeof(*s));
}

static int run_write(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc;
}

/*
 * The same for a statement whose every parameter is bound before each step
 * (bind_process): clearing them first would be wasted work, ~1% of the
 * aggregator's instructions per process in an exec storm.
 */
static int run_bound_write(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc;
}

int store_begin(struct store *s)
{
	if (s->in_tx)
		return 0;
	if (run_write(s->begin) != SQLITE_DONE) {
		log_error("sqlite: BEGIN IMMEDIATE: %s", sqlite3_errmsg(s->db));
		return -1;
	}
	s->in_tx = true;
	return 0;
}

int store_commit(struct store *s)
{
	int rc;

	if (!s->in_tx)
		return 0;
	rc = run_write(s->commit);
	if (rc != SQLITE_DONE) {
		/* The caller says it once per episode; retries stay quiet. */
		log_debug("commit failed: %s", sqlite3_errmsg(s->db));
		store_rollback(s);
		return rc == SQLITE_OK ? SQLITE_ERROR : rc;
	}
	s->in_tx = false;
	return 0;
}

void store_rollback(struct store *s)
{
	if (sqlite3_get_autocommit(s->db) == 0)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	s->in_tx = false;
}

/* SQLITE_STATIC: every write steps right after binding and clears its bindings
 * (run_write), so the caller's strings outlive SQLite's use of them; copying
 * each one was a measurable share of a row write. */
static void bind_text_or_null(sqlite3_stmt *st, int i, const char *v)
{
	if (v && v[0])
		sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

static void bind_id_or_null(sqlite3_stmt *st, int i, int64_t v)
{
	if (v > 0)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static void bind_u64(sqlite3_stmt *st, int i, uint64_t v)
{
	sqlite3_bind_int64(st, i, (int64_t)v);
}

/* Runs a bound write and readies the statement for the next; SQLite's result. */
static int step_done(struct store *s, sqlite3_stmt *st)
{
	int rc = run_write(st);

	if (rc != SQLITE_DONE) {
		log_error("sqlite write: %s", sqlite3_errmsg(s->db));
		return rc;
	}
	return 0;
}

/*
 * Rows rewritten at every commit (a step's rollup, a collector's counters) are
 * updated in place by their key. INSERT OR REPLACE deletes the row and adds it
 * again, which rewrites its entry in every index of the table: for a step two
 * more pages per commit. The insert (with its REPLACE semantics) runs only when
 * no row has the key yet.
 */
static int update_or_insert(struct store *s, sqlite3_stmt *update, sqlite3_stmt *insert,
			    void (*bind)(sqlite3_stmt *st, const void *row), const void *row)
{
	bind(update, row);
	int rc = step_done(s, update);
	if (rc != 0 || sqlite3_changes(s->db) > 0)
		return rc;
	bind(insert, row);
	return step_done(s, insert);
}

int store_forget_process(struct store *s, int64_t id)
{
	char sql[256];

	snprintf(
	    sql, sizeof(sql),
	    "DELETE FROM samples WHERE process_id = %lld; DELETE FROM outbox_held WHERE "
	    "process_id = %lld; DELETE FROM files WHERE process_id = %lld; DELETE FROM processes "
	    "WHERE id = %lld",
	    (long long)id, (long long)id, (long long)id, (long long)id);
	return exec_sql(s->db, sql);
}

static void bind_process(sqlite3_stmt *st, const struct process_row *r)
{
	int i = 1;

	sqlite3_bind_int64(st, i++, r->id);
	bind_id_or_null(st, i++, r->run_id);
	bind_id_or_null(st, i++, r->parent_id);
	sqlite3_bind_int64(st, i++, r->pid);
	sqlite3_bind_int64(st, i++, r->ppid);
	sqlite3_bind_int64(st, i++, r->image);
	sqlite3_bind_int64(st, i++, r->start_ns);
	bind_id_or_null(st, i++, r->end_ns);
	bind_u64(st, i++, r->proc_start_boot_ns);
	bind_text_or_null(st, i++, r->boot_id);
	bind_text_or_null(st, i++, r->comm);
	bind_text_or_null(st, i++, r->exe);
	bind_text_or_null(st, i++, r->argv_json);
	sqlite3_bind_int(st, i++, r->argv_truncated);
	sqlite3_bind_int64(st, i++, r->argv_redactions);
	bind_text_or_null(st, i++, r->cwd);
	if (r->has_ids) {
		sqlite3_bind_int64(st, i++, r->uid);
		sqlite3_bind_int64(st, i++, r->gid);
	} else {
		sqlite3_bind_null(st, i++);
		sqlite3_bind_null(st, i++);
	}
	bind_u64(st, i++, r->cgroup_id);
	bind_u64(st, i++, r->cgroup1_id);
	sqlite3_bind_text(st, i++, r->state, -1, SQLITE_STATIC);
	if (r->has_exit_code)
		sqlite3_bind_int(st, i++, r->exit_code);
	else
		sqlite3_bind_null(st, i++);
	if (r->has_signal) {
		sqlite3_bind_int(st, i++, r->signal);
		sqlite3_bind_int(st, i++, r->core_dumped);
	} else {
		sqlite3_bind_null(st, i++);
		if (r->has_exit_code)
			sqlite3_bind_int(st, i++, 0);
		else
			sqlite3_bind_null(st, i++);
	}
	if (r->has_metrics) {
		const struct proc_metrics *m = &r->m;
		bind_u64(st, i++, m->cpu_user_ns);
		bind_u64(st, i++, m->cpu_sys_ns);
		if (m->has_max_rss)
			bind_u64(st, i++, m->max_rss_kb);
		else
			sqlite3_bind_null(st, i++);
		bind_u64(st, i++, m->ru_maxrss_kb);
		bind_u64(st, i++, m->rchar);
		bind_u64(st, i++, m->wchar);
		bind_u64(st, i++, m->syscr);
		bind_u64(st, i++, m->syscw);
		bind_u64(st, i++, m->read_bytes);
		bind_u64(st, i++, m->write_bytes);
		bind_u64(st, i++, m->cancelled_write_bytes);
		bind_u64(st, i++, m->vol_ctxsw);
		bind_u64(st, i++, m->invol_ctxsw);
		bind_u64(st, i++, m->min_faults);
		bind_u64(st, i++, m->maj_faults);
	} else {
		for (int k = 0; k < 15; k++)
			sqlite3_bind_null(st, i++);
	}
	sqlite3_bind_int(st, i++, r->from_snapshot);
	if (r->has_metrics) {
		const struct proc_metrics *m = &r->m;
		uint64_t v[] = {m->runq_ns,	 m->iowait_ns, m->reclaim_ns, m->net_tx_bytes,
				m->net_rx_bytes, m->sys_file,  m->sys_net,    m->sys_mem,
				m->sys_proc,	 m->sys_other, m->sys_failed};
		bool have[] = {true,	   m->has_iowait, m->has_reclaim, m->has_net,
			       m->has_net, m->has_sys,	  m->has_sys,	  m->has_sys,
			       m->has_sys, m->has_sys,	  m->has_sys};
		for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
			if (have[k])
				bind_u64(st, i++, v[k]);
			else
				sqlite3_bind_null(st, i++);
		}
	} else {
		for (int k = 0; k < 11; k++)
			sqlite3_bind_null(st, i++);
	}
	sqlite3_bind_int(st, i++, r->oom_killed);
	sqlite3_bind_int64(st, i++, r->files_overflow);
	bind_id_or_null(st, i++, r->step_id);
	bind_id_or_null(st, i++, r->tool_id);
	sqlite3_bind_int(st, i++, r->helper);
	bind_text_or_null(st, i++, r->container_runtime);
	bind_text_or_null(st, i++, r->container_id);
	bind_text_or_null(st, i++, r->pod_uid);
	bind_text_or_null(st, i++, r->slurm_job);
	bind_text_or_null(st, i++, r->slurm_step);
	bind_text_or_null(st, i++, r->systemd_unit);
	/* run_bound_write() relies on every parameter being bound here. */
	assert(i - 1 == PROCESS_COLUMN_COUNT);
}

int store_put_process(struct store *s, struct process_row *r)
{
	if (!r->stored) {
		/*
		 * A plain INSERT needs no statement journal (INSERT OR REPLACE may
		 * delete, so SQLite keeps one): a third cheaper in an exec storm.
		 */
		bind_process(s->insert_process, r);
		int rc = run_bound_write(s->insert_process);
		if (rc == SQLITE_DONE) {
			r->stored = true;
			return 0;
		}
		if (rc != SQLITE_CONSTRAINT) {
			log_error("sqlite write: %s", sqlite3_errmsg(s->db));
			return rc;
		}
		/* Already there (a retried transaction): replace it below. */
	}
	bind_process(s->put_process, r);
	int rc = step_done(s, s->put_process);
	if (rc == 0)
		r->stored = true;
	return rc;
}

/* The rollup columns shared by runs and steps: processes .. runq_ns. */
static int bind_rollup(sqlite3_stmt *st, int i, const struct rollup *r)
{
	static const struct rollup none;

	if (!r)
		r = &none;
	sqlite3_bind_int64(st, i++, r->processes);
	sqlite3_bind_int64(st, i++, r->failed);
	bind_u64(st, i++, r->cpu_ns);
	if (r->end_ns > r->start_ns && r->start_ns)
		sqlite3_bind_double(st, i++, rollup_avg_cores(r));
	else
		sqlite3_bind_null(st, i++);
	double peak_cores = rollup_peak_cores(r);
	if (peak_cores > 0)
		sqlite3_bind_double(st, i++, peak_cores);
	else
		sqlite3_bind_null(st, i++);
	if (rollup_peak_rss(r) > 0)
		sqlite3_bind_int64(st, i++, rollup_peak_rss(r));
	else
		sqlite3_bind_null(st, i++);
	if (r->max_process_rss_kb)
		bind_u64(st, i++, r->max_process_rss_kb);
	else
		sqlite3_bind_null(st, i++);
	bind_u64(st, i++, r->rchar);
	bind_u64(st, i++, r->wchar);
	bind_u64(st, i++, r->read_bytes);
	bind_u64(st, i++, r->write_bytes);
	bind_u64(st, i++, r->net_tx);
	bind_u64(st, i++, r->net_rx);
	bind_u64(st, i++, r->iowait_ns);
	bind_u64(st, i++, r->runq_ns);
	bind_u64(st, i++, r->reclaim_ns);
	bind_u64(st, i++, r->sleep_ns);
	return i;
}

static void bind_step(sqlite3_stmt *st, const void *row)
{
	const struct step *stp = row;
	int i = 1;

	sqlite3_bind_int64(st, i++, stp->id);
	sqlite3_bind_int64(st, i++, stp->run->row.id);
	sqlite3_bind_text(st, i++, stp->key, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, i++, stp->name);
	sqlite3_bind_text(st, i++, stp->kind, -1, SQLITE_TRANSIENT);
	bind_id_or_null(st, i++, stp->r.start_ns);
	if (stp->status != GROUP_RUNNING)
		bind_id_or_null(st, i++, stp->r.end_ns);
	else
		sqlite3_bind_null(st, i++);
	sqlite3_bind_text(st, i++, group_status_name(stp->status), -1, SQLITE_STATIC);
	if (stp->has_exit_code)
		sqlite3_bind_int(st, i++, stp->exit_code);
	else
		sqlite3_bind_null(st, i++);
	if (stp->has_signal)
		sqlite3_bind_int(st, i++, stp->signal);
	else
		sqlite3_bind_null(st, i++);
	bind_id_or_null(st, i++, stp->root_process_id);
	bind_text_or_null(st, i++, stp->container_id);
	bind_text_or_null(st, i++, stp->slurm_job);
	bind_text_or_null(st, i++, stp->slurm_step);
	i = bind_rollup(st, i, &stp->r);
	bind_text_or_null(st, i++, stp->character);
	bind_id_or_null(st, i++, stp->memory_limit_kb);
	if (stp->cpu_limit > 0)
		sqlite3_bind_double(st, i++, stp->cpu_limit);
	else
		sqlite3_bind_null(st, i++);
	bind_text_or_null(st, i++, stp->signature);
}

int store_put_step(struct store *s, const struct step *stp)
{
	return update_or_insert(s, s->update_step, s->put_step, bind_step, stp);
}

int store_put_tool(struct store *s, int64_t id, const char *name, const char *program,
		   const char *category)
{
	sqlite3_stmt *st = s->put_tool;

	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, program, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, 4, category);
	return step_done(s, st);
}

int store_put_pipeline(struct store *s, int64_t id, const char *name, int64_t first_seen_ns)
{
	sqlite3_stmt *st = s->put_pipeline;

	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, first_seen_ns);
	return step_done(s, st);
}

int store_put_run(struct store *s, const struct run_row *r)
{
	sqlite3_stmt *st = s->put_run;
	int i = 1;

	sqlite3_bind_int64(st, i++, r->id);
	bind_text_or_null(st, i++, r->name);
	bind_text_or_null(st, i++, r->pipeline);
	bind_text_or_null(st, i++, r->host_id);
	bind_text_or_null(st, i++, r->hostname);
	bind_id_or_null(st, i++, r->start_ns);
	bind_id_or_null(st, i++, r->end_ns);
	if (r->has_exit_code)
		sqlite3_bind_int(st, i++, r->exit_code);
	else
		sqlite3_bind_null(st, i++);
	if (r->has_signal)
		sqlite3_bind_int(st, i++, r->signal);
	else
		sqlite3_bind_null(st, i++);
	bind_id_or_null(st, i++, r->command_process_id);
	if (r->launcher_pid) {
		sqlite3_bind_int64(st, i++, r->launcher_pid);
		bind_u64(st, i++, r->launcher_start_ns);
	} else {
		sqlite3_bind_null(st, i++);
		sqlite3_bind_null(st, i++);
	}
	bind_text_or_null(st, i++, r->boot_id);
	sqlite3_bind_text(st, i++, r->source ? r->source : "explicit", -1, SQLITE_STATIC);
	bind_id_or_null(st, i++, r->pipeline_id);
	bind_text_or_null(st, i++, r->engine);
	bind_id_or_null(st, i++, r->engine_process_id);
	bind_text_or_null(st, i++, r->status);
	sqlite3_bind_int64(st, i++, r->steps);
	(void)bind_rollup(st, i, r->rollup);
	return step_done(s, st);
}

static void bind_stream(sqlite3_stmt *st, const void *row)
{
	const struct stream_row *r = row;
	int i = 1;

	sqlite3_bind_text(st, i++, r->stream_id, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, i++, r->boot_id);
	bind_text_or_null(st, i++, r->host_id);
	bind_text_or_null(st, i++, r->hostname);
	sqlite3_bind_int64(st, i++, r->collector_pid);
	sqlite3_bind_int64(st, i++, r->first_seen_ns);
	sqlite3_bind_int64(st, i++, r->last_seen_ns);
	bind_u64(st, i++, r->last_seq);
	bind_u64(st, i++, r->watermark_boot_ns);
	bind_u64(st, i++, r->frames_received);
	bind_u64(st, i++, r->duplicate_frames);
	bind_u64(st, i++, r->events_received);
	bind_u64(st, i++, r->kernel_drops);
	bind_u64(st, i++, r->kernel_drops_fork);
	bind_u64(st, i++, r->kernel_drops_exec);
	bind_u64(st, i++, r->kernel_drops_exit);
	bind_u64(st, i++, r->kernel_drops_other);
	bind_u64(st, i++, r->collector_drops);
	bind_u64(st, i++, r->seq_gaps);
	bind_u64(st, i++, r->decode_errors);
	bind_u64(st, i++, r->snapshot_processes);
	sqlite3_bind_int(st, i++, r->final);
	bind_text_or_null(st, i++, r->probes_json);
	bind_u64(st, i++, r->samples_taken);
}

int store_put_stream(struct store *s, const struct stream_row *r)
{
	return update_or_insert(s, s->update_stream, s->put_stream, bind_stream, r);
}

static void copy_column(sqlite3_stmt *st, int col, char *out, size_t size)
{
	const unsigned char *v = sqlite3_column_text(st, col);

	snprintf(out, size, "%s", v ? (const char *)v : "");
}

int store_get_stream(struct store *s, const char *stream_id, struct stream_row *r)
{
	sqlite3_stmt *st = s->get_stream;
	int rc, i = 0;

	sqlite3_bind_text(st, 1, stream_id, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		memset(r, 0, sizeof(*r));
		snprintf(r->stream_id, sizeof(r->stream_id), "%s", stream_id);
		copy_column(st, i++, r->boot_id, sizeof(r->boot_id));
		copy_column(st, i++, r->host_id, sizeof(r->host_id));
		copy_column(st, i++, r->hostname, sizeof(r->hostname));
		r->collector_pid = (uint32_t)sqlite3_column_int64(st, i++);
		r->first_seen_ns = sqlite3_column_int64(st, i++);
		r->last_seen_ns = sqlite3_column_int64(st, i++);
		r->last_seq = (uint64_t)sqlite3_column_int64(st, i++);
		r->watermark_boot_ns = (uint64_t)sqlite3_column_int64(st, i++);
		r->frames_received = (uint64_t)sqlite3_column_int64(st, i++);
		r->duplicate_frames = (uint64_t)sqlite3_column_int64(st, i++);
		r->events_received = (uint64_t)sqlite3_column_int64(st, i++);
		r->kernel_drops = (uint64_t)sqlite3_column_int64(st, i++);
		r->kernel_drops_fork = (uint64_t)sqlite3_column_int64(st, i++);
		r->kernel_drops_exec = (uint64_t)sqlite3_column_int64(st, i++);
		r->kernel_drops_exit = (uint64_t)sqlite3_column_int64(st, i++);
		r->kernel_drops_other = (uint64_t)sqlite3_column_int64(st, i++);
		r->collector_drops = (uint64_t)sqlite3_column_int64(st, i++);
		r->seq_gaps = (uint64_t)sqlite3_column_int64(st, i++);
		r->decode_errors = (uint64_t)sqlite3_column_int64(st, i++);
		r->snapshot_processes = (uint64_t)sqlite3_column_int64(st, i++);
		r->final = sqlite3_column_int(st, i++) != 0;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : -1;
}

int store_put_aggregator_stats(struct store *s, struct aggregator_stats_row *r)
{
	sqlite3_stmt *st = s->put_agg;
	int i = 1;

	if (r->id == 0)
		r->id = max_id(s->db, "aggregator_stats") + 1;
	sqlite3_bind_int64(st, i++, r->id);
	sqlite3_bind_int64(st, i++, r->started_ns);
	sqlite3_bind_int64(st, i++, r->updated_ns);
	sqlite3_bind_int64(st, i++, r->pid);
	bind_u64(st, i++, r->frames_received);
	bind_u64(st, i++, r->bad_frames);
	bind_u64(st, i++, r->refused_peers);
	bind_text_or_null(st, i++, r->last_bad_frame);
	bind_u64(st, i++, r->events.events);
	bind_u64(st, i++, r->events.samples_unmatched);
	bind_u64(st, i++, r->events.files_unmatched);
	bind_u64(st, i++, r->events.late_events);
	bind_u64(st, i++, r->events.unmatched_exits);
	bind_u64(st, i++, r->events.missing_parents);
	bind_u64(st, i++, r->events.lost_processes);
	bind_u64(st, i++, r->events.oom);
	bind_u64(st, i++, r->events.clock_steps);
	if (r->events.clock_steps)
		sqlite3_bind_int64(st, i++, r->events.last_clock_step_ns);
	else
		sqlite3_bind_null(st, i++);
	return step_done(s, st);
}

int64_t store_max_id(struct store *s, const char *table)
{
	return max_id(s->db, table);
}

static const char *access_of(uint32_t flags)
{
	switch (flags & 3) {
	case 0:
		return "r";
	case 1:
		return "w";
	default:
		return "rw";
	}
}

int store_put_file(struct store *s, const struct file_row *r)
{
	sqlite3_stmt *st = s->put_file;
	int i = 1;

	sqlite3_bind_int64(st, i++, r->id);
	sqlite3_bind_int64(st, i++, r->process_id);
	sqlite3_bind_text(st, i++, r->path ? r->path : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, i++, access_of(r->open_flags), -1, SQLITE_STATIC);
	sqlite3_bind_int(st, i++, (r->open_flags & 0100) != 0);
	sqlite3_bind_int64(st, i++, r->open_flags);
	sqlite3_bind_int(st, i++, r->result);
	sqlite3_bind_int64(st, i++, r->count);
	sqlite3_bind_int64(st, i++, r->failed);
	sqlite3_bind_int64(st, i++, r->first_ns);
	sqlite3_bind_int(st, i++, r->truncated);
	return step_done(s, st);
}

int store_update_file_counts(struct store *s, int64_t id, uint32_t count, uint32_t failed,
			     uint32_t flags)
{
	sqlite3_stmt *st = s->update_file;

	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, count);
	sqlite3_bind_int64(st, 3, failed);
	sqlite3_bind_int64(st, 4, flags);
	return step_done(s, st);
}

int store_put_oom(struct store *s, const struct oom_row *r)
{
	sqlite3_stmt *st = s->put_oom;
	int i = 1;

	sqlite3_bind_int64(st, i++, r->ts_ns);
	bind_id_or_null(st, i++, r->process_id);
	sqlite3_bind_int64(st, i++, r->pid);
	bind_u64(st, i++, r->proc_start_boot_ns);
	bind_text_or_null(st, i++, r->boot_id);
	bind_text_or_null(st, i++, r->comm);
	sqlite3_bind_int64(st, i++, r->uid);
	bind_u64(st, i++, r->total_vm_kb);
	bind_u64(st, i++, r->anon_rss_kb);
	bind_u64(st, i++, r->file_rss_kb);
	bind_u64(st, i++, r->shmem_rss_kb);
	bind_u64(st, i++, r->anon_rss_kb + r->file_rss_kb + r->shmem_rss_kb);
	bind_u64(st, i++, r->cgroup_id);
	bind_u64(st, i++, r->cgroup1_id);
	if (r->memcg_limit_kb)
		bind_u64(st, i++, r->memcg_limit_kb);
	else
		sqlite3_bind_null(st, i++);
	bind_u64(st, i++, r->memcg_usage_kb);
	sqlite3_bind_int(st, i++, r->oom_score_adj);
	return step_done(s, st);
}

int store_put_cgroup(struct store *s, const struct cgroup_row *r)
{
	sqlite3_stmt *st = s->put_cgroup;
	int i = 1;

	sqlite3_bind_text(st, i++, r->boot_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, i++, r->hierarchy);
	bind_u64(st, i++, r->id);
	bind_text_or_null(st, i++, r->controllers);
	bind_text_or_null(st, i++, r->path);
	sqlite3_bind_int64(st, i++, r->level);
	bind_id_or_null(st, i++, r->created_ns);
	bind_id_or_null(st, i++, r->removed_ns);
	return step_done(s, st);
}

int store_put_sample(struct store *s, const struct sample_row *r)
{
	sqlite3_stmt *st = s->put_sample;
	int i = 1;

	sqlite3_bind_int64(st, i++, r->process_id);
	sqlite3_bind_int64(st, i++, r->ts_ns);
	uint64_t v[] = {r->cpu_user_ns, r->cpu_sys_ns,	 r->rss_kb,	  r->rchar,
			r->wchar,	r->read_bytes,	 r->write_bytes,  r->runq_ns,
			r->iowait_ns,	r->net_tx_bytes, r->net_rx_bytes, r->vol_ctxsw,
			r->invol_ctxsw};
	bool have[] = {true, true,	    true,	true,	    true, true, true,
		       true, r->has_iowait, r->has_net, r->has_net, true, true};
	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
		if (have[k])
			bind_u64(st, i++, v[k]);
		else
			sqlite3_bind_null(st, i++);
	}
	bind_text_or_null(st, i++, r->state);
	sqlite3_bind_int64(st, i++, r->threads);
	return step_done(s, st);
}

int store_put_host_sample(struct store *s, const struct host_sample_row *r)
{
	sqlite3_stmt *st = s->put_host;
	int i = 1;

	sqlite3_bind_int64(st, i++, r->ts_ns);
	sqlite3_bind_int64(st, i++, r->interval_ns);
	bind_text_or_null(st, i++, r->host_id);
	sqlite3_bind_int64(st, i++, r->cpus);
	sqlite3_bind_double(st, i++, r->cpu_busy_pct);
	sqlite3_bind_double(st, i++, r->cpu_user_pct);
	sqlite3_bind_double(st, i++, r->cpu_system_pct);
	sqlite3_bind_double(st, i++, r->cpu_iowait_pct);
	sqlite3_bind_double(st, i++, r->cpu_steal_pct);
	sqlite3_bind_double(st, i++, r->load1);
	bind_u64(st, i++, r->mem_total_kb);
	bind_u64(st, i++, r->mem_available_kb);
	bind_u64(st, i++, r->swap_used_kb);
	bind_u64(st, i++, r->disk_read_bytes);
	bind_u64(st, i++, r->disk_write_bytes);
	bind_u64(st, i++, r->net_rx_bytes);
	bind_u64(st, i++, r->net_tx_bytes);
	return step_done(s, st);
}

int store_put_loss(struct store *s, const char *stream_id, const char *hop, const char *type,
		   uint64_t count)
{
	sqlite3_stmt *st = s->put_loss;

	sqlite3_bind_text(st, 1, stream_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, hop, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, type, -1, SQLITE_TRANSIENT);
	bind_u64(st, 4, count);
	return step_done(s, st);
}

static char *dup_column(sqlite3_stmt *st, int col)
{
	const unsigned char *v = sqlite3_column_text(st, col);

	return v ? strdup((const char *)v) : NULL;
}

int store_first_image_offset(struct store *s, const struct process_row *r, int64_t *offset_ns)
{
	sqlite3_stmt *st;
	int rc = -1;

	if (sqlite3_prepare_v2(s->db,
			       "SELECT start_ns - proc_start_boot_ns FROM processes WHERE pid = ?1 "
			       "AND proc_start_boot_ns = ?2 AND boot_id IS ?3 AND image = 0",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, r->pid);
	bind_u64(st, 2, r->proc_start_boot_ns);
	bind_text_or_null(st, 3, r->boot_id);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		*offset_ns = sqlite3_column_int64(st, 0);
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

int store_each_running_process(struct store *s, void (*fn)(void *ctx, struct process_row *r),
			       void *ctx)
{
	char sql[1024];
	sqlite3_stmt *st;
	int rc;

	snprintf(sql, sizeof(sql), "SELECT %s FROM processes WHERE state = 'running'",
		 process_columns);
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct process_row r = {.stored = true};
		int i = 0;
		r.id = sqlite3_column_int64(st, i++);
		r.run_id = sqlite3_column_int64(st, i++);
		r.parent_id = sqlite3_column_int64(st, i++);
		r.pid = (uint32_t)sqlite3_column_int64(st, i++);
		r.ppid = (uint32_t)sqlite3_column_int64(st, i++);
		r.image = (uint32_t)sqlite3_column_int64(st, i++);
		r.start_ns = sqlite3_column_int64(st, i++);
		i++; /* end_ns: running rows have none */
		r.proc_start_boot_ns = (uint64_t)sqlite3_column_int64(st, i++);
		copy_column(st, i++, r.boot_id, sizeof(r.boot_id));
		copy_column(st, i++, r.comm, sizeof(r.comm));
		r.exe = dup_column(st, i++);
		r.argv_json = dup_column(st, i++);
		r.argv_truncated = sqlite3_column_int(st, i++) != 0;
		r.argv_redactions = (uint32_t)sqlite3_column_int64(st, i++);
		r.cwd = dup_column(st, i++);
		r.has_ids = sqlite3_column_type(st, i) != SQLITE_NULL;
		r.uid = (uint32_t)sqlite3_column_int64(st, i++);
		r.gid = (uint32_t)sqlite3_column_int64(st, i++);
		r.cgroup_id = (uint64_t)sqlite3_column_int64(st, i++);
		r.cgroup1_id = (uint64_t)sqlite3_column_int64(st, i++);
		r.state = "running";
		r.from_snapshot = sqlite3_column_int(st, PROCESS_FROM_SNAPSHOT_COLUMN) != 0;
		r.oom_killed = sqlite3_column_int(st, PROCESS_OOM_COLUMN) != 0;
		r.step_id = sqlite3_column_int64(st, PROCESS_OOM_COLUMN + 2);
		r.tool_id = sqlite3_column_int64(st, PROCESS_OOM_COLUMN + 3);
		r.helper = sqlite3_column_int(st, PROCESS_OOM_COLUMN + 4) != 0;
		fn(ctx, &r);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

int store_each_open_run(struct store *s, int (*fn)(void *ctx, struct open_run *r), void *ctx)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(
		s->db,
		"SELECT id, name, pipeline, host_id, hostname, boot_id, start_ns, "
		"command_process_id, launcher_pid, launcher_start_ns, source, engine, "
		"engine_process_id, pipeline_id FROM runs WHERE end_ns IS NULL",
		-1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct open_run o = {0};
		struct run_row *row = &o.row;
		row->id = sqlite3_column_int64(st, 0);
		row->name = dup_column(st, 1);
		if (!row->name)
			row->name = strdup("");
		row->pipeline = dup_column(st, 2);
		copy_column(st, 3, row->host_id, sizeof(row->host_id));
		copy_column(st, 4, row->hostname, sizeof(row->hostname));
		copy_column(st, 5, row->boot_id, sizeof(row->boot_id));
		row->start_ns = sqlite3_column_int64(st, 6);
		row->command_process_id = sqlite3_column_int64(st, 7);
		row->launcher_pid = (uint32_t)sqlite3_column_int64(st, 8);
		row->launcher_start_ns = (uint64_t)sqlite3_column_int64(st, 9);
		copy_column(st, 10, o.source, sizeof(o.source));
		copy_column(st, 11, o.engine, sizeof(o.engine));
		row->source = o.source;
		row->engine = o.engine;
		row->engine_process_id = sqlite3_column_int64(st, 12);
		row->pipeline_id = sqlite3_column_int64(st, 13);
		if (fn(ctx, &o) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

int store_each_step_of_run(struct store *s, int64_t run_id,
			   int (*fn)(void *ctx, const struct stored_step *st), void *ctx)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(s->db,
			       "SELECT id, key, name, kind, root_process_id, start_ns FROM steps "
			       "WHERE run_id = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, run_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct stored_step step = {0};
		step.id = sqlite3_column_int64(st, 0);
		copy_column(st, 1, step.key, sizeof(step.key));
		copy_column(st, 2, step.name, sizeof(step.name));
		copy_column(st, 3, step.kind, sizeof(step.kind));
		step.root_process_id = sqlite3_column_int64(st, 4);
		step.start_ns = sqlite3_column_int64(st, 5);
		if (fn(ctx, &step) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}
