/* The run report as text or JSON, from what model/runreport.c read. */
#include "cli/render/report.h"

#include <stdlib.h>
#include <string.h>

#include "cli/render/clierror.h"
#include "cli/render/format.h"
#include "cli/render/jsonfield.h"
#include "cli/render/internal.h"
#include "cli/render/sections.h"
#include "common/timeutil.h"

/* Columns before the tree in a process line, and before the command in a tool's. */
#define PROCESS_COLUMNS 74
#define TOOL_PROCESS_COLUMNS 51
/* Without the read and written columns: for terminals under 110 columns. */
#define NARROW_PROCESS_COLUMNS 54

static bool narrow(const struct report_opts *o)
{
	return o->width > 0 && o->width < 110;
}

/* text in at most cols terminal columns (at least 12), "…" where cut, no padding. */
static void cut_to_columns(const char *text, int cols, char *out, size_t size)
{
	if (cols < 12)
		cols = 12;
	format_column(text, cols, out, size);
	for (size_t n = strlen(out); n > 0 && out[n - 1] == ' '; n--)
		out[n - 1] = '\0';
}

static void print_process(FILE *out, json_t *p, const char *prefix, bool last, bool root,
			  int64_t run_start, const struct report_opts *o)
{
	char status[32], wall[32], cpu[32], rss[32], rd[32], wr[32], cmd[512], tree[1100];
	char start[32];
	int64_t end = jint(p, "end_ns");

	report_status_text(p, status, sizeof(status));
	format_duration(jhas(p, "end_ns") ? end - jint(p, "start_ns") : -1, wall, sizeof(wall));
	format_duration(jint(p, "start_ns") - run_start, start, sizeof(start));
	if (jhas(p, "cpu_user_ns"))
		format_duration(jint(p, "cpu_user_ns") + jint(p, "cpu_sys_ns"), cpu, sizeof(cpu));
	else
		snprintf(cpu, sizeof(cpu), "-");
	if (jhas(p, "max_rss_kb"))
		format_bytes((uint64_t)jint(p, "max_rss_kb") * 1024, rss, sizeof(rss));
	else
		snprintf(rss, sizeof(rss), "-");
	format_bytes((uint64_t)jint(p, "rchar"), rd, sizeof(rd));
	format_bytes((uint64_t)jint(p, "wchar"), wr, sizeof(wr));
	char *argv_text = json_dumps(json_object_get(p, "argv"), JSON_COMPACT | JSON_ENCODE_ANY);
	format_command(argv_text, json_string_value(json_object_get(p, "comm")), cmd, sizeof(cmd));
	free(argv_text);
	snprintf(tree, sizeof(tree), "%s%s%s", prefix, root ? "" : (last ? "└─ " : "├─ "), cmd);
	/* Cut the tree and command at the terminal's edge (or 200 columns); JSON has it all. */
	char shown[1024];
	if (narrow(o)) {
		cut_to_columns(tree, o->width - NARROW_PROCESS_COLUMNS, shown, sizeof(shown));
		fprintf(out, "%-7lld %-7s %8s %8s %8s %9s  %s\n", (long long)jint(p, "pid"), status,
			start, wall, cpu, rss, shown);
	} else {
		cut_to_columns(tree, o->width <= 0 ? 200 : o->width - PROCESS_COLUMNS, shown,
			       sizeof(shown));
		fprintf(out, "%-7lld %-7s %8s %8s %8s %9s %9s %9s  %s\n", (long long)jint(p, "pid"),
			status, start, wall, cpu, rss, rd, wr, shown);
	}

	json_t *kids = json_object_get(p, "children");
	char next_prefix[512];
	snprintf(next_prefix, sizeof(next_prefix), "%s%s", prefix,
		 root ? "" : (last ? "   " : "│  "));
	for (size_t i = 0; i < json_array_size(kids); i++)
		print_process(out, json_array_get(kids, i), next_prefix,
			      i + 1 == json_array_size(kids), false, run_start, o);
}

