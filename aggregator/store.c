#include "aggregator/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/schema.h"
#include "common/log.h"

static const char *const process_columns =
	"id, run_id, parent_id, pid, ppid, image, start_ns, end_ns, proc_start_boot_ns, boot_id, "
	"comm, exe, argv, argv_truncated, argv_redactions, cwd, uid, gid, cgroup_id, cgroup1_id, "
	"state, exit_code, signal, core_dumped, cpu_user_ns, cpu_sys_ns, max_rss_kb, ru_maxrss_kb, "
	"rchar, wchar, syscr, syscw, read_bytes, write_bytes, cancelled_write_bytes, vol_ctxsw, "
	"invol_ctxsw, min_faults, maj_faults, from_snapshot";
#define PROCESS_COLUMN_COUNT 40

static const char sql_put_run[] =
	"INSERT OR REPLACE INTO runs (id, name, pipeline, host_id, hostname, start_ns, end_ns, "
	"exit_code, signal, command_process_id, launcher_pid, launcher_start_ns, boot_id, source) "
	"VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,'explicit')";

static const char sql_put_stream[] =
	"INSERT OR REPLACE INTO collector_stats (stream_id, boot_id, host_id, hostname, "
	"collector_pid, first_seen_ns, last_seen_ns, last_seq, watermark_boot_ns, frames_received, "
	"duplicate_frames, events_received, kernel_drops, kernel_drops_fork, kernel_drops_exec, "
	"kernel_drops_exit, kernel_drops_other, collector_drops, seq_gaps, decode_errors, "
	"snapshot_processes, final) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

static const char sql_get_stream[] =
	"SELECT boot_id, host_id, hostname, collector_pid, first_seen_ns, last_seen_ns, last_seq, "
	"watermark_boot_ns, frames_received, duplicate_frames, events_received, kernel_drops_fork, "
	"kernel_drops_exec, kernel_drops_exit, kernel_drops_other, collector_drops, seq_gaps, "
	"decode_errors, snapshot_processes, final FROM collector_stats WHERE stream_id = ?";

static const char sql_put_agg[] =
	"INSERT OR REPLACE INTO aggregator_stats (id, started_ns, updated_ns, aggregator_pid, "
	"frames_received, bad_frames, refused_peers, last_bad_frame) VALUES (?,?,?,?,?,?,?,?)";

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

int store_open(struct store *s, const char *path)
{
	char sql[2048];

	memset(s, 0, sizeof(*s));
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		log_error("cannot open database %s: %s", path,
			  s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 5000);
	/* WAL: readers (tracer show, users' SQL) never block the writer. */
	if (exec_sql(s->db, "PRAGMA journal_mode=WAL") || exec_sql(s->db, "PRAGMA synchronous=NORMAL"))
		goto fail;
	if (schema_migrate(s->db) != 0)
		goto fail;
	snprintf(sql, sizeof(sql), "INSERT OR REPLACE INTO processes (%s) VALUES (?", process_columns);
	for (int i = 1; i < PROCESS_COLUMN_COUNT; i++)
		strcat(sql, ",?");
	strcat(sql, ")");
	if (prepare(s, sql, &s->put_process) || prepare(s, sql_put_run, &s->put_run) ||
	    prepare(s, sql_put_stream, &s->put_stream) || prepare(s, sql_get_stream, &s->get_stream) ||
	    prepare(s, sql_put_agg, &s->put_agg))
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
	sqlite3_finalize(s->put_run);
	sqlite3_finalize(s->put_stream);
	sqlite3_finalize(s->get_stream);
	sqlite3_finalize(s->put_agg);
	if (s->db)
		sqlite3_close(s->db);
	memset(s, 0, sizeof(*s));
}

int store_begin(struct store *s)
{
	if (s->in_tx)
		return 0;
	if (exec_sql(s->db, "BEGIN IMMEDIATE") != 0)
		return -1;
	s->in_tx = true;
	return 0;
}

int store_commit(struct store *s)
{
	int rc;

	if (!s->in_tx)
		return 0;
	rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		log_error("commit failed: %s", sqlite3_errmsg(s->db));
		store_rollback(s);
		return rc;
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

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *v)
{
	if (v && v[0])
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
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

static int step_done(struct store *s, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE) {
		log_error("sqlite write: %s", sqlite3_errmsg(s->db));
		return rc;
	}
	return 0;
}

int store_put_process(struct store *s, const struct process_row *r)
{
	sqlite3_stmt *st = s->put_process;
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
	sqlite3_bind_int64(st, i++, r->launcher_pid);
	bind_u64(st, i++, r->launcher_start_ns);
	bind_text_or_null(st, i++, r->boot_id);
	return step_done(s, st);
}

int store_put_stream(struct store *s, const struct stream_row *r)
{
	sqlite3_stmt *st = s->put_stream;
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
	bind_u64(st, i++, r->kernel_drops_fork + r->kernel_drops_exec + r->kernel_drops_exit +
				  r->kernel_drops_other);
	bind_u64(st, i++, r->kernel_drops_fork);
	bind_u64(st, i++, r->kernel_drops_exec);
	bind_u64(st, i++, r->kernel_drops_exit);
	bind_u64(st, i++, r->kernel_drops_other);
	bind_u64(st, i++, r->collector_drops);
	bind_u64(st, i++, r->seq_gaps);
	bind_u64(st, i++, r->decode_errors);
	bind_u64(st, i++, r->snapshot_processes);
	sqlite3_bind_int(st, i++, r->final);
	return step_done(s, st);
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
	return step_done(s, st);
}

static char *dup_column(sqlite3_stmt *st, int col)
{
	const unsigned char *v = sqlite3_column_text(st, col);

	return v ? strdup((const char *)v) : NULL;
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
		struct process_row r = {0};
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
		i = PROCESS_COLUMN_COUNT - 1;
		r.from_snapshot = sqlite3_column_int(st, i) != 0;
		fn(ctx, &r);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}
