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
#endif

#endif