static void print_tools(FILE *out, json_t *tools, const char *indent, int64_t run_start,
			const struct report_opts *o)
{
	size_t i, k;
	json_t *t, *p;

	json_array_foreach(tools, i, t)
	{
		char cpu[32], rss[32];
		const char *cat = json_string_value(json_object_get(t, "category"));
		/* Only processes with no metrics yet (running, lost): nothing measured, not zero.
		 */
		if (jint(t, "measured")) {
			format_duration(jint(t, "cpu_ns"), cpu, sizeof(cpu));
			format_bytes((uint64_t)jint(t, "max_rss_kb") * 1024, rss, sizeof(rss));
		} else {
			snprintf(cpu, sizeof(cpu), "-");
			snprintf(rss, sizeof(rss), "-");
		}
		fprintf(out, "%s%s%s%s%s: %lld process%s, CPU %s, largest %s%s%s\n", indent,
			json_string_value(json_object_get(t, "name")), cat ? " (" : "",
			cat ? cat : "", cat ? ")" : "", (long long)jint(t, "processes"),
			jint(t, "processes") == 1 ? "" : "es", cpu, rss,
			jint(t, "failed_processes") ? ", FAILED: " : "",
			jint(t, "failed_processes") ? "some exited non-zero" : "");
		if (json_is_true(json_object_get(t, "helper")))
			fprintf(out,
				"%s  (helpers: counted in the totals, not as the step's work)\n",
				indent);
		json_array_foreach(json_object_get(t, "process_list"), k, p)
		{
			char status[32], wall[32], pcpu[32], prss[32], cmd[512];
			report_status_text(p, status, sizeof(status));
			format_duration(jhas(p, "end_ns") ? jint(p, "end_ns") - jint(p, "start_ns")
							  : -1,
					wall, sizeof(wall));
			/* No metrics yet (still running, or ended unseen): not a zero. */
			if (jhas(p, "cpu_user_ns"))
				format_duration(jint(p, "cpu_user_ns") + jint(p, "cpu_sys_ns"),
						pcpu, sizeof(pcpu));
			else
				snprintf(pcpu, sizeof(pcpu), "-");
			if (jhas(p, "max_rss_kb"))
				format_bytes((uint64_t)jint(p, "max_rss_kb") * 1024, prss,
					     sizeof(prss));
			else
				snprintf(prss, sizeof(prss), "-");
			char *argv_text = json_dumps(json_object_get(p, "argv"), JSON_ENCODE_ANY);
			format_command(argv_text, json_string_value(json_object_get(p, "comm")),
				       cmd, sizeof(cmd));
			free(argv_text);
			char shown[600];
			cut_to_columns(cmd,
				       o->width <= 0
					   ? 160
					   : o->width - (int)strlen(indent) - TOOL_PROCESS_COLUMNS,
				       shown, sizeof(shown));
			fprintf(out, "%s  pid %-7lld %-7s %8s %8s %9s  %s\n", indent,
				(long long)jint(p, "pid"), status, wall, pcpu, prss, shown);
		}
	}
}

