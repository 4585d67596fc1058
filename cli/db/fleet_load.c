/*
 * What a verb reads, copied from the fleet store into an in-memory database
 * created by our own migrations (aggregator/store/schema.c): the verb then runs
 * its own SQL on it. Every read is FINAL (one row per record) and bounded: the
 * newest FLEET_RUNS_MAX runs for `runs`; one run's steps, processes, signals,
 * samples, and its host's samples and collector rows around it for the others.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/store/schema.h"
#include "cli/db/fleet.h"
#include "cli/db/fleet_join.h"
#include "cli/render/clierror.h"
#include "common/log.h"

#define FLEET_RUNS_MAX 5000
/* `runs` lists N: it reads 4 N (at least 200), so that the joined jobs' own runs it
 * folds into their submitters' rows still leave N to list. */
#define FLEET_RUNS_READ(n) ((n)*4 < 200 ? 200 : (n)*4 > FLEET_RUNS_MAX ? FLEET_RUNS_MAX : (n)*4)
/* `idle HOST` reads this many days of the host's samples before its newest. */
#define FLEET_IDLE_DAYS 8
/* Host samples this long before and after a run belong to its report. */
#define HOST_SAMPLE_MARGIN_NS INT64_C(60000000000)

/* A host id or hostname as a verb's argument names it: nothing to escape. */
static bool plain_token(const char *s)
{
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
			return false;
	return true;
}

static long copy_rows(sqlite3 *db, const char *verb, const char *table, const char *where,
		      const struct fleet_remap *m)
{
	return fleet_copy_remapped(db, verb, table, table, where, m);
}

/*
 * One run's records: its steps, processes, signals, samples, and its host's around it;
 * then the batch jobs its steps submitted that ran on other hosts, joined under those
 * steps (fleet_join.c).
 */
static int load_run(sqlite3 *db, const char *verb, const char *host, int64_t id)
{
	char where[2048], cond[64], h[300], procs[1024];
	const char *db_name = fleet_database();

	fleet_quote(host, h, sizeof(h));
	snprintf(cond, sizeof(cond), "id = %" PRId64, id);
	if (fleet_copy_keyed(db, verb, "runs", h, cond) < 0)
		return -1;
	snprintf(cond, sizeof(cond), "run_id = %" PRId64, id);
	if (fleet_copy_keyed(db, verb, "steps", h, cond) < 0 ||
	    fleet_copy_keyed(db, verb, "processes", h, cond) < 0 ||
	    fleet_copy_keyed(db, verb, "signals", h, cond) < 0)
		return -1;
	/* The run's processes, found by their keys as fleet_copy_keyed finds them. */
	snprintf(procs, sizeof(procs),
		 "SELECT %%s FROM `%s`.processes FINAL PREWHERE _host = %s AND _key IN (SELECT "
		 "_key FROM `%s`.processes WHERE _host = %s AND %s) WHERE %s AND _withdrawn = 0",
		 db_name, h, db_name, h, cond, cond);
	char sub[1100];
	snprintf(sub, sizeof(sub), procs, "id");
	/* A sample's process is part of its key: the same in every copy. */
	snprintf(where, sizeof(where), "_host = %s AND process_id IN (%s)", h, sub);
	if (fleet_copy_prewhere(db, verb, "samples", where, NULL) < 0)
		return -1;
	snprintf(sub, sizeof(sub), procs, "tool_id");
	snprintf(where, sizeof(where), "_host = %s AND id IN (%s)", h, sub);
	if (copy_rows(db, verb, "tools", where, NULL) < 0)
		return -1;
	int64_t start, end;
	fleet_run_span(db, &start, &end);
	snprintf(
	    where, sizeof(where),
	    "_host = %s AND ts_ns >= %" PRId64 " AND (ts_ns <= %" PRId64 " OR %" PRId64 " = 0)", h,
	    (int64_t)(start - HOST_SAMPLE_MARGIN_NS), (int64_t)(end + HOST_SAMPLE_MARGIN_NS), end);
	/* A host sample's time is its key: the same in every copy. */
	if (fleet_copy_prewhere(db, verb, "host_samples", where, NULL) < 0)
		return -1;
	snprintf(where, sizeof(where), "_host = %s ORDER BY _version DESC LIMIT 50", h);
	if (copy_rows(db, verb, "collector_stats", where, NULL) < 0 ||
	    fleet_load_energy(db, verb, host) < 0)
		return -1;
	/* cost splits the run's host's cost: its other processes then, not other hosts' jobs */
	return strcmp(verb, "cost") ? fleet_join_batch(db, verb, host, id)
				    : fleet_load_window(db, verb, host, id);
}

