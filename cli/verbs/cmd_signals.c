/* tracer signals [--db PATH] [--json] [--all] [--active] [RUN]: what went wrong, and where. */
#include <stdio.h>
#include <string.h>

#include "cli/db/clidb.h"
#include "cli/render/export.h"
#include "cli/render/format.h"
#include "cli/verbs/commands.h"

static const char usage[] =
    "usage: tracer signals [--db PATH] [--json | --format tsv|csv|json] [--all] [--active] [RUN]\n"
    "  failure signals of a run (default: the latest), most severe first\n"
    "  --all     every run's signals\n"
    "  --active  only conditions that still hold (stalls, slow steps)\n"
    "  --format  one row per signal, columns in docs/export.md\n";

/* --format's columns (docs/export.md): add, never rename. */
static const char *const signal_columns[] = {
    "id",     "kind",	   "severity", "active",  "detected",	"detected_ns", "at_ns",
    "run_id", "run",	   "step_id",  "step",	  "process_id", "pid",	       "tool",
    "value",  "threshold", "unit",     "message", "details",	NULL,
};

static const char select_signals[] =
    "SELECT g.id, g.kind, g.severity, g.active, g.detected_ns, g.at_ns, g.run_id, r.name AS run,"
    " strftime('%Y-%m-%dT%H:%M:%fZ', g.detected_ns / 1e9, 'unixepoch') AS detected,"
    " g.step_id, s.name AS step, g.process_id, p.pid, t.name AS tool, g.value, g.threshold,"
    " g.unit, g.message, g.details FROM signals g LEFT JOIN runs r ON r.id = g.run_id"
    " LEFT JOIN steps s ON s.id = g.step_id LEFT JOIN processes p ON p.id = g.process_id"
    " LEFT JOIN tools t ON t.id = g.tool_id";

int cmd_signals(int argc, char **argv)
{
	struct cli_query q = {.verb = "signals"};
	const char *all = NULL, *active = NULL, *format_arg = NULL;
	const struct cli_extra_option extra[] = {{"all", false, &all},
						 {"active", false, &active},
						 {"format", true, &format_arg},
						 {NULL, false, NULL}};
	enum export_format format;
	char sql[1024];
	bool done;
	int rc = cli_parse(argc, argv, &q, usage, extra, &done);
	int64_t run = 0;

	if (done)
		return rc;
	if (export_format_parse("signals", format_arg, &format) != 0)
		return 2;
	sqlite3 *db = cli_open(&q);
	if (!db)
		return 1;
	if (!all && !(run = cli_run(&q, db))) {
		sqlite3_close(db);
		return 1;
	}
	snprintf(sql, sizeof(sql),
		 "%s WHERE (?1 = 0 OR g.run_id = ?1) %s ORDER BY CASE g.severity WHEN 'critical' "
		 "THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, g.detected_ns, g.id",
		 select_signals, active ? "AND g.active = 1" : "");
	json_t *rows = cli_rows_json(db, sql, run);
	if (format != EXPORT_NONE) {
		export_rows(stdout, format, signal_columns, rows);
		json_decref(rows);
		sqlite3_close(db);
		return 0;
	}
	if (q.json) {
		json_t *doc =
		    json_pack("{s:o, s:o}", "run", run ? cli_run_object(db, run) : json_null(),
			      "signals", rows);
		cli_print_json(doc);
		json_decref(doc);
		sqlite3_close(db);
		return 0;
	}
	size_t n = json_array_size(rows);
	if (run)
		printf("Signals of run %lld: %zu\n", (long long)run, n);
	else
		printf("Signals of all runs: %zu\n", n);
	for (size_t i = 0; i < n; i++) {
		json_t *s = json_array_get(rows, i);
		const char *sev = json_string_value(json_object_get(s, "severity"));
		char when[40];
		format_time(json_integer_value(json_object_get(s, "detected_ns")), when,
			    sizeof(when));
		const char *step = json_string_value(json_object_get(s, "step"));
		printf("  %s%-8s%s %-17s %s%s\n", cli_severity_color(&q, sev), sev ? sev : "?",
		       cli_reset(&q), json_string_value(json_object_get(s, "kind")), when + 11,
		       cli_flag(s, "active") ? "  (still active)" : "");
		if (!run)
			printf("           run %lld '%s'\n",
			       (long long)json_integer_value(json_object_get(s, "run_id")),
			       json_string_value(json_object_get(s, "run"))
				   ? json_string_value(json_object_get(s, "run"))
				   : "-");
		if (step)
			printf("           step '%s'\n", step);
		printf("           %s\n", json_string_value(json_object_get(s, "message")));
	}
	json_decref(rows);
	sqlite3_close(db);
	return 0;
}
