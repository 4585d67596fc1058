#include "shipper/outbox_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "aggregator/store/schema.h"
#include "common/log.h"
#include "common/sqlite_writer.h"
#include "common/vec.h"

/* The shipper's own database: created on first start. */
static const char state_schema[] =
    "PRAGMA journal_mode=WAL;"
    "CREATE TABLE IF NOT EXISTS shipper_state (key TEXT PRIMARY KEY, value TEXT);"
    "CREATE TABLE IF NOT EXISTS dead_letters (id INTEGER PRIMARY KEY, at_ns INTEGER NOT NULL,"
    " sink TEXT NOT NULL, first_outbox_id INTEGER NOT NULL, last_outbox_id INTEGER NOT NULL,"
    " records INTEGER NOT NULL, http_status INTEGER, answer TEXT, payload TEXT);"
    "INSERT OR IGNORE INTO shipper_state (key, value) VALUES ('delivered_through', '0');"
    "BEGIN IMMEDIATE; COMMIT;"; /* proves we can write: see sqlite_open_writer */

static int exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &err);

	if (rc != SQLITE_OK)
		log_error("sqlite: %s: %s", sql, err ? err : sqlite3_errmsg(db));
	sqlite3_free(err);
	return rc == SQLITE_OK ? 0 : -1;
}

static int64_t one_number(sqlite3 *db, const char *sql, int64_t arg)
{
	sqlite3_stmt *st;
	int64_t n = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_bind_parameter_count(st))
		sqlite3_bind_int64(st, 1, arg);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