/* The (host, id) pairs of the store's runs that sql selects, as JSON rows; NULL said why. */
static json_t *run_candidates(const char *verb, const char *prewhere, const char *where)
{
	char sql[2700];

	snprintf(sql, sizeof(sql),
		 "SELECT _host, toString(id) AS rid, hostname FROM `%s`.runs FINAL PREWHERE %s "
		 "WHERE (%s) AND _withdrawn = 0 ORDER BY start_ns DESC LIMIT 20 FORMAT JSONEachRow",
		 fleet_database(), prewhere, where);
	return fleet_rows_of(verb, sql);
}

static const char *field(json_t *r, const char *name)
{
	const char *s = json_string_value(json_object_get(r, name));
	return s ? s : "";
}

/* The host a HOST:ID names among candidates: its host id, a unique prefix of one, or its
 * hostname when only one host has it. NULL if none or several. */
static json_t *pick_host(json_t *rows, const char *host)
{
	json_t *prefix = NULL, *named = NULL, *r;
	int n_prefix = 0, n_named = 0;
	size_t i;

	json_array_foreach(rows, i, r)
	{
		if (!strcmp(field(r, "_host"), host))
			return r;
		if (!strncmp(field(r, "_host"), host, strlen(host)) && ++n_prefix)
			prefix = r;
		if (!strcmp(field(r, "hostname"), host) && ++n_named)
			named = r;
	}
	return n_prefix == 1 ? prefix : n_named == 1 ? named : NULL;
}

/* The run q->arg names (HOST:ID, an id or name unique in the fleet, or none: the newest). */
static int resolve_run(const struct cli_query *q, char *host, size_t size, int64_t *id)
{
	char where[2048], lit[600], key[40] = "1";
	const char *arg = q->arg, *colon = arg ? strrchr(arg, ':') : NULL;
	char *end;

	if (colon) {
		*id = strtoll(colon + 1, &end, 10);
		snprintf(host, size, "%.*s", (int)(colon - arg), arg);
		if (*end || *id <= 0 || !host[0] || !plain_token(host)) {
			cli_error(q->verb,
				  "'%s': a fleet run is HOST:ID (tracer --fleet URL runs)\n", arg);
			return -1;
		}
		/* The host in the query too: every host has a run 1, 2, ... and only 20
		 * candidates come back. */
		fleet_quote(host, lit, sizeof(lit));
		snprintf(where, sizeof(where),
			 "id = %" PRId64 " AND (substring(_host, 1, length(%s)) = %s OR "
			 "hostname = %s)",
			 *id, lit, lit, lit);
		/* A run's key is its id: only the granules holding it are read. */
		snprintf(key, sizeof(key), "_key = '%" PRId64 "'", *id);
	} else if (arg) {
		fleet_quote(arg, lit, sizeof(lit));
		snprintf(where, sizeof(where), "name = %s OR toString(id) = %s", lit, lit);
	} else {
		snprintf(where, sizeof(where), "1");
	}
	json_t *rows = run_candidates(q->verb, key, where), *r = NULL;
	if (!rows)
		return -1;
	if (colon)
		r = pick_host(rows, host);
	else if (json_array_size(rows) == 1 || (!arg && json_array_size(rows)))
		r = json_array_get(rows, 0);
	if (!r) {
		if (json_array_size(rows) > 1 && !colon)
			cli_error(q->verb,
				  "'%s' names %zu runs in the fleet: name one as HOST:ID "
				  "(e.g. %s:%s)\n",
				  arg, json_array_size(rows),
				  field(json_array_get(rows, 0), "_host"),
				  field(json_array_get(rows, 0), "rid"));
		else
			cli_error(q->verb,
				  arg ? "no run '%s' in the fleet store\n"
				      : "no runs in the fleet store%s\n",
				  arg ? arg : "");
		json_decref(rows);
		return -1;
	}
	snprintf(host, size, "%s", field(r, "_host"));
	*id = strtoll(field(r, "rid"), NULL, 10);
	json_decref(rows);
	return 0;
}

