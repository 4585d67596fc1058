/* Runs, steps, tools and pipelines: rows the correlation layer fills. */
#include "aggregator/store/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

static const char sql_put_run[] =
    "INSERT OR REPLACE INTO runs (id, name, pipeline, host_id, hostname, start_ns, end_ns, "
    "exit_code, signal, command_process_id, launcher_pid, launcher_start_ns, boot_id, source, "
    "pipeline_id, engine, engine_process_id, status, steps, processes, failed_processes, cpu_ns, "
    "avg_cores, peak_cores, peak_rss_kb, max_process_rss_kb, rchar, wchar, read_bytes, "
    "write_bytes, net_tx_bytes, net_rx_bytes, iowait_ns, runq_ns, reclaim_ns, sleep_ns, "
    "net_wait_ns, net_wait_recv_ns, net_wait_send_ns, net_wait_connect_ns, net_wait_accept_ns, "
    "net_wait_poll_ns, images, arch, toil_job_store) "
    "VALUES "
    "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

#define STEP_COLUMNS                                                                               \
	"id, run_id, key, name, kind, start_ns, end_ns, status, exit_code, signal, "               \
	"root_process_id, container_id, slurm_job, slurm_step, processes, failed_processes, "      \
	"cpu_ns, avg_cores, peak_cores, peak_rss_kb, max_process_rss_kb, rchar, wchar, "           \
	"read_bytes, write_bytes, net_tx_bytes, net_rx_bytes, iowait_ns, runq_ns, reclaim_ns, "    \
	"sleep_ns, net_wait_ns, net_wait_recv_ns, net_wait_send_ns, net_wait_connect_ns, "         \
	"net_wait_accept_ns, net_wait_poll_ns, character, memory_limit_kb, cpu_limit, signature, " \
	"images, engine_job"
#define STEP_KEY_COLUMNS 3 /* id, run_id, key: fixed for a step's life */
static const char sql_put_step[] =
    "INSERT OR REPLACE INTO steps (" STEP_COLUMNS ") "
    "VALUES "
    "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

static const char sql_put_tool[] =
    "INSERT INTO tools (id, name, program, category) VALUES (?,?,?,?) "
    "ON CONFLICT(id) DO UPDATE SET category = excluded.category";

static const char sql_put_pipeline[] =
    "INSERT OR IGNORE INTO pipelines (id, name, first_seen_ns) VALUES (?,?,?)";

/* The totals columns shared by runs and steps: processes .. sleep_ns. */
int store_prepare_groups(struct store *s)
{
	return prepare(s, sql_put_run, &s->put_run) || prepare(s, sql_put_step, &s->put_step) ||
		       prepare(s, sql_put_tool, &s->put_tool) ||
		       prepare(s, sql_put_pipeline, &s->put_pipeline) ||
		       prepare_update(s, "steps", STEP_COLUMNS, STEP_KEY_COLUMNS, &s->update_step)
		   ? -1
		   : 0;
}

static int bind_totals(sqlite3_stmt *st, int i, const struct totals_row *r)
{
	sqlite3_bind_int64(st, i++, r->processes);
	sqlite3_bind_int64(st, i++, r->failed);
	bind_u64(st, i++, r->cpu_ns);
	bind_double_if(st, i++, r->has_avg_cores, r->avg_cores);
	bind_double_if(st, i++, r->peak_cores > 0, r->peak_cores);
	bind_i64_if(st, i++, r->peak_rss_kb > 0, r->peak_rss_kb);
	bind_i64_if(st, i++, r->max_process_rss_kb, (int64_t)r->max_process_rss_kb);
	bind_u64(st, i++, r->rchar);
	bind_u64(st, i++, r->wchar);
	bind_u64(st, i++, r->read_bytes);
	bind_u64(st, i++, r->write_bytes);
	bind_u64(st, i++, r->net_tx_bytes);
	bind_u64(st, i++, r->net_rx_bytes);
	bind_u64(st, i++, r->iowait_ns);
	bind_u64(st, i++, r->runq_ns);
	bind_u64(st, i++, r->reclaim_ns);
	bind_u64(st, i++, r->sleep_ns);
#define BIND_NET_WAIT(name) bind_u64(st, i++, r->name);
	NET_WAIT_COUNTERS(BIND_NET_WAIT)
#undef BIND_NET_WAIT
	return i;
}

static void bind_step(sqlite3_stmt *st, const void *row)
{
	const struct step_row *r = row;
	int i = 1;

	sqlite3_bind_int64(st, i++, r->id);
	sqlite3_bind_int64(st, i++, r->run_id);
	sqlite3_bind_text(st, i++, r->key, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, i++, r->name);
	sqlite3_bind_text(st, i++, r->kind, -1, SQLITE_TRANSIENT);
	bind_id_or_null(st, i++, r->start_epoch_ns);
	bind_id_or_null(st, i++, r->end_epoch_ns);
	sqlite3_bind_text(st, i++, r->status, -1, SQLITE_STATIC);
	bind_i64_if(st, i++, r->has_exit_code, r->exit_code);
	bind_i64_if(st, i++, r->has_signal, r->signal);
	bind_id_or_null(st, i++, r->root_process_id);
	bind_text_or_null(st, i++, r->container_id);
	bind_text_or_null(st, i++, r->slurm_job);
	bind_text_or_null(st, i++, r->slurm_step);
	i = bind_totals(st, i, &r->totals);
	bind_text_or_null(st, i++, r->character);
	bind_id_or_null(st, i++, r->memory_limit_kb);
	bind_double_if(st, i++, r->cpu_limit > 0, r->cpu_limit);
	bind_text_or_null(st, i++, r->signature);
	sqlite3_bind_int64(st, i++, r->totals.images);
	bind_text_or_null(st, i++, r->engine_job);
}

