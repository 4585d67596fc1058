/* Opening an SQLite database that this process writes while others read it. */
#ifndef TRACER_SQLITE_WRITER_H
#define TRACER_SQLITE_WRITER_H

#include <stddef.h>

#include <sqlite3.h>

/*
 * Opens path read-write (creating it), sets a busy timeout and runs setup_sql,
 * which should end with a write (BEGIN IMMEDIATE; COMMIT will do) so that a
 * database we cannot write is found here and not at the first real write.
 * extra_flags are added to SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE.
 *
 * A reader running as root that opens the database before us creates its -wal
 * and -shm files as root and hands them to the database's owner only after
 * (SQLite's fchown). Opening them in that instant leaves this connection unable
 * to write: SQLITE_READONLY or SQLITE_CANTOPEN. That failure is retried on a
 * new connection a few times; anything else fails at once.
 *
 * 0 and *db set, or -1 with a message in err (and *db NULL).
 */
int sqlite_open_writer(const char *path, int extra_flags, int busy_ms, const char *setup_sql,
		       sqlite3 **db, char *err, size_t err_size);

#endif
