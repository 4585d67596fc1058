/*
 * What a --db path holds, told apart before any query runs: a user may point
 * tracer at a text file, an empty file, another program's SQLite database or
 * a database in a directory they cannot write. Each gets its own answer, and
 * a database is only ever opened for reading.
 */
#ifndef TRACER_DBKIND_H
#define TRACER_DBKIND_H

#include <stddef.h>

#include <sqlite3.h>

enum db_kind {
	DB_TRACER,     /* a tracer database of this build's schema version */
	DB_MISSING,    /* no such file */
	DB_UNREADABLE, /* exists, but this user may not read it */
	DB_EMPTY,      /* a file of 0 bytes */
	DB_NOT_SQLITE, /* some other kind of file */
	DB_FOREIGN,    /* SQLite, but not tracer's tables */
	DB_OLDER,      /* tracer's, an older schema version */
	DB_NEWER,      /* tracer's, written by a newer tracer */
};

struct db_probe {
	enum db_kind kind;
	int version;   /* PRAGMA user_version, when SQLite */
	int immutable; /* read as an immutable file (its directory is not writable) */
	sqlite3 *db;   /* open read-only when kind is DB_TRACER; else NULL */
};

/* Opens path for reading and says what it is. The caller closes probe->db. */
void db_probe_open(const char *path, struct db_probe *probe);
/* One sentence on why path cannot be used; "" for DB_TRACER. */
const char *db_probe_problem(const struct db_probe *probe, const char *path, char *buf, size_t n);

#endif
