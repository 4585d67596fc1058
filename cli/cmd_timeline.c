/* tracer timeline [RUN] [--processes]: a text Gantt chart of a run's steps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/clidb.h"
#include "cli/commands.h"
#include "cli/format.h"

static const char usage_text[] =
    "usage: tracer timeline [--db PATH] [--json] [--processes] [--width N] [RUN]\n"
    "  the steps of a run (default: the latest) over its wall time\n";

static void bar(char *out, int width, double a, double b, bool running)
{
	int from = (int)(a * width), to = (int)(b * width + 0.999);

	if (to <= from)
		to = from + 1;
	if (to > width)
		to = width;
	for (int i = 0; i < width; i++)
		out[i] = i >= from && i < to ? (running && i == to - 1 ? '>' : '#')
					     : (i % 10 ? ' ' : '.');
	out[width] = '\0';
}

int cmd_timeline(int argc, char **argv)
{
	struct cli_query q = {.verb = "timeline"};
	const char *with_procs = NULL, *width_arg = NULL;
	const struct cli_extra_option extra[] = {
	    {"processes", false, &with_procs}, {"width", true, &width_arg}, {NULL, false, NULL}};
	bool done;
	int rc = cli_parse(argc, argv, &q, usage_text, extra, &done);
	struct winsize ws;

	if (done)
		return rc;
	sqlite3 *db = cli_open(&q);
	if (!db)
		return 1;
	int64_t run = cli_run(&q, db);
	if (!run) {
		sqlite3_close(db);
		return 1;
	}
	json_t *r =
	    cli_rows_json(db,
			  "SELECT name, start_ns, coalesce(end_ns, (SELECT max(coalesce(end_ns,"
			  " start_ns)) FROM processes WHERE run_id = ?1)) AS end_ns, status FROM"
			  " runs WHERE id = ?1",
			  run);
	json_t *run_row = json_array_get(r, 0);
	int64_t t0 = json_integer_value(json_object_get(run_row, "start_ns"));
	int64_t t1 = json_integer_value(json_object_get(run_row, "end_ns"));
	json_t *steps =
	    cli_rows_json(db,
			  "SELECT id, coalesce(name, key) AS name, kind, status, start_ns,"
			  " end_ns FROM steps WHERE run_id = ?1 ORDER BY start_ns, id",
			  run);
	for (size_t i = 0; i < json_array_size(steps); i++) {
		json_t *s = json_array_get(steps, i);
		int64_t e = json_integer_value(json_object_get(s, "end_ns"));
		if (e > t1)
			t1 = e;
		json_object_set_new(
		    s, "offset_ns",
		    json_integer(json_integer_value(json_object_get(s, "start_ns")) - t0));
		if (with_procs)
			json_object_set_new(
			    s, "processes",
			    cli_rows_json(
				db,
				"SELECT p.pid, coalesce(t.name, p.comm) AS tool, p.start_ns,"
				" p.end_ns, p.exit_code, p.signal FROM processes p LEFT JOIN"
				" tools t ON t.id = p.tool_id WHERE p.step_id = ?1 AND"
				" p.helper = 0 ORDER BY p.start_ns",
				json_integer_value(json_object_get(s, "id"))));
	}
	if (t1 <= t0)
		t1 = t0 + 1;
	if (q.json) {
		json_t *doc = json_pack("{s:I, s:I, s:I, s:O}", "run", (json_int_t)run, "start_ns",
					(json_int_t)t0, "end_ns", (json_int_t)t1, "steps", steps);
		cli_print_json(doc);
		json_decref(doc);
	} else {
		int cols = width_arg ? atoi(width_arg)
			   : ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col ? ws.ws_col
										     : 100;
		int width = cols - 24 - 12;
		if (width < 20)
			width = 20;
		if (width > 400)
			width = 400;
		char line[401], d[32], col[32];
		format_duration(t1 - t0, d, sizeof(d));
		format_duration((t1 - t0) / width, col, sizeof(col));
		printf("Run %lld '%s': %s, %s (each column %s)\n", (long long)run,
		       json_string_value(json_object_get(run_row, "name")), d,
		       json_string_value(json_object_get(run_row, "status"))
			   ? json_string_value(json_object_get(run_row, "status"))
			   : "-",
		       col);
		for (size_t i = 0; i < json_array_size(steps); i++) {
			json_t *s = json_array_get(steps, i);
			int64_t a = json_integer_value(json_object_get(s, "start_ns"));
			json_t *ej = json_object_get(s, "end_ns");
			bool running = json_is_null(ej);
			int64_t b = running ? t1 : json_integer_value(ej);
			const char *status = json_string_value(json_object_get(s, "status"));
			bar(line, width, (double)(a - t0) / (double)(t1 - t0),
			    (double)(b - t0) / (double)(t1 - t0), running);
			format_duration(b - a, d, sizeof(d));
			bool bad =
			    status && (!strcmp(status, "failed") || !strcmp(status, "killed"));
			printf("%-22.22s %s%s%s %9s%s\n",
			       json_string_value(json_object_get(s, "name")),
			       bad ? cli_severity_color(&q, "critical") : "", line,
			       bad ? cli_reset(&q) : "", d,
			       bad	 ? " !"
			       : running ? " ..."
					 : "");
			json_t *procs = json_object_get(s, "processes");
			for (size_t k = 0; k < json_array_size(procs); k++) {
				json_t *p = json_array_get(procs, k);
				int64_t pa = json_integer_value(json_object_get(p, "start_ns"));
				json_t *pe = json_object_get(p, "end_ns");
				int64_t pb = json_is_null(pe) ? t1 : json_integer_value(pe);
				bar(line, width, (double)(pa - t0) / (double)(t1 - t0),
				    (double)(pb - t0) / (double)(t1 - t0), json_is_null(pe));
				for (char *c = line; *c; c++)
					if (*c == '#')
						*c = '-';
				format_duration(pb - pa, d, sizeof(d));
				printf("  %-20.20s %s %9s\n",
				       json_string_value(json_object_get(p, "tool")), line, d);
			}
		}
		if (!json_array_size(steps))
			printf("(no steps)\n");
	}
	json_decref(r);
	json_decref(steps);
	sqlite3_close(db);
	return 0;
}
