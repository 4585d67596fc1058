/* tracer runs [--db PATH] [--json] [--limit N] [PIPELINE]: recorded runs, newest first. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/db/clidb.h"
#include "cli/db/fleet.h"
#include "cli/model/health.h"
#include "cli/render/clierror.h"
#include "cli/render/export.h"
#include "cli/render/format.h"
#include "cli/render/jsonfield.h"
#include "cli/verbs/commands.h"
#include "common/timeutil.h"

static const char usage[] =
    "usage: tracer runs [--db PATH] [--json | --format tsv|csv|json] [--limit N] [PIPELINE]\n"
    "  recorded runs, newest first (of one pipeline if given)\n"
    "  --format: one row per run, columns in docs/export.md\n";

/* --format's columns (docs/export.md): add, never rename. */
static const char *const run_columns[] = {
    "id",	   "name",     "pipeline",  "engine", "source",		  "status",
    "start",	   "end",      "start_ns",  "end_ns", "wall_ns",	  "cpu_ns",
    "peak_rss_kb", "steps",    "processes", "images", "failed_processes", "critical_signals",
    "warnings",	   "hostname", "arch",	    NULL,
};

/* The newest runs (of one pipeline if named), as JSON rows; NULL on a database error. */
static json_t *load_runs(sqlite3 *db, const char *pipeline, long limit)
{
	const char *sql =
	    "SELECT r.id, r.name, r.pipeline, r.engine, r.source, r.status, r.start_ns, r.end_ns,"
	    " strftime('%Y-%m-%dT%H:%M:%fZ', r.start_ns / 1e9, 'unixepoch') AS start,"
	    " strftime('%Y-%m-%dT%H:%M:%fZ', r.end_ns / 1e9, 'unixepoch') AS end,"
	    " r.end_ns - r.start_ns AS wall_ns, r.cpu_ns, r.peak_rss_kb, r.steps, r.processes,"
	    " r.images, r.hostname, r.arch, r.failed_processes, (SELECT count(*) FROM signals g "
	    "WHERE g.run_id = r.id AND"
	    " g.severity = 'critical') AS critical_signals, (SELECT count(*) FROM signals g WHERE"
	    " g.run_id = r.id AND g.severity = 'warning') AS warnings,"
	    " CASE WHEN r.end_ns IS NULL THEN " HEALTH_RUN_WATCHED_SQL(
		"?3") " END AS watched,"
		      " CASE WHEN r.end_ns IS NULL THEN " HEALTH_RUN_LAST_HEARD_SQL
		      " END AS last_heard_ns"
		      " FROM runs r WHERE ?1 IS NULL OR r.pipeline = ?1 ORDER BY r.id DESC LIMIT "
		      "?2";
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return NULL;
	if (pipeline)
		sqlite3_bind_text(st, 1, pipeline, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, limit > 0 ? limit : 20);
	sqlite3_bind_int64(st, 3, (int64_t)now_realtime_ns() - liveness_stale_ns());
	json_t *rows = json_array();
	while (sqlite3_step(st) == SQLITE_ROW)
		json_array_append_new(rows, cli_row_object(st));
	sqlite3_finalize(st);
	return rows;
}

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

/*
 * The table's shape for a terminal's width: every column from WIDE_COLUMNS
 * up; below, engine, peak memory and steps are left out and the name takes
 * what is left, so no line wraps (a pipe gets the wide table).
 */
#define WIDE_COLUMNS 125
struct runs_layout {
	bool wide;
	int name, pipeline;
	int host; /* --fleet: the HOST column's width (0: none) */
};

/* Not a terminal: the wide table, its name columns as wide as the longest name. */
static struct runs_layout piped_layout(json_t *rows)
{
	struct runs_layout l = {true, 30, 16, 0};
	size_t i;
	json_t *r;

	json_array_foreach(rows, i, r)
	{
		int name = (int)strlen(jstr(r, "name")),
		    pipeline = (int)strlen(jstr(r, "pipeline"));
		l.name = name > l.name ? (name < 200 ? name : 200) : l.name;
		l.pipeline = pipeline > l.pipeline ? (pipeline < 100 ? pipeline : 100) : l.pipeline;
	}
	return l;
}

static struct runs_layout layout_for(int columns)
{
	/* narrow: id 5, pipeline 12, status 8, started 16, wall 7, cpu 7, alerts 6, spaces 7 */
	const int narrow_fixed = 5 + 12 + 8 + 16 + 7 + 7 + 6 + 7;