static void print_steps(FILE *out, json_t *doc, int64_t run_start, const struct report_opts *o)
{
	json_t *steps = json_object_get(doc, "steps");
	size_t i;
	json_t *s;

	if (json_array_size(steps) == 0)
		return;
	fprintf(out, "\nSteps (%zu):\n", json_array_size(steps));
	/* The columns of the process lines under each tool (print_tools). */
	fprintf(out, "      %-11s %-7s %8s %8s %9s  %s\n", "PID", "EXIT", "WALL", "CPU", "MAX RSS",
		"COMMAND");
	json_array_foreach(steps, i, s)
	{
		char wall[48], cpu[32], rss[32], start[32];
		const char *name = json_string_value(json_object_get(s, "name"));
		format_duration(jint(s, "start_ns") - run_start, start, sizeof(start));
		const char *status = json_string_value(json_object_get(s, "status"));
		if (jhas(s, "end_ns")) {
			format_duration(jint(s, "end_ns") - jint(s, "start_ns"), wall,
					sizeof(wall));
		} else if (o->open_until_ns > jint(s, "start_ns")) {
			/* Not ended: up to now, or to when its collector was last heard from. */
			char d[24];
			format_duration(o->open_until_ns - jint(s, "start_ns"), d, sizeof(d));
			snprintf(wall, sizeof(wall), "%s %s", d,
				 o->unwatched ? "when last seen" : "so far");
			if (o->unwatched)
				status = "unknown";
		} else {
			format_duration(-1, wall, sizeof(wall));
		}
		format_duration(jint(s, "cpu_ns"), cpu, sizeof(cpu));
		format_bytes((uint64_t)jint(s, "peak_rss_kb") * 1024, rss, sizeof(rss));
		/* The id is what `tracer explain --step` takes. */
		fprintf(out, "  step %lld: %s %s  [%s]  %s, started +%s, wall %s, CPU %s",
			(long long)jint(s, "id"), json_string_value(json_object_get(s, "kind")),
			json_string_value(json_object_get(s, "key")),
			name && *name ? name : json_string_value(json_object_get(s, "key")), status,
			start, wall, cpu);
		if (jhas(s, "avg_cores"))
			fprintf(out, " (%.2f cores avg",
				json_real_value(json_object_get(s, "avg_cores")));
		if (jhas(s, "peak_cores"))
			fprintf(out, ", %.2f peak",
				json_real_value(json_object_get(s, "peak_cores")));
		if (jhas(s, "avg_cores"))
			fputc(')', out);
		fprintf(out, ", peak memory %s\n", rss);
		print_tools(out, json_object_get(s, "tools"), "    ", run_start, o);
	}
	json_t *outside = json_object_get(json_object_get(doc, "outside_steps"), "tools");
	if (json_array_size(outside)) {
		fprintf(out, "  outside any step (the engine, the launcher):\n");
		print_tools(out, outside, "    ", run_start, o);
	}
}

/* "pid 12 (spin), pid 13 (sleep)" for the unfinished images of one state, and ", ..." past them. */
static void name_unfinished(FILE *out, json_t *totals, const char *state, int64_t count)
{
	size_t i;
	json_t *u;
	int64_t named = 0;

	json_array_foreach(json_object_get(totals, "unfinished"), i, u)
	{
		if (strcmp(json_string_value(json_object_get(u, "state")), state) != 0)
			continue;
		const char *comm = json_string_value(json_object_get(u, "comm"));
		fprintf(out, "%spid %lld (%s)", named ? ", " : "", (long long)jint(u, "pid"),
			comm ? comm : "?");
		named++;
	}
	if (named < count)
		fprintf(out, "%s...", named ? ", " : "");
}

/*
 * A finished run whose processes did not all end where tracer saw them: what
 * they used is in no total above, which a reader must know before trusting them.
 */
static void print_unfinished(FILE *out, json_t *totals, const struct report_opts *o)
{
	int64_t running = jint(totals, "running_processes");
	int64_t lost = jint(totals, "lost_processes");

	if (running) {
		fprintf(out, "  note: %lld %s outlived the command, still running at its end: ",
			(long long)running, plural(running, "process", "processes"));
		name_unfinished(out, totals, "running", running);
		bool one = running == 1;
		if (o->watch_ended)
			fprintf(out,
				". Nothing watched past the command's end (these daemons were "
				"tracer run's own), so what %s used is not counted\n",
				one ? "it" : "they");
		else if (!json_is_true(json_object_get(totals, "watched_now")))
			fprintf(out,
				". No collector has written here in the last minute, so what %s "
				"used after the last one stopped is not counted\n",
				one ? "it" : "they");
		else
			fprintf(out, ". What %s %s is counted once %s\n", one ? "it" : "they",
				one ? "uses" : "use", one ? "it ends" : "they end");
	}
	if (lost) {
		fprintf(out, "  note: %lld %s ended while no collector watched (state lost): ",
			(long long)lost, plural(lost, "process", "processes"));
		name_unfinished(out, totals, "lost", lost);
		fprintf(out, ". What %s used is not counted\n", lost == 1 ? "it" : "they");
	}
}

/* A run not ended: "12s so far", or up to when its collector was last heard from. */
static void run_so_far(json_t *run, char *out, size_t size)
{
	char d[24];

	format_duration(jint(run, "so_far_ns"), d, sizeof(d));
	snprintf(out, size, "%s %s", d,
		 json_is_false(json_object_get(run, "watched")) ? "until then" : "so far");
}

