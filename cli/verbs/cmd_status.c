/*
 * tracer status [--db PATH] [--socket PATH] [--json]
 *
 * Is tracer healthy? Which probes are active, missing or disabled, what was
 * lost where (per hop and event type), whether the daemons are listening,
 * and what the aggregator refused. Exit status: 0 healthy, 3 degraded (any
 * loss, a missing probe, no collector heard from in the last minute, or no
 * daemon listening), 1 no tracer database there (missing, unreadable, empty,
 * not SQLite, another program's, another schema version), 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "aggregator/store/schema.h"
#include "cli/db/clidb.h"
#include "cli/db/dbkind.h"
#include "cli/model/health.h"
#include "cli/render/clierror.h"
#include "cli/render/format.h"
#include "cli/render/jsonfield.h"
#include "cli/render/status_text.h"
#include "cli/verbs/commands.h"
#include "common/ipc.h"
#include "common/paths.h"
#include "common/timeutil.h"

static json_t *query_rows(sqlite3 *db, const char *sql)
{
	return cli_rows_json(db, sql, 0);
}

/* The shipper's own state (its progress, dead letters, last error), if readable. */
static json_t *shipper_state(const char *path)
{
	sqlite3 *st = NULL;
	json_t *o = json_object();

	if (access(path, R_OK) != 0 ||
	    sqlite3_open_v2(path, &st, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(st);
		return o;
	}
	json_t *rows = query_rows(st, "SELECT key, value FROM shipper_state");
	size_t i;
	json_t *r;
	json_array_foreach(rows, i, r)
	{
		const char *k = jstr(r, "key"), *v = jstr(r, "value");
		bool text = !strcmp(k, "last_error") || !strcmp(k, "sink");
		json_object_set_new(o, k,
				    text ? json_string(v) : json_integer(strtoll(v, NULL, 10)));
	}
	json_decref(rows);
	rows = query_rows(st, "SELECT coalesce(sum(records), 0) AS n FROM dead_letters");
	json_object_set_new(o, "dead_letter_records",
			    json_integer(jint(json_array_get(rows, 0), "n")));
	json_decref(rows);
	sqlite3_close(st);
	return o;
}

/* The outbox and the shipper's health; NULL if shipping was never used. */
static json_t *shipping_status(sqlite3 *db, const char *state_path)
{
	json_t *ship = shipper_state(state_path);
	char sql[512];

	snprintf(sql, sizeof(sql),
		 "SELECT count(*) AS pending_records, total(length(payload)) AS pending_bytes, "
		 "min(created_ns) AS oldest_created_ns, (SELECT coalesce(sum(records), 0) FROM "
		 "outbox_drops) AS dropped_records FROM outbox WHERE id > %lld",
		 (long long)jint(ship, "delivered_through"));
	json_t *rows = query_rows(db, sql);
	json_t *s = json_incref(json_array_get(rows, 0));
	json_decref(rows);
	if (!s || (!jint(s, "pending_records") && !jint(s, "dropped_records") &&
		   !json_object_size(ship))) {
		json_decref(s);
		json_decref(ship);
		return NULL;
	}
	json_object_update(s, ship);
	json_decref(ship);
	json_object_set_new(
	    s, "pending_bytes",
	    json_integer((json_int_t)json_number_value(json_object_get(s, "pending_bytes"))));
	int64_t oldest = jint(s, "oldest_created_ns");
	json_object_set_new(s, "oldest_age_s",
			    oldest ? json_real((double)((int64_t)now_realtime_ns() - oldest) / 1e9)
				   : json_null());
	return s;
}

struct status_options {
	const char *db_path, *socket_path, *state_path;
	const char *config_path; /* the shipper's configuration: the outbox is on with it */
	bool as_json;
	bool socket_given; /* --socket: the daemons that write this database listen there */
};

static const char status_usage[] =
    "usage: tracer status [--db PATH] [--socket PATH] [--shipper-state PATH]\n"
    "                     [--shipper-config PATH] [--json]\n"
    "  is tracer healthy: daemons listening, probes, events lost per hop, shipping.\n"
    "  The daemons' socket counts only for their database (the default) or with\n"
    "  --socket: a tracer run database needs no daemons.\n"
    "  Exit status: 0 healthy; 3 degraded (the first line says why); 1 no tracer\n"
    "  database at PATH (missing, empty, not SQLite, another program's, other\n"
    "  schema version); 2 usage.\n";

/* 0: go on; otherwise the exit code (help printed, or a usage error). */
static int parse_status_options(int argc, char **argv, struct status_options *o)
{
	static const struct option longopts[] = {
	    {"db", required_argument, 0, 'd'},
	    {"socket", required_argument, 0, 's'},
	    {"shipper-state", required_argument, 0, 'S'},
	    {"shipper-config", required_argument, 0, 'C'},
	    {"json", no_argument, 0, 'j'},
	    {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0},
	};
	int c;

	*o = (struct status_options){cli_default_db(),
				     TRACER_DEFAULT_SOCKET,
				     TRACER_DEFAULT_SHIPPER_STATE,
				     TRACER_DEFAULT_SHIPPER_CONFIG,
				     false,
				     false};
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->db_path = optarg;
			break;
		case 's':
			o->socket_path = optarg;
			o->socket_given = true;
			break;
		case 'S':
			o->state_path = optarg;
			break;
		case 'C':
			o->config_path = optarg;
			break;
		case 'j':
			o->as_json = true;
			break;
		case 'h':
			printf("%s", status_usage);
			return -1;
		default:
			fprintf(stderr, "%s", status_usage);
			return 2;
		}
	}
	return 0;
}