	if (columns <= 0 || columns >= WIDE_COLUMNS)
		return (struct runs_layout){true, 30, 16, 0};
	int name = columns - narrow_fixed;
	return (struct runs_layout){false, name < 8 ? 8 : name, 12, 0};
}

static void print_header(const struct runs_layout *l, const char *zone)
{
	char started[40], name[128];

	snprintf(started, sizeof(started), "STARTED%s%s", zone[0] ? " " : "", zone);
	format_column("NAME", l->name, name, sizeof(name));
	if (l->host)
		printf("%-*s ", l->host, "HOST");
	if (l->wide)
		printf("%-5s %s %-*s %-10s %-8s %-20s %9s %9s %9s %5s %6s\n", "ID", name,
		       l->pipeline, "PIPELINE", "ENGINE", "STATUS", started, "WALL", "CPU",
		       "PEAK MEM", "STEPS", "ALERTS");
	else
		printf("%-5s %s %-12s %-8s %-16s %7s %7s %6s\n", "ID", name, "PIPELINE", "STATUS",
		       started, "WALL", "CPU", "ALERTS");
}

/* A run with no end that no collector of its host watches now: "running" would be stale. */
static bool run_state_unknown(json_t *r)
{
	json_t *watched = json_object_get(r, "watched");

	return json_is_null(json_object_get(r, "end_ns")) && watched && !json_is_true(watched);
}

/* Over the fleet, an unknown run's host stopped reporting: whose records are missing. */
static void print_missing_hosts(json_t *rows, const char *ago, int columns)
{
	/* hosts is ", a, b," while it grows: each name found whole as ", name,". */
	char text[1024], hosts[640] = ",", item[300];
	size_t i;
	json_t *r;

	json_array_foreach(rows, i, r)
	{
		const char *h = *jstr(r, "hostname") ? jstr(r, "hostname") : jstr(r, "host");
		snprintf(item, sizeof(item), " %s,", h);
		if (run_state_unknown(r) && !strstr(hosts, item) &&
		    strlen(hosts) + strlen(item) < sizeof(hosts))
			strcat(hosts, item);
	}
	hosts[strlen(hosts) - 1] = '\0';
	snprintf(text, sizeof(text),
		 "unknown: not ended when its host last reported (the latest %s ago), and it "
		 "stopped reporting: the records of%s are missing, so its end was not seen "
		 "(tracer --fleet idle lists the hosts that stopped reporting).",
		 ago, hosts + 1);
	print_fitted(stdout, text, columns);
}

/* Why a run reads "unknown", once under the table, with when its collector was last heard. */
static void print_unknown_note(json_t *rows, int columns)
{
	char text[512], ago[32];
	int64_t heard = -1;
	size_t i;
	json_t *r;

	json_array_foreach(rows, i, r)
	{
		if (run_state_unknown(r) && jint(r, "last_heard_ns") > heard)
			heard = jint(r, "last_heard_ns");
	}
	if (heard < 0)
		return;
	format_duration((int64_t)now_realtime_ns() - heard, ago, sizeof(ago));
	if (fleet_active()) {
		print_missing_hosts(rows, ago, columns);
		return;
	}
	if (heard)
		snprintf(
		    text, sizeof(text),
		    "unknown: not ended when a collector of its host last wrote here (%s ago), "
		    "and none has since: its end was not seen (tracer status says why). Its "
		    "WALL is up to then.",
		    ago);
	else
		snprintf(
		    text, sizeof(text),
		    "unknown: not ended, and no collector of its host ever wrote here: its end "
		    "was not seen (tracer status says why).");
	print_fitted(stdout, text, columns);
}

