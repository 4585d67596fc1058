#include <stdio.h>

#include "aggregator/store/schema.h"

#include "common/log.h"

int schema_latest_version(void)
{
	return schema_migration_count ? schema_migrations[schema_migration_count - 1].version : 0;
}

static int user_version(sqlite3 *db)
{
	sqlite3_stmt *st;
	int v = -1;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

int schema_migrate(sqlite3 *db)
{
	int current = user_version(db);
	char *err = NULL;

	if (current < 0) {
		log_error("cannot read the schema version: %s", sqlite3_errmsg(db));
		return -1;
	}
	if (current > schema_latest_version()) {
		log_error("database schema version %d is newer than this tracer (%d); "
			  "upgrade tracer",
			  current, schema_latest_version());
		return -1;
	}
	for (unsigned i = 0; i < schema_migration_count; i++) {
		const struct migration *m = &schema_migrations[i];
		char pragma[64];

		if (m->version <= current)
			continue;
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d;", m->version);
		if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &err) != SQLITE_OK ||
		    sqlite3_exec(db, m->sql, NULL, NULL, &err) != SQLITE_OK ||
		    sqlite3_exec(db, pragma, NULL, NULL, &err) != SQLITE_OK ||
		    sqlite3_exec(db, "COMMIT", NULL, NULL, &err) != SQLITE_OK) {
			log_error("schema migration %s failed: %s", m->name, err ? err : "?");
			sqlite3_free(err);
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
			return -1;
		}
		log_info("database migrated to schema version %d (%s)", m->version, m->name);
	}
	return 0;
}

/* Whether db's schema holds an object of that type and name. */
static int has_object(sqlite3 *db, const char *type, const char *name)
{
	sqlite3_stmt *q;
	int found = -1;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = ?1 AND name = ?2", -1,
			       &q, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(q, 1, type, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, name, -1, SQLITE_STATIC);
	found = sqlite3_step(q) == SQLITE_ROW;
	sqlite3_finalize(q);
	return found;
}

const char *schema_missing_object(sqlite3 *db, char *buf, size_t size)
{
	sqlite3 *fresh = NULL;
	sqlite3_stmt *q = NULL;
	const char *missing = NULL;

	/* The migrations' own result, in memory: what this build expects. */
	for (unsigned i = 0; i < schema_migration_count; i++)
		if ((!fresh && sqlite3_open(":memory:", &fresh) != SQLITE_OK) ||
		    sqlite3_exec(fresh, schema_migrations[i].sql, NULL, NULL, NULL) != SQLITE_OK)
			goto out;
	if (!fresh || sqlite3_prepare_v2(
			  fresh,
			  "SELECT type, name FROM sqlite_master WHERE name NOT LIKE "
			  "'sqlite_%' ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'view' THEN 1 "
			  "ELSE 2 END, name",
			  -1, &q, NULL) != SQLITE_OK)
		goto out;
	while (!missing && sqlite3_step(q) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(q, 0);
		const char *name = (const char *)sqlite3_column_text(q, 1);
		if (has_object(db, type, name) == 0) {
			snprintf(buf, size, "%s %s", type, name);
			missing = buf;
		}
	}
out:
	sqlite3_finalize(q);
	sqlite3_close(fresh);
	return missing;
}