int store_put_step(struct store *s, const struct step_row *r)
{
	return update_or_insert(s, s->update_step, s->put_step, bind_step, r);
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

int store_forget_run(struct store *s, int64_t id)
{
	char sql[64];

	if (store_withdraw_run(s, id) != 0)
		return -1;
	snprintf(sql, sizeof(sql), "DELETE FROM runs WHERE id = %lld", (long long)id);
	return exec_sql(s->db, sql);
}

/* The ids of a step's process rows (malloc'd, *n of them). 0, or -1 logged. */
static int step_process_ids(struct store *s, int64_t step_id, int64_t **ids, size_t *n)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*ids = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT id FROM processes WHERE step_id = ?1", -1, &st,
			       NULL) != SQLITE_OK) {
		log_error("sqlite: %s", sqlite3_errmsg(s->db));
		return -1;
	}
	sqlite3_bind_int64(st, 1, step_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			size_t more = cap ? cap * 2 : 8;
			int64_t *grown = realloc(*ids, more * sizeof(**ids));
			if (!grown)
				break;
			*ids = grown;
			cap = more;
		}
		(*ids)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		log_error("sqlite: the processes of step %lld: %s", (long long)step_id,
			  rc == SQLITE_ROW ? "out of memory" : sqlite3_errmsg(s->db));
		free(*ids);
		*ids = NULL;
		return -1;
	}
	return 0;
}

int store_forget_step(struct store *s, int64_t id, int64_t outbox_since)
{
	int64_t *ids = NULL;
	size_t n = 0;
	char sql[128];

	if (store_withdraw_step(s, id) != 0 || (s->outbox && step_process_ids(s, id, &ids, &n)))
		return -1;
	snprintf(sql, sizeof(sql),
		 "UPDATE processes SET step_id = NULL WHERE step_id = %lld;"
		 "DELETE FROM steps WHERE id = %lld",
		 (long long)id, (long long)id);
	int rc = exec_sql(s->db, sql);
	/* Already queued with the step's id: the sink must not keep a step it never gets. */
	if (rc == 0 && n)
		rc = store_reship_processes(s, ids, n, outbox_since);
	free(ids);
	return rc;
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
	bind_id_or_null(st, i++, r->start_epoch_ns);
	bind_id_or_null(st, i++, r->end_epoch_ns);
	bind_i64_if(st, i++, r->has_exit_code, r->exit_code);
	bind_i64_if(st, i++, r->has_signal, r->signal);
	bind_id_or_null(st, i++, r->command_process_id);
	if (r->launcher_pid) {
		sqlite3_bind_int64(st, i++, r->launcher_pid);
		bind_u64(st, i++, r->launcher_start_boot_ns);
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
	i = bind_totals(st, i, &r->totals);
	sqlite3_bind_int64(st, i++, r->totals.images);
	bind_text_or_null(st, i++, r->arch);
	bind_text_or_null(st, i++, r->toil_job_store);
	return step_done(s, st);
}

int store_each_open_run(struct store *s, int (*fn)(void *ctx, struct open_run *r), void *ctx)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(
		s->db,
		"SELECT id, name, pipeline, host_id, hostname, boot_id, start_ns, "
		"command_process_id, launcher_pid, launcher_start_ns, source, engine, "
		"engine_process_id, pipeline_id, arch, toil_job_store FROM runs WHERE end_ns IS "
		"NULL",
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
		row->start_epoch_ns = sqlite3_column_int64(st, 6);
		row->command_process_id = sqlite3_column_int64(st, 7);
		row->launcher_pid = (uint32_t)sqlite3_column_int64(st, 8);
		row->launcher_start_boot_ns = (uint64_t)sqlite3_column_int64(st, 9);
		copy_column(st, 10, o.source, sizeof(o.source));
		copy_column(st, 11, o.engine, sizeof(o.engine));
		row->source = o.source;
		row->engine = o.engine;
		row->engine_process_id = sqlite3_column_int64(st, 12);
		row->pipeline_id = sqlite3_column_int64(st, 13);
		copy_column(st, 14, row->arch, sizeof(row->arch));
		copy_column(st, 15, o.toil_job_store, sizeof(o.toil_job_store));
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

	if (sqlite3_prepare_v2(
		s->db,
		"SELECT id, key, name, kind, root_process_id, start_ns, engine_job FROM steps "
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
		step.start_epoch_ns = sqlite3_column_int64(st, 5);
		copy_column(st, 6, step.engine_job, sizeof(step.engine_job));
		if (fn(ctx, &step) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

int store_each_name(struct store *s, const char *table,
		    void (*fn)(void *ctx, int64_t id, const char *name), void *ctx)
{
	char sql[128];
	sqlite3_stmt *st;
	int rc;

	snprintf(sql, sizeof(sql), "SELECT id, name FROM %s", table);
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *name = sqlite3_column_text(st, 1);
		if (name)
			fn(ctx, sqlite3_column_int64(st, 0), (const char *)name);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}