static void print_run(const struct cli_query *q, const struct runs_layout *l, json_t *r)
{
	char start[40], wall[32], cpu[32], mem[32], alerts[32];
	long long crit = jint(r, "critical_signals"), warn = jint(r, "warnings");

	format_time(jint(r, "start_ns"), start, sizeof(start));
	start[l->wide ? 19 : 16] = '\0';
	bool unknown = run_state_unknown(r);
	if (json_is_null(json_object_get(r, "end_ns"))) {
		/* Not ended: how long so far, or until its collector was last heard from. */
		struct run_liveness seen = {!unknown, jint(r, "last_heard_ns")};
		format_duration(
		    health_so_far_ns(&seen, jint(r, "start_ns"), (int64_t)now_realtime_ns()), wall,
		    sizeof(wall));
		strncat(wall, "+", sizeof(wall) - strlen(wall) - 1);
	} else {
		format_duration(jint(r, "wall_ns"), wall, sizeof(wall));
	}
	format_duration(jint(r, "cpu_ns"), cpu, sizeof(cpu));
	format_bytes((uint64_t)jint(r, "peak_rss_kb") * 1024, mem, sizeof(mem));
	snprintf(alerts, sizeof(alerts), "%lld/%lld", crit, warn);
	char name[512], pipeline[128], status[64];
	format_column(jstr(r, "name"), l->name, name, sizeof(name));
	format_column(or_dash(jstr(r, "pipeline")), l->pipeline, pipeline, sizeof(pipeline));
	format_column(unknown ? "unknown" : or_dash(jstr(r, "status")), 8, status, sizeof(status));
	const char *colour = cli_severity_color(q, crit ? "critical" : warn ? "warning" : NULL);
	if (l->host)
		printf("%-*s ", l->host, jstr(r, "host"));
	if (l->wide)
		printf("%-5lld %s %s %-10.10s %s%s%s %-20s %9s %9s %9s %5lld %6s\n",
		       (long long)jint(r, "id"), name, pipeline, or_dash(jstr(r, "engine")), colour,
		       status, cli_reset(q), start, wall, cpu, mem, (long long)jint(r, "steps"),
		       alerts);
	else
		printf("%-5lld %s %s %s%s%s %-16s %7s %7s %6s\n", (long long)jint(r, "id"), name,
		       pipeline, colour, status, cli_reset(q), start, wall, cpu, alerts);
}

/* The time zone the STARTED column is in ("CET", "UTC"), from a formatted time. */
static void zone_of(json_t *rows, char *out, size_t size)
{
	char t[40];

	out[0] = '\0';
	if (!json_array_size(rows))
		return;
	format_time(jint(json_array_get(rows, 0), "start_ns"), t, sizeof(t));
	if (strlen(t) > 20)
		snprintf(out, size, "%s", t + 20);
}

int cmd_runs(int argc, char **argv)
{
	struct cli_query q = {.verb = "runs"};
	const char *limit_arg = NULL;
	const char *format_arg = NULL;
	const struct cli_extra_option extra[] = {
	    {"limit", true, &limit_arg}, {"format", true, &format_arg}, {NULL, false, NULL}};
	enum export_format format;
	bool done;
	int rc = cli_parse(argc, argv, &q, usage, extra, &done);

	if (done)
		return rc;
	double limit = 20;
	if (cli_number("runs", "limit", limit_arg, 1, 100000, &limit) != 0 ||
	    export_format_parse("runs", format_arg, &format) != 0)
		return 2;
	q.list_limit = (long)limit;
	sqlite3 *db = cli_open(&q);
	if (!db)
		return 1;
	json_t *rows = load_runs(db, q.arg, (long)limit);
	fleet_label_runs(db, rows);
	if (!rows) {
		cli_error("runs", "%s\n", sqlite3_errmsg(db));
		sqlite3_close(db);
		return 1;
	}
	/* A pipeline that matches nothing is most likely misspelt: say so and fail, alone. */
	if (q.arg && !json_array_size(rows)) {
		cli_error("runs", "no runs of pipeline '%s'\n", q.arg);
		json_decref(rows);
		sqlite3_close(db);
		return 1;
	}
	if (format != EXPORT_NONE) {
		export_rows(stdout, format, run_columns, rows);
	} else if (q.json) {
		json_t *doc = json_pack("{s:O}", "runs", rows);
		cli_print_json(doc);
		json_decref(doc);
	} else {
		int columns = format_terminal_columns(STDOUT_FILENO);
		struct runs_layout l = columns ? layout_for(columns) : piped_layout(rows);
		l.host = fleet_host_width(rows);
		char zone[32];
		zone_of(rows, zone, sizeof(zone));
		print_header(&l, zone);
		for (size_t i = 0; i < json_array_size(rows); i++)
			print_run(&q, &l, json_array_get(rows, i));
		if (!json_array_size(rows) && !q.arg)
			printf("(no runs recorded)\n");
		else if (json_array_size(rows))
			print_fitted(stdout,
				     l.wide
					 ? "ALERTS: critical/warning signals (tracer signals RUN)."
					   " WALL: first start to last end (+: not ended, so far);"
					   " CPU: user + system, all processes. PEAK MEM: the run's"
					   " concurrent processes together."
					 : "ALERTS: critical/warning signals (tracer signals RUN)."
					   " WALL +: not ended, so far.",
				     columns);
		print_unknown_note(rows, columns);
	}
	json_decref(rows);
	sqlite3_close(db);
	return 0;
}
