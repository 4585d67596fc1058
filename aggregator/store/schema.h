/*
 * The SQLite schema is a public interface: users query it directly. It is
 * versioned with PRAGMA user_version and changed only by appending a
 * numbered migration (aggregator/schema/NNN_name.sql).
 */
#ifndef TRACER_SCHEMA_H
#define TRACER_SCHEMA_H

#include <stddef.h>

#include <sqlite3.h>

struct migration {
	int version;
	const char *name;
	const char *sql;
};

extern const struct migration schema_migrations[];
extern const unsigned schema_migration_count;

/* The version this build writes. */
int schema_latest_version(void);
/*
 * Brings db up to the latest version, each step in its own transaction.
 * Refuses a database newer than this build. 0 or -1 (reason logged).
 */
int schema_migrate(sqlite3 *db);
/*
 * A table, view or index the migrations create that db (at the latest
 * version) lacks, as "table outbox", in buf; NULL if it has them all (or the
 * check could not run). Someone's DROP TABLE leaves user_version as it was.
 */
const char *schema_missing_object(sqlite3 *db, char *buf, size_t size);

#endif
