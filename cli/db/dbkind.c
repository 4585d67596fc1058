#include "cli/db/dbkind.h"

#include <errno.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aggregator/store/schema.h"

/* file:URI for path with ?immutable=1: every byte outside [A-Za-z0-9/._-] escaped. */
static void immutable_uri(const char *path, char *uri, size_t n)
{
	size_t o = (size_t)snprintf(uri, n, "file:");

	for (const unsigned char *p = (const unsigned char *)path; *p && o + 4 < n; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/._-", *p))
			uri[o++] = (char)*p;
		else
			o += (size_t)snprintf(uri + o, n - o, "%%%02X", *p);
	}
	snprintf(uri + o, n - o, "?immutable=1");
}

/* The number of tracer's core tables in db; -1 with the SQLite error code in *err. */
static int tracer_tables(sqlite3 *db, int *err)
{
	sqlite3_stmt *st;
	int found = -1;

	*err = sqlite3_prepare_v2(db,
				  "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
				  "name IN ('runs', 'steps', 'processes', 'aggregator_stats')",
				  -1, &st, NULL);
	if (*err == SQLITE_OK) {
		*err = sqlite3_step(st);
		if (*err == SQLITE_ROW) {
			found = sqlite3_column_int(st, 0);
			*err = SQLITE_OK;
		}
	}
	sqlite3_finalize(st);
	return found;
}

static int user_version(sqlite3 *db)
{
	sqlite3_stmt *st;
	int v = 0;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

/*
 * A WAL database whose -shm cannot be created (a directory this user cannot
 * write, the aggregator stopped) fails to open read-only with CANTOPEN; read
 * as immutable it is whole, because the aggregator checkpoints at close.
 */
static sqlite3 *open_read_only(const char *path, struct db_probe *probe, int *tables)
{
	sqlite3 *db = NULL;
	int err;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
		*tables = tracer_tables(db, &err);
		if (*tables >= 0)
			return db;
		if (err == SQLITE_NOTADB) {
			sqlite3_close(db);
			probe->kind = DB_NOT_SQLITE;
			return NULL;
		}
	}
	sqlite3_close(db);
	db = NULL;
	char uri[8192];
	immutable_uri(path, uri, sizeof(uri));
	if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) == SQLITE_OK &&
	    (*tables = tracer_tables(db, &err)) >= 0) {
		probe->immutable = 1;
		return db;
	}
	sqlite3_close(db);
	probe->kind = err == SQLITE_NOTADB ? DB_NOT_SQLITE : DB_UNREADABLE;
	return NULL;
}

void db_probe_open(const char *path, struct db_probe *probe)
{
	struct stat st;
	int tables = 0;

	*probe = (struct db_probe){.kind = DB_TRACER};
	if (stat(path, &st) != 0) {
		probe->kind = errno == ENOENT ? DB_MISSING : DB_UNREADABLE;
		return;
	}
	if (access(path, R_OK) != 0 || !S_ISREG(st.st_mode)) {
		probe->kind = S_ISREG(st.st_mode) ? DB_UNREADABLE : DB_NOT_SQLITE;
		return;
	}
	if (st.st_size == 0) {
		probe->kind = DB_EMPTY;
		return;
	}
	sqlite3 *db = open_read_only(path, probe, &tables);
	if (!db)
		return;
	sqlite3_busy_timeout(db, 5000);
	probe->version = user_version(db);
	if (tables < 4 || probe->version <= 0)
		probe->kind = DB_FOREIGN;
	else if (probe->version < schema_latest_version())
		probe->kind = DB_OLDER;
	else if (probe->version > schema_latest_version())
		probe->kind = DB_NEWER;
	if (probe->kind == DB_TRACER)
		probe->db = db;
	else
		sqlite3_close(db);
}

/*
 * Why this user cannot read path, and what would let them: the group that may read the
 * file (or, when the directory keeps them out, the directory), which they can be added to.
 */
static void unreadable_problem(const char *path, char *buf, size_t n)
{
	struct stat st;
	char dir[PATH_MAX];
	int ok = stat(path, &st) == 0;

	if (!ok) {
		snprintf(dir, sizeof(dir), "%s", path);
		ok = stat(dirname(dir), &st) == 0;
	}
	struct group *g = ok && (st.st_mode & S_IRGRP) ? getgrgid(st.st_gid) : NULL;
	if (g && g->gr_gid != getegid())
		snprintf(buf, n,
			 "%s: cannot read it as this user: members of group '%s' can (ask an "
			 "administrator: sudo usermod -aG %s $USER, then log in again)",
			 path, g->gr_name, g->gr_name);
	else
		snprintf(buf, n, "%s: cannot read it as this user", path);
}

const char *db_probe_problem(const struct db_probe *probe, const char *path, char *buf, size_t n)
{
	switch (probe->kind) {
	case DB_TRACER:
		snprintf(buf, n, "%s", "");
		break;
	case DB_MISSING:
		snprintf(buf, n, "no database at %s (record one with tracer run)", path);
		break;
	case DB_UNREADABLE:
		unreadable_problem(path, buf, n);
		break;
	case DB_EMPTY:
		snprintf(buf, n, "%s is an empty file, not a tracer database", path);
		break;
	case DB_NOT_SQLITE: {
		struct stat st;
		snprintf(buf, n,
			 stat(path, &st) == 0 && S_ISDIR(st.st_mode)
			     ? "%s is a directory; --db names the database file"
			     : "%s is not a SQLite database, so not a tracer database",
			 path);
		break;
	}
	case DB_FOREIGN:
		snprintf(buf, n,
			 "%s is a SQLite database of another program (no tracer tables); "
			 "tracer leaves it alone",
			 path);
		break;
	case DB_OLDER:
		if (access(path, W_OK) != 0) {
			snprintf(buf, n,
				 "%s has schema version %d, written by an older tracer; this "
				 "tracer reads version %d and you cannot upgrade it (its owner "
				 "can, by restarting tracer-aggregator)",
				 path, probe->version, schema_latest_version());
			break;
		}
		snprintf(buf, n,
			 "%s has schema version %d; this tracer reads version %d: the "
			 "aggregator upgrades it when it next opens it (tracer run, or "
			 "restart tracer-aggregator)",
			 path, probe->version, schema_latest_version());
		break;
	case DB_NEWER:
		snprintf(buf, n,
			 "%s has schema version %d, newer than this tracer's %d: use a "
			 "newer tracer",
			 path, probe->version, schema_latest_version());
		break;
	}
	return buf;
}
