/*
 * Batch submissions and jobs: a row per submitter and per job seen, rewritten
 * as links are made. Rare next to process rows (one per job), so each write
 * prepares its statement rather than holding one in struct store.
 */
#include "aggregator/store/batch.h"

#include "aggregator/outbox/outbox.h"
#include "aggregator/store/internal.h"
#include "common/log.h"

static const char sql_put_submission[] =
    "INSERT OR REPLACE INTO batch_submissions (id, host_id, run_id, step_id, scheduler, "
    "submitter, uid, cwd, work_dir, script, command, job_name, array_spec, waits, engine_dir, "
    "engine_rule, engine_job_id, submit_ns, jobs) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

static const char sql_put_job[] =
    "INSERT OR REPLACE INTO batch_jobs (host_id, scheduler, job_id, run_id, step_id, "
    "submission_id, link, candidates, first_process_id, first_ns, queue_wait_ns, cwd, "
    "snakefile, engine_dir, engine_rule, engine_job_id) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

/* Writes the row; the caller queues it for the shipper (each rewrite again: the newer
 * copy wins at the sink), so the fleet store holds both sides of every link. */
static int finish(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		log_error("writing %s: %s", what, sqlite3_errmsg(s->db));
		return -1;
	}
	return 0;
}

static sqlite3_stmt *statement(struct store *s, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		log_error("preparing a batch statement: %s", sqlite3_errmsg(s->db));
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

int store_put_batch_submission(struct store *s, const struct batch_submission_row *r)
{
	sqlite3_stmt *st = statement(s, sql_put_submission);
	int i = 1;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, i++, r->id);
	bind_text_or_null(st, i++, r->host_id);
	sqlite3_bind_int64(st, i++, r->run_id);
	bind_id_or_null(st, i++, r->step_id);
	sqlite3_bind_text(st, i++, r->scheduler, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, i++, r->submitter, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, i++, r->uid);
	bind_text_or_null(st, i++, r->cwd);
	bind_text_or_null(st, i++, r->work_dir);
	bind_text_or_null(st, i++, r->script);
	bind_text_or_null(st, i++, r->command);
	bind_text_or_null(st, i++, r->job_name);
	bind_text_or_null(st, i++, r->array_spec);
	sqlite3_bind_int(st, i++, r->waits);
	bind_text_or_null(st, i++, r->engine_dir);
	bind_text_or_null(st, i++, r->engine_rule);
	bind_text_or_null(st, i++, r->engine_job_id);
	sqlite3_bind_int64(st, i++, r->submit_ns);
	sqlite3_bind_int64(st, i++, r->jobs);
	if (finish(s, st, "a batch submission") != 0)
		return -1;
	return store_ship_batch_submission(s, r->id ? r->id : sqlite3_last_insert_rowid(s->db));
}

int store_put_batch_job(struct store *s, const struct batch_job_row *r)
{
	sqlite3_stmt *st = statement(s, sql_put_job);
	int i = 1;

	if (!st)
		return -1;
	sqlite3_bind_text(st, i++, r->host_id ? r->host_id : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, i++, r->scheduler, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, i++, r->job_id, -1, SQLITE_STATIC);
	bind_id_or_null(st, i++, r->run_id);
	bind_id_or_null(st, i++, r->step_id);
	bind_id_or_null(st, i++, r->submission_id);
	sqlite3_bind_text(st, i++, r->link, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, i++, r->candidates);
	bind_id_or_null(st, i++, r->first_process_id);
	sqlite3_bind_int64(st, i++, r->first_ns);
	if (r->has_queue_wait)
		sqlite3_bind_int64(st, i++, r->queue_wait_ns);
	else
		sqlite3_bind_null(st, i++);
	bind_text_or_null(st, i++, r->cwd);
	bind_text_or_null(st, i++, r->snakefile);
	bind_text_or_null(st, i++, r->engine_dir);
	bind_text_or_null(st, i++, r->engine_rule);
	bind_text_or_null(st, i++, r->engine_job_id);
	if (finish(s, st, "a batch job") != 0)
		return -1;
	/* INSERT OR REPLACE gives the row a new rowid: the one it has now. */
	return store_ship_batch_job(s, sqlite3_last_insert_rowid(s->db));
}