/* A run not ended that no collector watches now: its state is unknown, not running. */
static void print_unwatched(FILE *out, json_t *run)
{
	char ago[32];

	if (!jhas(run, "last_heard_ns")) {
		fprintf(out, "  unknown: no collector of its host ever wrote here, so its end was "
			     "not seen");
		return;
	}
	format_duration((int64_t)now_realtime_ns() - jint(run, "last_heard_ns"), ago, sizeof(ago));
	if (jhas(run, "records_missing")) /* read from the fleet store */
		fprintf(out,
			"  unknown: its host stopped reporting (last heard %s ago): the records of "
			"%s are missing, so its end was not seen",
			ago, jstr(run, "records_missing"));
	else
		fprintf(
		    out,
		    "  unknown: not ended when a collector of its host last wrote here, %s ago; "
		    "none has since, so its end was not seen",
		    ago);
}

static void print_text(FILE *out, json_t *run, json_t *roots, json_t *totals,
		       const struct report_opts *o)
{
	char when[64], wall[48], cpu[32], peak[32], rd[32], wr[32];
	const char *pipeline = json_string_value(json_object_get(run, "pipeline"));
	int64_t start = jint(run, "start_ns");

	format_time(start, when, sizeof(when));
	if (jhas(run, "end_ns"))
		format_duration(jint(run, "end_ns") - start, wall, sizeof(wall));
	else if (jhas(run, "so_far_ns"))
		run_so_far(run, wall, sizeof(wall));
	else
		format_duration(-1, wall, sizeof(wall));
	format_duration(jint(totals, "cpu_ns"), cpu, sizeof(cpu));
	format_bytes((uint64_t)jint(totals, "max_process_rss_kb") * 1024, peak, sizeof(peak));
	format_bytes((uint64_t)jint(totals, "rchar"), rd, sizeof(rd));
	format_bytes((uint64_t)jint(totals, "wchar"), wr, sizeof(wr));
	fprintf(out, "Run %lld: %s", (long long)jint(run, "id"),
		json_string_value(json_object_get(run, "name")));
	if (pipeline)
		fprintf(out, "  (pipeline %s)", pipeline);
	if (jhas(run, "engine"))
		fprintf(out, "  [%s]", json_string_value(json_object_get(run, "engine")));
	fprintf(out, "\n  host %s, started %s\n",
		jhas(run, "hostname") ? json_string_value(json_object_get(run, "hostname")) : "?",
		when);
	if (jhas(run, "signal"))
		fprintf(out, "  killed by signal %lld", (long long)jint(run, "signal"));
	else if (jhas(run, "exit_code"))
		fprintf(out, "  exit %lld", (long long)jint(run, "exit_code"));
	else if (jhas(run, "status") &&
		 !strcmp(json_string_value(json_object_get(run, "status")), "unknown"))
		fprintf(out, "  unknown: its tracer run was killed and its daemons stopped while "
			     "the command ran on, so its end was not seen");
	else if (json_is_false(json_object_get(run, "watched")))
		print_unwatched(out, run);
	else
		fprintf(out, "  running");
	char images[48] = "";
	if (jint(totals, "images") != jint(totals, "processes"))
		snprintf(images, sizeof(images), "%lld images, ",
			 (long long)jint(totals, "images"));
	fprintf(out,
		", wall %s, %lld %s (%s%lld failed), CPU %s, largest process %s, "
		"read %s, written %s (all read/write calls, not only storage)\n",
		wall, (long long)jint(totals, "processes"),
		plural(jint(totals, "processes"), "process", "processes"), images,
		(long long)jint(totals, "failed_processes"), cpu, peak, rd, wr);
	if (jhas(run, "signal") || jhas(run, "exit_code"))
		print_unfinished(out, totals, o);
	if (o->structure)
		containers_print(
		    out, json_object_get(o->structure, "containers"),
		    json_integer_value(json_object_get(o->structure, "containers_unlinked_clis")),
		    "  ");
	if (o->summarise) {
		report_summary_print(out, run, totals, o);
		return;
	}
	fputc('\n', out);
	if (o->structure && json_array_size(json_object_get(o->structure, "steps"))) {
		print_steps(out, o->structure, start, o);
		batch_print(out, o->structure);
		fprintf(out, "\nProcess tree:\n");
	} else if (o->structure) {
		batch_print(out, o->structure);
	}
	if (narrow(o))
		fprintf(out, "%-7s %-7s %8s %8s %8s %9s  %s\n", "PID", "EXIT", "START", "WALL",
			"CPU", "MAX RSS", "COMMAND");
	else
		fprintf(out, "%-7s %-7s %8s %8s %8s %9s %9s %9s  %s\n", "PID", "EXIT", "START",
			"WALL", "CPU", "MAX RSS", "READ", "WRITTEN", "COMMAND");
	for (size_t i = 0; i < json_array_size(roots); i++)
		print_process(out, json_array_get(roots, i), "", i + 1 == json_array_size(roots),
			      true, start, o);
}

