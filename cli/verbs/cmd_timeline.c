/* tracer timeline [RUN] [--processes]: a text Gantt chart of a run's steps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/db/clidb.h"
#include "cli/render/format.h"
#include "cli/render/jsonfield.h"
#include "cli/verbs/commands.h"

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

struct timeline {
	int64_t run, t0, t1; /* the axis: the run's start and end, epoch ns */
	json_t *run_row, *steps;
};

/* The run's span, its steps (with their offsets and, if asked, processes). */
static void load_timeline(sqlite3 *db, int64_t run, bool with_procs, struct timeline *tl)
{
	json_t *r =
	    cli_rows_json(db,
			  "SELECT name, start_ns, coalesce(end_ns, (SELECT max(coalesce(end_ns,"
			  " start_ns)) FROM processes WHERE run_id = ?1)) AS end_ns, status FROM"
			  " runs WHERE id = ?1",
			  run);

	tl->run = run;
	tl->run_row = json_incref(json_array_get(r, 0));
	json_decref(r);
	tl->t0 = jint(tl->run_row, "start_ns");
	tl->t1 = jint(tl->run_row, "end_ns");
	tl->steps = cli_rows_json(db,
				  "SELECT id, coalesce(name, key) AS name, kind, status, start_ns,"
				  " end_ns FROM steps WHERE run_id = ?1 ORDER BY start_ns, id",
				  run);
	for (size_t i = 0; i < json_array_size(tl->steps); i++) {
		json_t *s = json_array_get(tl->steps, i);
		if (jint(s, "end_ns") > tl->t1)
			tl->t1 = jint(s, "end_ns");
		json_object_set_new(s, "offset_ns", json_integer(jint(s, "start_ns") - tl->t0));
		if (with_procs)
			json_object_set_new(
			    s, "processes",
			    cli_rows_json(
				db,
				"SELECT p.pid, coalesce(t.name, p.comm) AS tool, p.start_ns,"
				" p.end_ns, p.exit_code, p.signal FROM processes p LEFT JOIN"
				" tools t ON t.id = p.tool_id WHERE p.step_id = ?1 AND"
				" p.helper = 0 ORDER BY p.start_ns",
				jint(s, "id")));
	}
	if (tl->t1 <= tl->t0)
		tl->t1 = tl->t0 + 1;
}

/* The bar of [a, b] on the axis; an unfinished one ends at the axis's end. */
static void span_bar(const struct timeline *tl, json_t *row, char *line, int width, char fill,
		     char *dur, size_t dur_size)
{
	int64_t a = jint(row, "start_ns");
	json_t *end = json_object_get(row, "end_ns");
	bool running = json_is_null(end);
	int64_t b = running ? tl->t1 : json_integer_value(end);
	double span = (double)(tl->t1 - tl->t0);

	bar(line, width, (double)(a - tl->t0) / span, (double)(b - tl->t0) / span, running);
	for (char *c = line; *c; c++)
		if (*c == '#')
			*c = fill;
	format_duration(b - a, dur, dur_size);
}

static void print_step(const struct cli_query *q, const struct timeline *tl, json_t *s, int width)
{
	char line[401], d[32];
	bool running = json_is_null(json_object_get(s, "end_ns"));
	const char *status = json_string_value(json_object_get(s, "status"));
	bool bad = status && (!strcmp(status, "failed") || !strcmp(status, "killed"));

	span_bar(tl, s, line, width, '#', d, sizeof(d));
	printf("%-22.22s %s%s%s %9s%s\n", jstr(s, "name"),
	       bad ? cli_severity_color(q, "critical") : "", line, bad ? cli_reset(q) : "", d,
	       bad	 ? " !"
	       : running ? " ..."
			 : "");
	json_t *procs = json_object_get(s, "processes");
	for (size_t k = 0; k < json_array_size(procs); k++) {
		json_t *p = json_array_get(procs, k);
		span_bar(tl, p, line, width, '-', d, sizeof(d));
		printf("  %-20.20s %s %9s\n", jstr(p, "tool"), line, d);
	}
}

/* Columns for the bars: what the terminal (or --width) leaves after the labels. */
static int bar_width(double width_arg)
{
	int term = format_terminal_columns(STDOUT_FILENO);
	int cols = width_arg > 0 ? (int)width_arg : term ? term : 100;
	int width = cols - 24 - 12;

	return width < 20 ? 20 : width > 400 ? 400 : width;
}

static void print_text(const struct cli_query *q, const struct timeline *tl, int width)
{
	char d[32], col[32];
	const char *status = json_string_value(json_object_get(tl->run_row, "status"));

	format_duration(tl->t1 - tl->t0, d, sizeof(d));
	format_duration((tl->t1 - tl->t0) / width, col, sizeof(col));
	printf("Run %lld '%s': %s, %s (each column %s)\n", (long long)tl->run,
	       json_string_value(json_object_get(tl->run_row, "name")), d, status ? status : "-",
	       col);
	for (size_t i = 0; i < json_array_size(tl->steps); i++)
		print_step(q, tl, json_array_get(tl->steps, i), width);
	if (!json_array_size(tl->steps))
		printf("(no steps)\n");
}

int cmd_timeline(int argc, char **argv)
{
	struct cli_query q = {.verb = "timeline"};
	const char *with_procs = NULL, *width_arg = NULL;
	const struct cli_extra_option extra[] = {
	    {"processes", false, &with_procs}, {"width", true, &width_arg}, {NULL, false, NULL}};
	struct timeline tl = {0};
	bool done;
	int rc = cli_parse(argc, argv, &q, usage_text, extra, &done);

	if (done)
		return rc;
	double width = 0;
	if (cli_number("timeline", "width", width_arg, 40, 1000, &width) != 0)
		return 2;
	int64_t run;
	sqlite3 *db = cli_open_run(&q, &run);
	if (!db)
		return 1;
	load_timeline(db, run, with_procs != NULL, &tl);
	if (q.json) {
		json_t *doc =
		    json_pack("{s:o, s:I, s:I, s:O}", "run", cli_run_object(db, run), "start_ns",
			      (json_int_t)tl.t0, "end_ns", (json_int_t)tl.t1, "steps", tl.steps);
		cli_print_json(doc);
		json_decref(doc);
	} else {
		print_text(&q, &tl, bar_width(width));
	}
	json_decref(tl.run_row);
	json_decref(tl.steps);
	sqlite3_close(db);
	return 0;
}
