/*
 * The run report in a screenful, for a run whose whole tree would not fit
 * (tracer run prints it at every run's end, on a terminal or into a pipe):
 * the longest steps with their main tools, the failed processes, and where
 * the rest is. Every part is capped, whatever the run's size.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/render/format.h"
#include "cli/render/internal.h"
#include "cli/render/jsonfield.h"
#include "cli/render/sections.h"

/* Steps listed (the longest), tools named per step, failed processes listed. */
#define SUMMARY_STEPS 8
#define SUMMARY_TOOLS 3
#define SUMMARY_FAILED 5

/* A step's wall time; an open one's up to open_until_ns (0 if unknown). */
static int64_t step_wall(json_t *s, const struct report_opts *o)
{
	if (json_is_integer(json_object_get(s, "end_ns")))
		return jint(s, "end_ns") - jint(s, "start_ns");
	return o->open_until_ns > jint(s, "start_ns") ? o->open_until_ns - jint(s, "start_ns") : 0;
}

static const struct report_opts *sort_opts;

static int by_wall_desc(const void *a, const void *b)
{
	int64_t wa = step_wall(*(json_t *const *)a, sort_opts);
	int64_t wb = step_wall(*(json_t *const *)b, sort_opts);

	return wa < wb ? 1 : wa > wb ? -1 : 0;
}

/* "gzip: 1000 processes, CPU 2.10s; wc: 1 process, CPU 4ms; and 2 more tools", by CPU. */
static void tools_line(FILE *out, json_t *tools, const char *indent, bool run_ok)
{
	size_t n = json_array_size(tools);
	json_t **order = calloc(n ? n : 1, sizeof(*order));

	if (!order || n == 0) {
		free(order);
		return;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = json_array_get(tools, i);
	/* Insertion sort by CPU: a step has a handful of tools. */
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && jint(order[k], "cpu_ns") > jint(order[k - 1], "cpu_ns");
		     k--) {
			json_t *t = order[k];
			order[k] = order[k - 1];
			order[k - 1] = t;
		}
	fputs(indent, out);
	for (size_t i = 0; i < n && i < SUMMARY_TOOLS; i++) {
		char cpu[32];
		format_duration(jint(order[i], "cpu_ns"), cpu, sizeof(cpu));
		fprintf(out, "%s%s: %lld %s, CPU %s%s", i ? "; " : "", jstr(order[i], "name"),
			(long long)jint(order[i], "processes"),
			plural(jint(order[i], "processes"), "process", "processes"), cpu,
			!jint(order[i], "failed_processes") ? ""
			: run_ok			    ? ", some failed (handled)"
							    : ", some FAILED");
	}
	if (n > SUMMARY_TOOLS)
		fprintf(out, "; and %zu more %s", n - SUMMARY_TOOLS,
			plural((long long)(n - SUMMARY_TOOLS), "tool", "tools"));
	fputc('\n', out);
	free(order);
}

