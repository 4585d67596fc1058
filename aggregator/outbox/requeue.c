/*
 * Process rows rewritten after they were queued, where the sink must see the
 * change: a script's helper step ($(ls | wc -l)) dissolved after its processes
 * ended and were queued with its step id. A record the shipper has not taken
 * yet takes the row as it is now; one already sent (or being sent) is queued
 * again: a newer version, which the sink keeps under FINAL.
 */
#include "aggregator/outbox/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

static int prepare(struct outbox *o)
{
	char *json = outbox_row_json(o->db, "processes");
	size_t len = (json ? strlen(json) : 0) + 512;
	char *sql = json ? malloc(len) : NULL;
	int rc = SQLITE_NOMEM;

	if (sql) {
		/* ?2: records up to it are older than the change, or the shipper's. */
		snprintf(sql, len,
			 "UPDATE outbox SET payload = (SELECT %s FROM processes WHERE id = ?1) "
			 "WHERE id > ?2 AND priority = 2 AND kind = 'processes' AND record_key = "
			 "CAST(?1 AS TEXT) AND EXISTS (SELECT 1 FROM processes WHERE id = ?1)",
			 json);
		rc = sqlite3_prepare_v2(o->db, sql, -1, &o->requeue, NULL);
	}
	free(sql);
	free(json);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(o->db,
					"SELECT seq FROM sqlite_sequence WHERE name = 'outbox'", -1,
					&o->mark, NULL);
	if (rc != SQLITE_OK) {
		log_error("outbox: cannot build the requeue statements: %s", sqlite3_errmsg(o->db));
		return -1;
	}
	return 0;
}

int outbox_requeue_open(struct outbox *o)
{
	return prepare(o);
}

void outbox_requeue_close(struct outbox *o)
{
	sqlite3_finalize(o->requeue);
	sqlite3_finalize(o->mark);
	o->requeue = o->mark = NULL;
}

int64_t outbox_mark(struct outbox *o)
{
	int64_t id = 0;

	if (sqlite3_step(o->mark) == SQLITE_ROW)
		id = sqlite3_column_int64(o->mark, 0);
	sqlite3_reset(o->mark);
	return id;
}

int outbox_rewrite_process(struct outbox *o, int64_t process_id, int64_t after)
{
	sqlite3_bind_int64(o->requeue, 1, process_id);
	sqlite3_bind_int64(o->requeue, 2, after);
	int rc = sqlite3_step(o->requeue);
	sqlite3_reset(o->requeue);
	if (rc != SQLITE_DONE) {
		log_error("outbox: requeueing process %lld: %s", (long long)process_id,
			  sqlite3_errmsg(o->db));
		return -1;
	}
	return sqlite3_changes(o->db) > 0;
}
