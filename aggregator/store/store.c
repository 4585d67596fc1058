/* Opening the database (pragmas, migration, statements), closing it, transactions. */
#include "aggregator/store/internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggregator/store/schema.h"
#include "common/log.h"
#include "common/sqlite_writer.h"

int store_open(struct store *s, const char *path)
{
	char err[512];

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
	/* SQLite opens a file it may not write read-only, quietly: every commit would fail. */
	if (sqlite3_db_readonly(s->db, "main") == 1) {
		log_error("database %s cannot be written by this user (uid %u): refusing it; give "
			  "it back its write permission, or move it to a writable place",
			  path, (unsigned)geteuid());
		goto fail;
	}
	if (schema_migrate(s->db) != 0)
		goto fail;
	char missing[160];
	if (schema_missing_object(s->db, missing, sizeof(missing))) {
		log_error("database %s lacks its %s (dropped by hand?) though its schema version "
			  "says it has it: refusing it. Restore it from a backup, or move the "
			  "database aside to start a new one",
			  path, missing);
		goto fail;
	}
	if (store_prepare_processes(s) || store_prepare_groups(s) || store_prepare_telemetry(s) ||
	    store_prepare_streams(s) || store_prepare_containers(s) ||
	    prepare(s, "BEGIN IMMEDIATE", &s->begin) || prepare(s, "COMMIT", &s->commit))
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
	sqlite3_finalize(s->insert_processes);
	store_free_processes(s);
	sqlite3_finalize(s->update_process);
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
	sqlite3_finalize(s->put_energy);
	sqlite3_finalize(s->put_loss);
	sqlite3_finalize(s->put_step);
	sqlite3_finalize(s->update_step);
	sqlite3_finalize(s->update_stream);
	sqlite3_finalize(s->put_tool);
	sqlite3_finalize(s->put_pipeline);
	sqlite3_finalize(s->put_signal);
	sqlite3_finalize(s->step_history);
	sqlite3_finalize(s->put_container_link);
	sqlite3_finalize(s->put_container_candidate);
	sqlite3_finalize(s->begin);
	sqlite3_finalize(s->commit);
	if (s->db)
		sqlite3_close(s->db);
	memset(s, 0, sizeof(*s));
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

int64_t store_max_id(struct store *s, const char *table)
{
	return max_id(s->db, table);
}
