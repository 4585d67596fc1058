/* The unit tests' throwaway databases: a fresh path, and its removal with the WAL files. */
#ifndef TRACER_TEST_TMPDB_H
#define TRACER_TEST_TMPDB_H

#include <stdio.h>
#include <unistd.h>

/* /tmp/tracer-TAG-PID.db, with nothing left there from an earlier run. */
static inline void tmpdb_fresh(char *path, size_t size, const char *tag)
{
	snprintf(path, size, "/tmp/tracer-%s-%d.db", tag, (int)getpid());
	unlink(path);
}

static inline void tmpdb_remove(const char *db_path)
{
	char path[160];

	unlink(db_path);
	snprintf(path, sizeof(path), "%s-wal", db_path);
	unlink(path);
	snprintf(path, sizeof(path), "%s-shm", db_path);
	unlink(path);
}

#ifdef TMPDB_STORE_FIXTURE
/* cmocka setup and teardown: *state is a store on a fresh database (include after store.h). */
static char tmpdb_store_path[64];

static int open_store(void **state)
{
	static struct store s;

	tmpdb_fresh(tmpdb_store_path, sizeof(tmpdb_store_path), TMPDB_STORE_FIXTURE);
	if (store_open(&s, tmpdb_store_path) != 0)
		return -1;
	*state = &s;
	return 0;
}

static int close_store(void **state)
{
	store_close(*state);
	tmpdb_remove(tmpdb_store_path);
	return 0;
}

/* The column's value as text ("NULL" for NULL), for the row with this id. */
static inline const char *tmpdb_column(struct store *s, const char *table, const char *col,
				       int64_t id)
{
	static char out[256];
	char sql[256];
	sqlite3_stmt *st;

	snprintf(sql, sizeof(sql), "SELECT %s FROM %s WHERE id = %lld", col, table, (long long)id);
	assert_int_equal(sqlite3_prepare_v2(s->db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	if (sqlite3_column_type(st, 0) == SQLITE_NULL)
		snprintf(out, sizeof(out), "NULL");
	else
		snprintf(out, sizeof(out), "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return out;
}
#endif

#endif
