/*
 * tracer report [RUN] --html FILE: one self-contained HTML file (no network
 * needed to open it): summary, timeline of steps and processes, CPU and memory
 * over time per step, signals, right-sizing. The data is embedded as JSON and drawn
 * by inline script with DOM calls only (no HTML from data). Every '<' in the
 * data is written as \u003c, so no text in it can close the script element.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/clidb.h"
#include "cli/clierror.h"
#include "cli/commands.h"
#include "cli/format.h"
#include "cli/rightsize.h"
#include "cli/usage.h"

extern const char report_template[];

static const char usage_text[] =
    "usage: tracer report [--db PATH] --html FILE [--headroom PCT] [RUN]\n"
    "  a self-contained HTML report of a run (default: your latest) in FILE\n"
    "  (- writes it to stdout); --headroom: right-sizing headroom, % (default 20)\n";

/* Each step's main processes (not shells or instrumentation), longest first. */
static void add_processes(sqlite3 *db, json_t *steps)
{
	for (size_t i = 0; i < json_array_size(steps); i++) {
		json_t *s = json_array_get(steps, i);
		json_t *rows = cli_rows_json(
		    db,
		    "SELECT p.start_ns, p.end_ns, p.argv, p.exe, (p.exit_code != 0 OR p.signal IS "
		    "NOT"
		    " NULL) AS failed FROM processes p LEFT JOIN tools t ON t.id = p.tool_id WHERE"
		    " p.step_id = ?1 AND p.helper = 0 AND coalesce(t.program, '') NOT IN ('bash',"
		    " 'sh', 'dash') ORDER BY coalesce(p.end_ns, p.start_ns) - p.start_ns DESC "
		    "LIMIT 8",
		    json_integer_value(json_object_get(s, "id")));
		for (size_t k = 0; k < json_array_size(rows); k++) {
			json_t *p = json_array_get(rows, k);
			char cmd[512];
			char *argv = json_dumps(json_object_get(p, "argv"), JSON_COMPACT);
			format_command(argv, json_string_value(json_object_get(p, "exe")), cmd,
				       sizeof(cmd));
			free(argv);
			json_object_set_new(p, "command", json_string(cmd));
			json_object_del(p, "argv");
			json_object_set_new(
			    p, "failed",
			    json_boolean(json_integer_value(json_object_get(p, "failed"))));
		}
		json_object_set_new(s, "processes_shown", rows);
	}
}

/* Cores and memory per step and sampling pass (samples of a pass share a time). */
static json_t *usage_series(sqlite3 *db, int64_t run)
{
	json_t *rows = cli_rows_json(
	    db,
	    "WITH d AS (SELECT p.step_id, m.ts_ns, m.rss_kb, (m.cpu_user_ns + m.cpu_sys_ns) -"
	    " lag(m.cpu_user_ns + m.cpu_sys_ns) OVER w AS dcpu, m.ts_ns - lag(m.ts_ns) OVER w AS dt"
	    " FROM samples m JOIN processes p ON p.id = m.process_id WHERE p.run_id = ?1 AND"
	    " p.step_id IS NOT NULL WINDOW w AS (PARTITION BY m.process_id ORDER BY m.ts_ns))"
	    " SELECT step_id, ts_ns, sum(rss_kb) AS rss_kb, coalesce(sum(CASE WHEN dt > 0 THEN"
	    " CAST(dcpu AS REAL) / dt END), 0) AS cores FROM d GROUP BY step_id, ts_ns"
	    " HAVING count(dt) > 0 ORDER BY step_id, ts_ns",
	    run);
	return rows;
}

