/*
 * Frames through the whole aggregator: decode, correlation, insight and the
 * SQLite writes, into a fresh database per input (so a crash reproduces from
 * its input alone). Any bytes must be applied or rejected, never crash, leak
 * or corrupt memory. Migrating a new schema costs ~70 ms under ASan and
 * opening a store 12 ms, so the store is opened once, on a database migrated
 * once, and after each input every table's rows are put back as the
 * migrations left them (from the template, attached), with the ids the store
 * counts from: every input meets the same fresh database and the same store.
 * (SQLite's backup API would make the connection parse its schema again.)
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggregator/ingest/ingest.h"
#include "aggregator/receive/receiver.h"
#include "aggregator/store/store.h"
#include "common/log.h"
#include "test/unit/tmpdb.h"

#include <sqlite3.h>

static char template_path[128], db_path[128];

static void cleanup(void)
{
	tmpdb_remove(template_path);
	tmpdb_remove(db_path);
}
static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	char buf[65536];
	size_t n;

	if (!in || !out)
		__builtin_trap();
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			__builtin_trap();
	fclose(in);
	if (fclose(out) != 0)
		__builtin_trap();
}

static struct store st;
static sqlite3_stmt *put_back[256]; /* per table: empty it, refill it from the template */
static size_t n_put_back;
static int64_t fresh_next_process_id, fresh_next_run_id;

static void close_store(void)
{
	for (size_t i = 0; i < n_put_back; i++)
		sqlite3_finalize(put_back[i]);
	store_close(&st);
	cleanup();
}

static void prepare_or_trap(const char *sql)
{
	if (n_put_back == sizeof(put_back) / sizeof(*put_back) ||
	    sqlite3_prepare_v2(st.db, sql, -1, &put_back[n_put_back++], NULL) != SQLITE_OK)
		__builtin_trap();
}

/* Whether the migrations left rows in the template's table. */
static bool seeded(const char *table)
{
	char sql[256];
	sqlite3_stmt *q;
	bool rows;

	snprintf(sql, sizeof(sql), "SELECT 1 FROM fresh.\"%s\" LIMIT 1", table);
	if (sqlite3_prepare_v2(st.db, sql, -1, &q, NULL) != SQLITE_OK)
		__builtin_trap();
	rows = sqlite3_step(q) == SQLITE_ROW;
	sqlite3_finalize(q);
	return rows;
}

/* For every table of the template: DELETE, then INSERT what the migrations put there. */
static void prepare_put_back(void)
{
	char attach[256], sql[512];
	sqlite3_stmt *tables;

	snprintf(attach, sizeof(attach), "ATTACH 'file:%s?mode=ro' AS fresh", template_path);
	if (sqlite3_exec(st.db, attach, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(st.db, "SELECT name FROM fresh.sqlite_master WHERE type = 'table'",
			       -1, &tables, NULL) != SQLITE_OK)
		__builtin_trap();
	while (sqlite3_step(tables) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(tables, 0);
		snprintf(sql, sizeof(sql), "DELETE FROM main.\"%s\"", name);
		prepare_or_trap(sql);
		if (!seeded(name))
			continue;
		snprintf(sql, sizeof(sql), "INSERT INTO main.\"%s\" SELECT * FROM fresh.\"%s\"",
			 name, name);
		prepare_or_trap(sql);
	}
	sqlite3_finalize(tables);
}

static void open_once(void)
{
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	log_set_level(LOG_LVL_ERROR);
	snprintf(template_path, sizeof(template_path), "%s/fuzz-ingest-%d-template.db", dir,
		 (int)getpid());
	snprintf(db_path, sizeof(db_path), "%s/fuzz-ingest-%d.db", dir, (int)getpid());
	tmpdb_remove(template_path);
	tmpdb_remove(db_path);
	if (store_open(&st, template_path) != 0)
		__builtin_trap();
	store_close(&st); /* checkpoints the WAL into the file */
	copy_file(template_path, db_path);
	if (store_open(&st, db_path) != 0)
		__builtin_trap();
	prepare_put_back();
	/* Durability and sharing are not what is tested: no fsync, no file locks. */
	if (sqlite3_exec(st.db,
			 "PRAGMA main.synchronous = OFF; PRAGMA main.locking_mode = EXCLUSIVE",
			 NULL, NULL, NULL) != SQLITE_OK)
		__builtin_trap();
	fresh_next_process_id = st.next_process_id;
	fresh_next_run_id = st.next_run_id;
	atexit(close_store);
}

/* The database as the migrations left it, and the store counting from there. */
static void put_back_fresh_database(void)
{
	if (sqlite3_exec(st.db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		__builtin_trap();
	for (size_t i = 0; i < n_put_back; i++) {
		if (sqlite3_step(put_back[i]) != SQLITE_DONE)
			__builtin_trap();
		sqlite3_reset(put_back[i]);
	}
	if (sqlite3_exec(st.db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		__builtin_trap();
	st.next_process_id = fresh_next_process_id;
	st.next_run_id = fresh_next_run_id;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ingest g;
	struct receiver r;

	if (!n_put_back)
		open_once();
	if (ingest_init(&g, &st, SCOPE_ALL, NULL, NULL, NULL) != 0)
		__builtin_trap();
	receiver_init(&r, &g, &st);
	r.host_every_ns = 0;
	/* The same bytes twice: the second is a duplicate (or refused again). */
	receiver_handle(&r, data, size);
	receiver_commit(&r);
	receiver_handle(&r, data, size);
	receiver_commit(&r);
	receiver_free(&r);
	ingest_free(&g);
	if (st.in_tx || st.batch_n)
		__builtin_trap(); /* a commit must leave nothing open or waiting */
	put_back_fresh_database();
	return 0;
}