int reader_open(struct outbox_reader *o, const char *db_path, const char *state_path,
		const char *host_id, char *err, size_t err_size)
{
	sqlite3_stmt *st;

	memset(o, 0, sizeof(*o));
	if (sqlite3_open_v2(db_path, &o->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		snprintf(err, err_size, "%s: %s", db_path, sqlite3_errmsg(o->db));
		reader_close(o);
		return -1;
	}
	sqlite3_busy_timeout(o->db, 10000);
	int version = (int)one_number(o->db, "PRAGMA user_version", 0);
	if (version < 0) {
		snprintf(err, err_size,
			 "cannot read %s: %s (its directory must be writable by this user while "
			 "the aggregator is stopped, for SQLite's WAL index)",
			 db_path, sqlite3_errmsg(o->db));
		reader_close(o);
		return -1;
	}
	if (version != schema_latest_version()) {
		snprintf(err, err_size,
			 "%s has schema version %d, this shipper reads %d (start the matching "
			 "tracer-aggregator first)",
			 db_path, version, schema_latest_version());
		reader_close(o);
		return -1;
	}
	mode_t old = umask(027); /* group-readable: the aggregator and tracer status read it */
	int rc = sqlite_open_writer(state_path, 0, 10000, state_schema, &o->state, err, err_size);
	umask(old);
	if (rc != 0) {
		reader_close(o);
		return -1;
	}
	o->delivered_through = one_number(
	    o->state,
	    "SELECT CAST(value AS INTEGER) FROM shipper_state WHERE key = 'delivered_through'", 0);
	o->attempt_through = one_number(
	    o->state,
	    "SELECT CAST(value AS INTEGER) FROM shipper_state WHERE key = 'attempt_through'", 0);
	if (sqlite3_prepare_v2(
		o->db,
		"SELECT id, kind, record_key, payload, created_ns FROM outbox WHERE id > "
		"?1 AND id <= ?3 ORDER BY id LIMIT ?2",
		-1, &o->read, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(o->state,
			       "INSERT INTO shipper_state (key, value) VALUES (?1, ?2) ON "
			       "CONFLICT(key) DO UPDATE SET value = excluded.value",
			       -1, &o->set_state, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(
		o->state,
		"INSERT INTO dead_letters (at_ns, sink, first_outbox_id, last_outbox_id, "
		"records, http_status, answer, payload) VALUES (?,?,?,?,?,?,?,?)",
		-1, &o->dead, NULL) != SQLITE_OK) {
		snprintf(err, err_size, "preparing statements: %s / %s", sqlite3_errmsg(o->db),
			 sqlite3_errmsg(o->state));
		reader_close(o);
		return -1;
	}
	if (host_id && *host_id) {
		snprintf(o->host_id, sizeof(o->host_id), "%s", host_id);
	} else if (sqlite3_prepare_v2(
		       o->db,
		       "SELECT host_id FROM collector_stats WHERE host_id IS NOT NULL "
		       "ORDER BY last_seen_ns DESC LIMIT 1",
		       -1, &st, NULL) == SQLITE_OK) {
		/* The records' own host: the collector that produced them. */
		if (sqlite3_step(st) == SQLITE_ROW)
			snprintf(o->host_id, sizeof(o->host_id), "%s", sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	return 0;
}

void reader_close(struct outbox_reader *o)
{
	sqlite3_finalize(o->read);
	sqlite3_finalize(o->set_state);
	sqlite3_finalize(o->dead);
	if (o->db)
		sqlite3_close(o->db);
	if (o->state)
		sqlite3_close(o->state);
	memset(o, 0, sizeof(*o));
}

void batch_clear(struct batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free(b->r[i].key);
		free(b->r[i].payload);
	}
	b->n = 0;
	b->bytes = 0;
	b->first_id = b->last_id = 0;
}

void batch_free(struct batch *b)
{
	batch_clear(b);
	free(b->r);
	memset(b, 0, sizeof(*b));
}

int reader_next(struct outbox_reader *o, size_t max_records, size_t max_bytes, struct batch *b)
{
	int rc;

	batch_clear(b);
	bool retry = o->attempt_through > o->delivered_through;
	if (retry) /* as first sent, even if the limits changed since */
		max_records = max_bytes = SIZE_MAX / 2;
	sqlite3_bind_int64(o->read, 1, o->delivered_through);
	sqlite3_bind_int64(o->read, 2,
			   (int64_t)(max_records < INT64_MAX ? max_records : INT64_MAX));
	sqlite3_bind_int64(o->read, 3, retry ? o->attempt_through : INT64_MAX);
	while ((rc = sqlite3_step(o->read)) == SQLITE_ROW) {
		size_t len = (size_t)sqlite3_column_bytes(o->read, 3);
		if (b->n && b->bytes + len > max_bytes)
			break;
		if (!vec_grow(b->r, b->cap, b->n + 1))
			break;
		struct record *r = &b->r[b->n];
		r->id = sqlite3_column_int64(o->read, 0);
		snprintf(r->kind, sizeof(r->kind), "%s", sqlite3_column_text(o->read, 1));
		r->key = strdup((const char *)sqlite3_column_text(o->read, 2));
		r->payload = malloc(len + 1);
		if (!r->key || !r->payload) {
			free(r->key);
			free(r->payload);
			break;
		}
		memcpy(r->payload, sqlite3_column_text(o->read, 3), len);
		r->payload[len] = '\0';
		r->payload_len = len;
		r->created_ns = sqlite3_column_int64(o->read, 4);
		if (!b->n)
			b->first_id = r->id;
		b->last_id = r->id;
		b->bytes += len;
		b->n++;
	}
	sqlite3_reset(o->read);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int reader_attempt(struct outbox_reader *o, const struct batch *b)
{
	char through[32];

	if (o->attempt_through == b->last_id)
		return 0;
	snprintf(through, sizeof(through), "%lld", (long long)b->last_id);
	sqlite3_bind_text(o->set_state, 1, "attempt_through", -1, SQLITE_STATIC);
	sqlite3_bind_text(o->set_state, 2, through, -1, SQLITE_TRANSIENT);
	int rc = sqlite3_step(o->set_state);
	sqlite3_reset(o->set_state);
	if (rc != SQLITE_DONE)
		return -1;
	o->attempt_through = b->last_id;
	return 0;
}

void reader_set_state(struct outbox_reader *o, const char *key, const char *value)
{
	sqlite3_bind_text(o->set_state, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(o->set_state, 2, value, -1, SQLITE_TRANSIENT);
	sqlite3_step(o->set_state);
	sqlite3_reset(o->set_state);
}

/* Adds n to a counter kept in shipper_state. */
static void bump(struct outbox_reader *o, const char *key, int64_t n)
{
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "INSERT INTO shipper_state (key, value) VALUES ('%s', %lld) ON CONFLICT(key) DO "
		 "UPDATE SET value = CAST(value AS INTEGER) + %lld",
		 key, (long long)n, (long long)n);
	exec(o->state, sql);
}

/* Inside a transaction: the watermark moves past the batch. */
static void advance(struct outbox_reader *o, const struct batch *b)
{
	char through[32];
	snprintf(through, sizeof(through), "%lld", (long long)b->last_id);
	reader_set_state(o, "delivered_through", through);
}

int reader_delivered(struct outbox_reader *o, const struct batch *b, const char *sink,
		     int64_t now_ns)
{
	char when[32];

	if (exec(o->state, "BEGIN IMMEDIATE") != 0)
		return -1;
	advance(o, b);
	snprintf(when, sizeof(when), "%lld", (long long)now_ns);
	reader_set_state(o, "last_success_ns", when);
	reader_set_state(o, "sink", sink);
	bump(o, "delivered_records", (int64_t)b->n);
	bump(o, "delivered_batches", 1);
	if (exec(o->state, "COMMIT") != 0)
		return -1;
	o->delivered_through = b->last_id;
	return 0;
}

int reader_dead_letter(struct outbox_reader *o, const struct batch *b, const char *sink,
		       long status, const char *answer, const char *lines, int64_t now_ns)
{
	if (exec(o->state, "BEGIN IMMEDIATE") != 0)
		return -1;
	sqlite3_bind_int64(o->dead, 1, now_ns);
	sqlite3_bind_text(o->dead, 2, sink, -1, SQLITE_STATIC);
	sqlite3_bind_int64(o->dead, 3, b->first_id);
	sqlite3_bind_int64(o->dead, 4, b->last_id);
	sqlite3_bind_int64(o->dead, 5, (int64_t)b->n);
	sqlite3_bind_int64(o->dead, 6, status);
	sqlite3_bind_text(o->dead, 7, answer ? answer : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(o->dead, 8, lines ? lines : "", -1, SQLITE_TRANSIENT);
	int rc = sqlite3_step(o->dead);
	sqlite3_reset(o->dead);
	if (rc != SQLITE_DONE) {
		exec(o->state, "ROLLBACK");
		return -1;
	}
	advance(o, b);
	bump(o, "dead_letter_records", (int64_t)b->n);
	if (exec(o->state, "COMMIT") != 0)
		return -1;
	o->delivered_through = b->last_id;
	return 0;
}

int64_t reader_pending(struct outbox_reader *o, int64_t upto)
{
	if (upto > 0) {
		sqlite3_stmt *st;
		int64_t n = -1;
		if (sqlite3_prepare_v2(o->db,
				       "SELECT count(*) FROM outbox WHERE id > ?1 AND id <= ?2", -1,
				       &st, NULL) != SQLITE_OK)
			return -1;
		sqlite3_bind_int64(st, 1, o->delivered_through);
		sqlite3_bind_int64(st, 2, upto);
		if (sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		return n;
	}
	return one_number(o->db, "SELECT count(*) FROM outbox WHERE id > ?1", o->delivered_through);
}

int64_t reader_last_id(struct outbox_reader *o)
{
	return one_number(o->db, "SELECT coalesce(max(id), 0) FROM outbox", 0);
}