/* Everything the page shows, as one JSON document (the page's data). */
static json_t *report_data(sqlite3 *db, int64_t run, double headroom)
{
	struct host_capacity cap;
	char now[40];
	json_t *runs = cli_rows_json(
	    db,
	    "SELECT id, name, pipeline, engine, status, hostname, exit_code, signal, start_ns,"
	    " end_ns, end_ns - start_ns AS wall_ns, cpu_ns, avg_cores, peak_cores, peak_rss_kb,"
	    " read_bytes, write_bytes, steps, processes, failed_processes FROM runs WHERE id = ?1",
	    run);
	json_t *steps = cli_rows_json(
	    db,
	    "SELECT id, key, name, kind, status, start_ns, end_ns, cpu_ns, avg_cores, peak_cores,"
	    " peak_rss_kb, character, processes, memory_limit_kb, cpu_limit FROM steps WHERE"
	    " run_id = ?1 ORDER BY start_ns, id",
	    run);
	add_processes(db, steps);
	json_t *signals = cli_rows_json(
	    db,
	    "SELECT g.kind, g.severity, g.message, g.active, s.name AS step FROM signals g LEFT "
	    "JOIN"
	    " steps s ON s.id = g.step_id WHERE g.run_id = ?1 ORDER BY CASE g.severity WHEN"
	    " 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, g.id",
	    run);
	usage_capacity(db, &cap);
	json_t *recs = rightsize_steps(db, false, run);
	for (size_t i = 0; i < json_array_size(recs); i++)
		rightsize_step(json_array_get(recs, i), headroom, &cap);
	format_time((int64_t)time(NULL) * 1000000000LL, now, sizeof(now));
	json_t *doc =
	    json_pack("{s:O, s:o, s:o, s:o, s:o, s:f, s:s}", "run", json_array_get(runs, 0),
		      "steps", steps, "signals", signals, "usage", usage_series(db, run),
		      "recommendations", recs, "headroom", headroom, "generated_at", now);
	json_decref(runs);
	return doc;
}

/* The template with the data in place of @DATA@ ("-": stdout). 0, or 1 (said why). */
static int write_page(const char *path, const char *data)
{
	const char *marker = strstr(report_template, "@DATA@");
	bool to_stdout = !strcmp(path, "-");
	FILE *f = to_stdout ? stdout : fopen(path, "w");

	if (!f) {
		cli_error("report", "cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (!data || !marker) {
		cli_error("report", "cannot build the page (out of memory?)\n");
		if (!to_stdout)
			fclose(f);
		return 1;
	}
	fwrite(report_template, 1, (size_t)(marker - report_template), f);
	/* '<' only occurs inside JSON strings: as \u003c no "<!--" or "</" reaches the parser. */
	for (const char *c = data; *c; c++) {
		if (*c == '<')
			fputs("\\u003c", f);
		else
			fputc(*c, f);
	}
	fputs(marker + strlen("@DATA@"), f);
	if (to_stdout ? fflush(f) != 0 || ferror(f) : fclose(f) != 0) {
		cli_error("report", "writing %s failed: %s\n", path, strerror(errno));
		return 1;
	}
	if (!to_stdout)
		printf("wrote %s\n", path);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct cli_query q = {.verb = "report"};
	const char *html = NULL, *headroom_arg = NULL;
	const struct cli_extra_option extra[] = {
	    {"html", true, &html}, {"headroom", true, &headroom_arg}, {NULL, false, NULL}};
	bool done;
	int rc = cli_parse(argc, argv, &q, usage_text, extra, &done);

	if (done)
		return rc;
	if (!html) {
		cli_error("report", "--html FILE is required (- for stdout)");
		fputs(usage_text, stderr);
		return 2;
	}
	double headroom_pct = 20;
	if (cli_number("report", "headroom", headroom_arg, 0, 500, &headroom_pct) != 0)
		return 2;
	double headroom = headroom_pct / 100.0;
	int64_t run;
	sqlite3 *db = cli_open_run(&q, &run);
	if (!db)
		return 1;
	json_t *doc = report_data(db, run, headroom);
	char *data = json_dumps(doc, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(doc);
	sqlite3_close(db);
	rc = write_page(html, data);
	free(data);
	return rc;
}