static void print_longest_steps(FILE *out, json_t *steps, const struct report_opts *o)
{
	size_t n = json_array_size(steps);
	json_t **order = calloc(n ? n : 1, sizeof(*order));

	if (!order || n == 0) {
		free(order);
		return;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = json_array_get(steps, i);
	sort_opts = o;
	qsort(order, n, sizeof(*order), by_wall_desc);
	size_t shown = n < SUMMARY_STEPS ? n : SUMMARY_STEPS;
	fprintf(out, "\nSteps (%zu%s):\n", n, shown < n ? "; the longest" : "");
	for (size_t i = 0; i < shown; i++) {
		json_t *s = order[i];
		char wall[32], cpu[32], rss[32];
		const char *name = jstr(s, "name");
		format_duration(json_is_integer(json_object_get(s, "end_ns")) ||
					o->open_until_ns > jint(s, "start_ns")
				    ? step_wall(s, o)
				    : -1,
				wall, sizeof(wall));
		format_duration(jint(s, "cpu_ns"), cpu, sizeof(cpu));
		format_bytes((uint64_t)jint(s, "peak_rss_kb") * 1024, rss, sizeof(rss));
		fprintf(out, "  step %lld: %s  %s, wall %s, CPU %s, peak memory %s\n",
			(long long)jint(s, "id"), *name ? name : jstr(s, "key"),
			o->unwatched && !json_is_integer(json_object_get(s, "end_ns"))
			    ? "unknown"
			    : jstr(s, "status"),
			wall, cpu, rss);
		tools_line(out, json_object_get(s, "tools"), "    ", o->run_ok);
	}
	free(order);
}

/* Appends the failed processes of a tool list to failed (at most SUMMARY_FAILED kept). */
static void collect_failed(json_t *tools, json_t *failed, int64_t *count)
{
	size_t i, k;
	json_t *t, *p;

	json_array_foreach(tools, i, t) json_array_foreach(json_object_get(t, "process_list"), k, p)
	{
		if (!report_process_failed(p))
			continue;
		(*count)++;
		json_array_append(failed, p);
	}
}

static int by_start(const void *a, const void *b)
{
	int64_t sa = jint(*(json_t *const *)a, "start_ns"),
		sb = jint(*(json_t *const *)b, "start_ns");

	return sa < sb ? -1 : sa > sb;
}

/* A script that started its next step after s ended went on past s's failures (a shell
 * under `set -e`, or one whose last command failed, stops there). */
static bool script_went_on(json_t *steps, json_t *s)
{
	size_t i;
	json_t *t;

	if (strcmp(jstr(s, "kind"), "script-step") || !jhas(s, "end_ns"))
		return false;
	json_array_foreach(steps, i, t) if (t != s && !strcmp(jstr(t, "kind"), "script-step") &&
					    jint(t, "start_ns") >= jint(s, "end_ns")) return true;
	return false;
}

static void print_failed_list(FILE *out, json_t *failed, int64_t count, const char *title,
			      const char *why, const struct report_opts *o)
{
	size_t i, n = json_array_size(failed);

	if (!count)
		return;
	json_t **order = calloc(n, sizeof(*order));
	for (i = 0; order && i < n; i++)
		order[i] = json_array_get(failed, i);
	if (order)
		qsort(order, n, sizeof(*order), by_start);
	fprintf(out, "\n%s (%lld %s%s%s):\n", title, (long long)count,
		plural(count, "process", "processes"), why,
		count > SUMMARY_FAILED ? "; the first" : "");
	for (i = 0; order && i < n && i < SUMMARY_FAILED; i++) {
		char status[32], cmd[512], shown[600];
		report_status_text(order[i], status, sizeof(status));
		char *argv_text = json_dumps(json_object_get(order[i], "argv"), JSON_ENCODE_ANY);
		format_command(argv_text, jstr(order[i], "comm"), cmd, sizeof(cmd));
		free(argv_text);
		/* A terminal cuts at its edge (print_fitted); a pipe at 200 columns. */
		format_column(cmd, o->width > 0 ? o->width : 200, shown, sizeof(shown));
		for (size_t e = strlen(shown); e > 0 && shown[e - 1] == ' '; e--)
			shown[e - 1] = '\0';
		fprintf(out, "  pid %-7lld exit %-7s %s%s\n", (long long)jint(order[i], "pid"),
			status, report_command_prefix(order[i]), shown);
	}
	free(order);
}

static void print_failed(FILE *out, json_t *structure, const struct report_opts *o)
{
	json_t *failed = json_array(), *went_past = json_array();
	json_t *steps = json_object_get(structure, "steps");
	int64_t count = 0, past = 0;
	size_t i;
	json_t *s;

	json_array_foreach(steps, i, s)
	{
		bool handled = !o->run_ok && script_went_on(steps, s);
		collect_failed(json_object_get(s, "tools"), handled ? went_past : failed,
			       handled ? &past : &count);
	}
	collect_failed(json_object_get(json_object_get(structure, "outside_steps"), "tools"),
		       failed, &count);
	if (o->run_ok)
		print_failed_list(out, failed, count, "Failed and handled",
				  "; the run went on and succeeded", o);
	else
		print_failed_list(out, failed, count, "Failed", "", o);
	print_failed_list(
	    out, went_past, past, "Failed and handled",
	    past == 1 ? "; the script went on past it" : "; the script went on past them", o);
	json_decref(failed);
	json_decref(went_past);
}

void report_summary_print(FILE *out, json_t *run, json_t *totals, const struct report_opts *o)
{
	json_t *structure = o->structure;
	json_t *outside = json_object_get(json_object_get(structure, "outside_steps"), "tools");

	print_longest_steps(out, json_object_get(structure, "steps"), o);
	if (json_array_size(outside)) {
		fprintf(out, "  outside any step (the engine, the launcher):\n");
		tools_line(out, outside, "    ", o->run_ok);
	}
	batch_summary_print(out, structure);
	print_failed(out, structure, o);
	/* Cut at a narrow terminal's edge, the command to type would be lost: wrapped. */
	fprintf(out,
		"\n%s%lld %s in all: the whole tree and every step with `tracer show --db %s "
		"%lld`\n",
		o->width > 0 ? FORMAT_WHOLE_LINE : "", (long long)jint(totals, "images"),
		plural(jint(totals, "images"), "process", "processes"),
		o->db_path ? o->db_path : "DB", (long long)jint(run, "id"));
}