static bool append(char **buf, size_t *len, size_t *cap, const char *text)
{
	size_t n = strlen(text);

	if (*len + n + 1 > *cap) {
		size_t grown = (*cap + n + 1) * 2;
		char *b = realloc(*buf, grown);
		if (!b)
			return false;
		*buf = b, *cap = grown;
	}
	memcpy(*buf + *len, text, n + 1);
	*len += n;
	return true;
}

/* The newest runs (of the pipeline named) across the fleet, numbered oldest first into
 * fleet_runs so that the newest has the highest number, as on one host; returns them as
 * a list of (_host, id) for IN (malloc'd; "" if none), NULL said why. */
static char *newest_runs(sqlite3 *db, const struct cli_query *q, int n_read)
{
	char pipeline[700] = "1", sql[2048], err[1024], pair[400], h[300];
	sqlite3_stmt *add;

	if (q->arg) {
		char lit[600];
		fleet_quote(q->arg, lit, sizeof(lit));
		snprintf(pipeline, sizeof(pipeline), "pipeline = %s", lit);
	}
	snprintf(
	    sql, sizeof(sql),
	    "SELECT _host, toString(id) AS rid FROM (SELECT _host, id, start_ns FROM `%s`.runs "
	    "FINAL WHERE %s ORDER BY start_ns DESC, _host, id DESC LIMIT %d) ORDER BY "
	    "start_ns, _host, id FORMAT JSONEachRow",
	    fleet_database(), pipeline, n_read);
	char *text = fleet_query(sql, err, sizeof(err));
	if (!text) {
		cli_error(q->verb, "%s\n", err);
		return NULL;
	}
	size_t len = 0, cap = 0;
	char *list = NULL;
	bool ok = append(&list, &len, &cap, "");
	sqlite3_prepare_v2(db, "INSERT INTO fleet_runs (host, host_run_id) VALUES (?, ?)", -1, &add,
			   NULL);
	for (char *line = strtok(text, "\n"); ok && line; line = strtok(NULL, "\n")) {
		json_t *r = json_loads(line, 0, NULL);
		int64_t rid = strtoll(field(r, "rid"), NULL, 10);
		sqlite3_reset(add);
		sqlite3_bind_text(add, 1, field(r, "_host"), -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(add, 2, rid);
		sqlite3_step(add);
		fleet_quote(field(r, "_host"), h, sizeof(h));
		snprintf(pair, sizeof(pair), "%s(%s, %" PRId64 ")", len ? ", " : "", h, rid);
		ok = append(&list, &len, &cap, pair);
		json_decref(r);
	}
	sqlite3_finalize(add);
	free(text);
	if (!ok) {
		cli_error(q->verb, "out of memory\n");
		free(list);
		return NULL;
	}
	return list;
}

/* `runs`: the newest runs of every host, numbered anew (ids repeat across hosts); the
 * temporary table fleet_runs says whose each is. Read by their keys, listed in the
 * query (not a subquery each table would run again under FINAL). */
static int load_runs_list(sqlite3 *db, const struct cli_query *q)
{
	const char *verb = q->verb;
	int n_read = FLEET_RUNS_READ(q->list_limit > 0 ? q->list_limit : 20);
	sqlite3_stmt *lookup;

	if (sqlite3_exec(db,
			 "CREATE TEMP TABLE fleet_runs (id INTEGER PRIMARY KEY, host TEXT NOT NULL,"
			 " host_run_id INTEGER NOT NULL, UNIQUE (host, host_run_id))",
			 NULL, NULL, NULL) != SQLITE_OK)
		return -1;
	char *list = newest_runs(db, q, n_read), *where = NULL;
	if (!list)
		return -1;
	long n = 0;
	sqlite3_prepare_v2(db, "SELECT id FROM fleet_runs WHERE host = ? AND host_run_id = ?", -1,
			   &lookup, NULL);
	struct fleet_remap runs = {"id", lookup, false}, signals = {"run_id", lookup, true};
	/* PREWHERE on the record's own key (the same in every copy): only the listed runs'
	 * granules are read, not every column of every run. */
	if (*list && asprintf(&where, "(_host, id) IN (%s)", list) > 0) {
		n = fleet_copy_prewhere(db, verb, "runs", where, &runs);
		free(where);
		where = NULL;
	}
	if (*list && n >= 0 &&
	    asprintf(&where, "severity IN ('critical', 'warning') AND (_host, run_id) IN (%s)",
		     list) > 0)
		n = copy_rows(db, verb, "signals", where, &signals);
	free(where);
	free(list);
	if (n >= 0)
		n = copy_rows(db, verb, "collector_stats",
			      "1 ORDER BY _version DESC LIMIT 20 BY _host", NULL);
	sqlite3_finalize(lookup);
	/* A run with batch jobs on other hosts is one row, as show reads it. */
	if (n >= 0)
		n = fleet_join_runs_list(db, verb);
	return n < 0 ? -1 : 0;
}

/* The host q->arg names among those that shipped collector rows (as pick_host). */
static int resolve_host(const struct cli_query *q, char *host, size_t size)
{
	char sql[512], err[1024];

	if (!q->arg || !plain_token(q->arg)) {
		cli_error(q->verb, "'%s': name a host (tracer --fleet idle lists them)\n",
			  q->arg ? q->arg : "");
		return -1;
	}
	snprintf(
	    sql, sizeof(sql),
	    "SELECT DISTINCT _host, hostname FROM `%s`.collector_stats FINAL FORMAT JSONEachRow",
	    fleet_database());
	char *text = fleet_query(sql, err, sizeof(err));
	if (!text) {
		cli_error(q->verb, "%s\n", err);
		return -1;
	}
	json_t *rows = json_array(), *r;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		if ((r = json_loads(line, 0, NULL)))
			json_array_append_new(rows, r);
	free(text);
	r = pick_host(rows, q->arg);
	if (r)
		snprintf(host, size, "%s", field(r, "_host"));
	else
		cli_error(q->verb,
			  "no host '%s' in the fleet store (tracer --fleet idle lists them)\n",
			  q->arg);
	json_decref(rows);
	return r ? 0 : -1;
}

/* One table of the host's idle rows: the store's SELECT, as TabSeparated, into insert
 * (its parameters' types as fleet_copy_tsv takes them): the rows copied, -1 said why. */
static long copy_idle_table(sqlite3 *db, const char *verb, const char *insert, const char *types,
			    const char *select)
{
	char *sql = NULL;
	long rows = asprintf(&sql, "%s FORMAT TabSeparated", select) < 0
			? -1
			: fleet_copy_tsv(db, verb, sql, insert, types);

	free(sql);
	return rows;
}

/* Only what idle reads (cmd_idle.c): the samples' time, interval and CPU; the runs' id,
 * name, span and step count; their steps' spans. PREWHERE on the host only (the same in
 * every copy, a tombstone's too); the rest after FINAL, so withdrawn rows stay out. */
int fleet_load_idle_host(sqlite3 *db, const char *verb, const char *host)
{
	char sql[2048], since[512], runs[1024], h[300];
	const char *d = fleet_database();

	fleet_quote(host, h, sizeof(h));
	/* FLEET_IDLE_DAYS back from the host's newest sample */
	snprintf(since, sizeof(since),
		 "(SELECT ifNull(max(ts_ns), 0) FROM `%s`.host_samples WHERE _host = %s) - %d * "
		 "86400000000000",
		 d, h, FLEET_IDLE_DAYS);
	snprintf(sql, sizeof(sql),
		 "SELECT ts_ns, interval_ns, cpu_busy_pct FROM `%s`.host_samples FINAL PREWHERE "
		 "_host = %s WHERE ts_ns > %s ORDER BY ts_ns DESC LIMIT 2000000",
		 d, h, since);
	if (copy_idle_table(
		db, verb,
		"INSERT OR REPLACE INTO host_samples (ts_ns, interval_ns, cpu_busy_pct) "
		"VALUES (?, ?, ?)",
		"iir", sql) < 0)
		return -1;
	snprintf(runs, sizeof(runs),
		 "FROM `%s`.runs FINAL PREWHERE _host = %s WHERE _withdrawn = 0 AND (end_ns IS "
		 "NULL OR end_ns > %s)",
		 d, h, since);
	snprintf(sql, sizeof(sql), "SELECT id, name, start_ns, end_ns, steps %s", runs);
	if (copy_idle_table(
		db, verb,
		"INSERT OR REPLACE INTO runs (id, name, start_ns, end_ns, steps) VALUES "
		"(?, ?, ?, ?, ?)",
		"itiii", sql) < 0)
		return -1;
	/* The steps of those runs (their key: unique in a run): idle's gaps inside runs are where
	 * none of them ran. */
	snprintf(
	    sql, sizeof(sql),
	    "SELECT run_id, key, start_ns, end_ns FROM `%s`.steps FINAL PREWHERE _host = %s WHERE "
	    "_withdrawn = 0 AND run_id IN (SELECT id %s AND steps > 0)",
	    d, h, runs);
	if (copy_idle_table(
		db, verb,
		"INSERT OR REPLACE INTO steps (run_id, key, start_ns, end_ns, kind, status) "
		"VALUES (?, ?, ?, ?, '', '')",
		"itii", sql) < 0)
		return -1;
	snprintf(sql, sizeof(sql), "_host = %s ORDER BY _version DESC LIMIT 50", h);
	return copy_rows(db, verb, "collector_stats", sql, NULL) < 0 ? -1 : 0;
}

sqlite3 *fleet_memory_db(const char *verb)
{
	sqlite3 *db;

	/* Our migrations build the copy; their progress lines are no news to the reader. */
	enum log_level level = log_get_level();
	log_set_level(LOG_LVL_ERROR);
	int made = sqlite3_open(":memory:", &db) == SQLITE_OK && schema_migrate(db) == 0;
	log_set_level(level);
	if (!made) {
		cli_error(verb, "cannot create the in-memory database for the fleet store\n");
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

sqlite3 *fleet_open(struct cli_query *q)
{
	static char id_text[32];
	sqlite3 *db = fleet_memory_db(q->verb);
	char host[300];
	int64_t id;

	if (!db)
		return NULL;
	if (!strcmp(q->verb, "runs")) {
		if (load_runs_list(db, q) == 0)
			return db;
	} else if (!strcmp(q->verb, "show") || !strcmp(q->verb, "signals") ||
		   !strcmp(q->verb, "explain") || !strcmp(q->verb, "report") ||
		   !strcmp(q->verb, "timeline") || !strcmp(q->verb, "cost") ||
		   !strcmp(q->verb, "recommend") || !strcmp(q->verb, "energy")) {
		if (resolve_run(q, host, sizeof(host), &id) == 0 &&
		    load_run(db, q->verb, host, id) == 0) {
			snprintf(id_text, sizeof(id_text), "%" PRId64, id);
			q->arg = id_text;
			return db;
		}
	} else if (!strcmp(q->verb, "idle")) {
		if (resolve_host(q, host, sizeof(host)) == 0 &&
		    fleet_load_idle_host(db, q->verb, host) == 0)
			return db;
	} else {
		cli_error(q->verb,
			  "not available over the fleet yet (runs, show, signals, explain, "
			  "report, timeline, top, cost, recommend, energy and idle are)\n");
	}
	sqlite3_close(db);
	return NULL;
}

void fleet_label_runs(sqlite3 *db, json_t *rows)
{
	sqlite3_stmt *st;
	json_t *r;
	size_t i;

	if (!fleet_active() ||
	    sqlite3_prepare_v2(db, "SELECT host, host_run_id FROM fleet_runs WHERE id = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return;
	json_array_foreach(rows, i, r)
	{
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, json_integer_value(json_object_get(r, "id")));
		if (sqlite3_step(st) != SQLITE_ROW)
			continue;
		json_object_set_new(r, "id", json_integer(sqlite3_column_int64(st, 1)));
		json_object_set_new(r, "host",
				    json_string((const char *)sqlite3_column_text(st, 0)));
	}
	sqlite3_finalize(st);
}

int fleet_host_width(json_t *rows)
{
	size_t i, width = 4;
	json_t *r;

	if (!fleet_active())
		return 0;
	json_array_foreach(rows, i, r)
	{
		size_t n = strlen(field(r, "host"));
		width = n > width ? n : width;
	}
	return (int)(width < 40 ? width : 40);
}