/* Lines in text. */
static size_t count_lines(const char *text, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	return n;
}

/* The whole report if it fits in o->max_lines, else its summary. */
static void print_text_within(FILE *out, json_t *run, json_t *roots, json_t *totals,
			      struct report_opts *o)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);

	if (mem) {
		print_text(mem, run, roots, totals, o);
		fclose(mem);
		if (count_lines(text, len) <= (size_t)o->max_lines) {
			fwrite(text, 1, len, out);
			free(text);
			return;
		}
		free(text);
	}
	o->summarise = true;
	print_text(out, run, roots, totals, o);
}

/* The document of --json: the run, its totals, structure and process forest. */
static void print_json(const struct run_report *r, FILE *out)
{
	json_t *doc = json_object();
	json_t *structure = r->structure;

	json_object_set(doc, "run", r->run);
	json_object_set(doc, "totals", r->totals);
	json_object_set(doc, "steps", json_object_get(structure, "steps"));
	json_object_set(doc, "outside_steps", json_object_get(structure, "outside_steps"));
	json_object_set(doc, "containers", json_object_get(structure, "containers"));
	json_object_set(doc, "batch_jobs", json_object_get(structure, "batch_jobs"));
	json_object_set(doc, "batch_elsewhere", json_object_get(structure, "batch_elsewhere"));
	json_object_set(doc, "containers_unlinked_clis",
			json_object_get(structure, "containers_unlinked_clis"));
	if (json_object_get(structure, "hosts")) /* a fleet run joined across hosts */
		json_object_set(doc, "hosts", json_object_get(structure, "hosts"));
	json_object_set(doc, "processes", r->roots);
	json_object_set(doc, "energy", json_object_get(structure, "energy"));
	json_dumpf(doc, out, JSON_INDENT(2));
	fputc('\n', out);
	if (out == stdout)
		cli_error_output_written();
	json_decref(doc);
}

static void print_report(const struct run_report *r, const struct report_opts *o, FILE *out)
{
	struct report_opts local = *o;

	local.structure = r->structure;
	/* A tree has a line per image: past the screenful it cannot fit. */
	local.summarise = o->max_lines > 0 && jint(r->totals, "images") > o->max_lines;
	if (jhas(r->run, "so_far_ns")) {
		local.open_until_ns = jint(r->run, "start_ns") + jint(r->run, "so_far_ns");
		local.unwatched = json_is_false(json_object_get(r->run, "watched"));
	}
	if (local.json)
		print_json(r, out);
	else if (local.max_lines > 0 && !local.summarise)
		print_text_within(out, r->run, r->roots, r->totals, &local);
	else
		print_text(out, r->run, r->roots, r->totals, &local);
}

void report_print(const struct run_report *r, const struct report_opts *o, FILE *out)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem;

	/* On a terminal every line fits its width: cut with "…" rather than wrapped. */
	if (o->json || o->width <= 0 || !(mem = open_memstream(&text, &len))) {
		print_report(r, o, out);
		return;
	}
	print_report(r, o, mem);
	fclose(mem);
	print_fitted(out, text, o->width);
	free(text);
}