/*
 * PRAGMA quick_check's first answer: "ok", or what is damaged; then, as the
 * aggregator checks at its start, whether a table or index of the schema was
 * dropped (which it refuses).
 */
static json_t *database_check(sqlite3 *db)
{
	sqlite3_stmt *st;
	json_t *answer = NULL;
	char missing[160], text[256];

	if (sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		answer = json_string((const char *)sqlite3_column_text(st, 0));
	else
		answer = json_string(sqlite3_errmsg(db));
	sqlite3_finalize(st);
	if (answer && !strcmp(json_string_value(answer), "ok") &&
	    schema_missing_object(db, missing, sizeof(missing))) {
		snprintf(text, sizeof(text),
			 "its %s is gone (dropped by hand?): the aggregator refuses it", missing);
		json_decref(answer);
		answer = json_string(text);
	}
	return answer ? answer : json_string("cannot be checked");
}

/* Why the aggregator cannot write the database file; NULL if it can (as far as its mode says). */
static const char *read_only_reason(const char *db_path, char *buf, size_t size)
{
	struct stat st;
	struct statvfs fs;

	if (statvfs(db_path, &fs) == 0 && (fs.f_flag & ST_RDONLY))
		return "it is on a read-only filesystem";
	if (stat(db_path, &st) == 0 && !(st.st_mode & S_IWUSR)) {
		snprintf(buf, size, "its file is read-only (mode %04o)",
			 (unsigned)st.st_mode & 07777);
		return buf;
	}
	return NULL;
}

/* Free space where the database (and its WAL) grows; -1 if unknown. */
static int64_t free_bytes_beside(const char *db_path)
{
	char dir[4096];
	struct statvfs fs;

	snprintf(dir, sizeof(dir), "%s", db_path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (statvfs(dir, &fs) != 0)
		return -1;
	return (int64_t)fs.f_bavail * (int64_t)fs.f_frsize;
}

/* Whether two paths name one file (the daemons' database under another name). */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
		return strcmp(a, b) == 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Everything status reports, as one document. */
/* schema_version: as db_probe_open read it (the probe already asked SQLite). */
/* Whether the daemons that write this database listen, and how that is known. */
struct listening {
	bool listening;
	bool hidden;	 /* the socket is not open to this user */
	bool seen_in_db; /* ... and a collector wrote the database in the last minute */
	bool daemons_db; /* the socket is that of the daemons writing this database */
};

static void daemons_listening(sqlite3 *db, const struct status_options *o, struct listening *l)
{
	l->listening = ipc_probe(o->socket_path);
	/* The installed daemons' socket is theirs alone: a tracer-group user cannot
	 * probe it, and the database answers for it instead (a collector that wrote
	 * in the last minute), so every reader gets root's answer. */
	struct stat sock_st;
	l->hidden = !l->listening && stat(o->socket_path, &sock_st) != 0 && errno == EACCES;
	l->seen_in_db = l->hidden && health_collector_writing(db) == 1;
	if (l->seen_in_db)
		l->listening = true;
	/* Whether the socket is that of the daemons writing this database: the one
	 * named, the one whose aggregator announces this database, or the default
	 * one for the default database. Another database (tracer run's) needs none. */
	char announced[4096];
	l->daemons_db = o->socket_given ||
			(cli_announced_db(o->socket_path, announced, sizeof(announced)) &&
			 same_file(o->db_path, announced)) ||
			same_file(o->db_path, TRACER_DEFAULT_DB);
}

static json_t *status_document(sqlite3 *db, const struct status_options *o, off_t db_bytes,
			       int schema_version)
{
	json_t *doc = json_object();
	json_t *streams =
	    query_rows(db, "SELECT * FROM collector_stats ORDER BY last_seen_ns DESC");
	json_t *losses =
	    query_rows(db, "SELECT hop, event_type, sum(count) AS count FROM event_loss "
			   "GROUP BY hop, event_type HAVING sum(count) > 0 "
			   "ORDER BY hop, event_type");
	json_t *aggs = query_rows(db, "SELECT * FROM aggregator_stats ORDER BY id DESC LIMIT 1");
	json_t *shipping = shipping_status(db, o->state_path);
	json_t *check = database_check(db);
	int64_t free_bytes = free_bytes_beside(o->db_path);
	char ro_text[64];
	const char *read_only = read_only_reason(o->db_path, ro_text, sizeof(ro_text));

	struct listening l;
	daemons_listening(db, o, &l);
	struct health_input in = {
	    .streams = streams,
	    .losses = losses,
	    .agg = json_array_get(aggs, 0),
	    .shipping = shipping,
	    .db_check = json_string_value(check),
	    .db_free_bytes = free_bytes,
	    .db_read_only = read_only,
	    .now_epoch_ns = (int64_t)now_realtime_ns(),
	};
	char why[2600];
	const char *problem = health_problem(&in, why, sizeof(why));
	if (!problem && !l.listening && l.daemons_db) {
		snprintf(why, sizeof(why),
			 l.hidden ? "the daemons on %s are not running: no collector wrote this "
				    "database in the last minute (their socket is not open to this "
				    "user)"
				  : "the daemons are not listening on %s",
			 o->socket_path);
		problem = why;
	}
	json_object_set_new(doc, "healthy", json_boolean(!problem));
	json_object_set_new(doc, "problem", problem ? json_string(problem) : json_null());
	json_object_set_new(doc, "db", json_string(o->db_path));
	json_object_set_new(doc, "db_bytes", json_integer(db_bytes));
	json_object_set_new(doc, "db_check", check);
	json_object_set_new(doc, "db_read_only", read_only ? json_string(read_only) : json_null());
	json_object_set_new(doc, "db_free_bytes",
			    free_bytes >= 0 ? json_integer(free_bytes) : json_null());
	json_object_set_new(doc, "schema_version", json_integer(schema_version));
	json_object_set_new(doc, "socket", json_string(o->socket_path));
	json_object_set_new(doc, "listening", json_boolean(l.listening));
	json_object_set_new(doc, "listening_known_by",
			    json_string(l.seen_in_db ? "database"
					: l.hidden   ? "nothing"
						     : "socket"));
	json_object_set_new(doc, "daemons_database", json_boolean(l.daemons_db));
	json_object_set_new(doc, "collectors", streams);
	json_object_set_new(doc, "losses", losses);
	json_object_set(doc, "aggregator",
			json_array_get(aggs, 0) ? json_array_get(aggs, 0) : json_null());
	json_decref(aggs);
	if (shipping)
		json_object_set_new(doc, "shipping", shipping);
	/* The daemons' database: whether a shipper is configured, so the outbox is on. */
	if (l.daemons_db)
		json_object_set_new(doc, "shipper_configured",
				    json_boolean(access(o->config_path, F_OK) == 0));
	json_object_set_new(doc, "shipper_config", json_string(o->config_path));
	return doc;
}

int cmd_status(int argc, char **argv)
{
	struct status_options o;
	sqlite3 *db;
	struct stat st;
	int rc = parse_status_options(argc, argv, &o);

	if (rc != 0)
		return rc < 0 ? 0 : rc;
	struct db_probe probe;
	db_probe_open(o.db_path, &probe);
	if (probe.kind != DB_TRACER || stat(o.db_path, &st) != 0) {
		char why[1024];
		db_probe_problem(&probe, o.db_path, why, sizeof(why));
		if (o.as_json) {
			json_t *doc = json_pack("{s:b, s:s, s:s}", "healthy", 0, "db", o.db_path,
						"problem", why);
			cli_print_json(doc);
			json_decref(doc);
		}
		fprintf(stderr, "tracer status: %s\n", why);
		sqlite3_close(probe.db);
		return 1;
	}
	db = probe.db;
	json_t *doc = status_document(db, &o, st.st_size, probe.version);
	bool healthy = json_is_true(json_object_get(doc, "healthy"));
	if (o.as_json) {
		cli_print_json(doc);
	} else {
		status_print_text(doc);
	}
	json_decref(doc);
	sqlite3_close(db);
	return healthy ? 0 : 3;
}
