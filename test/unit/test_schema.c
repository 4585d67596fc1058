/*
 * Schema migrations: a v1 database with data is upgraded in place to the latest.
 * Process rows: inserted once, replaced after, and replaced when the flag that
 * says "written" is wrong (a transaction rolled back, or a row already there).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "aggregator/store/schema.h"
#include "aggregator/store/store.h"

static int64_t query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -2 : sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void test_v1_to_latest(void **state)
{
	char path[64];
	sqlite3 *db;
	struct store s;

	snprintf(path, sizeof(path), "/tmp/tracer-schema-test-%d.db", (int)getpid());
	unlink(path);
	/* A database as version 1 left it, with a finished process in it. */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_string_equal(schema_migrations[0].name, "001_initial.sql");
	assert_int_equal(sqlite3_exec(db, schema_migrations[0].sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(
	    sqlite3_exec(
		db,
		"PRAGMA user_version = 1;"
		"INSERT INTO processes (id, pid, proc_start_boot_ns, state, exe, "
		"cpu_user_ns, max_rss_kb) VALUES (7, 42, 1000, 'exited', '/bin/x', 5, 99);",
		NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(db);

	/* The aggregator opens it: migrated to the latest, data intact. */
	assert_int_equal(store_open(&s, path), 0);
	assert_int_equal(query_int(s.db, "PRAGMA user_version"), schema_latest_version());
	assert_true(schema_latest_version() >= 2);
	assert_int_equal(query_int(s.db, "SELECT max_rss_kb FROM processes WHERE id = 7"), 99);
	assert_int_equal(query_int(s.db, "SELECT iowait_ns FROM processes WHERE id = 7"), -2);
	assert_int_equal(query_int(s.db, "SELECT oom_killed FROM processes WHERE id = 7"), 0);
	assert_int_equal(query_int(s.db, "SELECT count(*) FROM samples"), 0);
	assert_int_equal(s.next_process_id, 8);
	store_close(&s);

	/* A database from a newer tracer is refused, not damaged. */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 999", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_open(&s, path), -1);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(query_int(db, "PRAGMA user_version"), 999);
	sqlite3_close(db);
	unlink(path);
}

static void test_process_row_insert_then_replace(void **state)
{
	struct store s;
	struct process_row r = {.pid = 42, .state = "running"};

	(void)state;
	assert_int_equal(store_open(&s, ":memory:"), 0);
	r.id = s.next_process_id++;
	assert_false(r.stored);
	assert_int_equal(store_put_process(&s, &r), 0);
	assert_true(r.stored);

	/* Written before: the next write replaces it. */
	r.state = "exited";
	r.has_exit_code = true;
	r.exit_code = 3;
	assert_int_equal(store_put_process(&s, &r), 0);
	assert_int_equal(query_int(s.db, "SELECT count(*) FROM processes"), 1);
	assert_int_equal(query_int(s.db, "SELECT exit_code FROM processes WHERE pid = 42"), 3);

	/* Believed new but already there: still one row, the newest values. */
	r.stored = false;
	r.exit_code = 4;
	assert_int_equal(store_put_process(&s, &r), 0);
	assert_true(r.stored);
	assert_int_equal(query_int(s.db, "SELECT count(*) FROM processes"), 1);
	assert_int_equal(query_int(s.db, "SELECT exit_code FROM processes WHERE pid = 42"), 4);

	/* Believed written but rolled back: the replace inserts it again. */
	assert_int_equal(store_begin(&s), 0);
	r.id = s.next_process_id++;
	r.stored = false;
	assert_int_equal(store_put_process(&s, &r), 0);
	assert_int_equal(sqlite3_exec(s.db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	assert_true(r.stored);
	assert_int_equal(store_put_process(&s, &r), 0);
	assert_int_equal(query_int(s.db, "SELECT count(*) FROM processes"), 2);
	store_close(&s);
}

/* A table dropped by hand is found; the schema's own result has none missing. */
static void test_a_dropped_table_is_named(void **state)
{
	sqlite3 *db;
	char buf[160];

	(void)state;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	for (unsigned i = 0; i < schema_migration_count; i++)
		assert_int_equal(sqlite3_exec(db, schema_migrations[i].sql, NULL, NULL, NULL),
				 SQLITE_OK);
	assert_null(schema_missing_object(db, buf, sizeof(buf)));
	assert_int_equal(sqlite3_exec(db, "DROP TABLE outbox", NULL, NULL, NULL), SQLITE_OK);
	assert_non_null(schema_missing_object(db, buf, sizeof(buf)));
	assert_string_equal(buf, "table outbox");
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v1_to_latest),
	    cmocka_unit_test(test_process_row_insert_then_replace),
	    cmocka_unit_test(test_a_dropped_table_is_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
