/*
 * What the run report shows, read from the database (the text and JSON are
 * render/report.c's): the run's processes as a forest with the run's totals,
 * and its structure (steps, tools, containers, batch jobs).
 */
#include "cli/model/runreport.h"

#include <stdio.h>
#include <string.h>

#include "cli/cost/energyrun.h"
#include "cli/db/rows.h"
#include "cli/model/batchjobs.h"
#include "cli/model/containers.h"
#include "cli/model/health.h"

/*
 * A fork that could not start a program: Python's subprocess forks, and when
 * the exec fails (the program is not installed: Toil's `nvidia-smi` probe) the
 * child writes the errno to its parent ("OSError:2:", a few bytes) and exits
 * 255, never having run a program of its own (its argv and exe are its
 * parent's). The parent gets the error (FileNotFoundError) and decides.
 */
#define EXEC_FAILED_SQL                                                                            \
	"(p.exit_code = 255 AND p.signal IS NULL AND p.image = 0 AND p.wchar <= 64 AND "           \
	"EXISTS (SELECT 1 FROM processes q WHERE q.id = p.parent_id AND q.argv IS p.argv AND "     \
	"q.exe = p.exe AND q.exe GLOB '*/python*')) AS exec_failed"

/* Processes without an end a run's header names (pid and program), at most. */
#define UNFINISHED_NAMED 3

/* The run's processes as a forest: roots are those whose parent is outside it. */
static json_t *load_tree(sqlite3 *db, int64_t run_id, json_t *totals)
{
	sqlite3_stmt *st;
	json_t *by_id = json_object(), *all = json_array(), *roots = json_array();
	int64_t cpu = 0, peak = 0, rchar = 0, wchar = 0, count = 0, images = 0, failed = 0;
	int64_t exec_failed = 0;
	int64_t running = 0, lost = 0;
	json_t *unfinished = json_array();

	if (sqlite3_prepare_v2(db,
			       "SELECT p.*, " EXEC_FAILED_SQL
			       " FROM processes p WHERE p.run_id = ? "
			       "ORDER BY p.start_ns, p.id",
			       -1, &st, NULL) != SQLITE_OK)
		return roots;
	sqlite3_bind_int64(st, 1, run_id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		json_t *p = cli_row_object(st);
		char key[32];
		snprintf(key, sizeof(key), "%lld", (long long)jint(p, "id"));
		json_object_set(by_id, key, p);
		json_array_append_new(all, p);
		/* A row is an image; a process's first image is image 0. */
		images++;
		count += jint(p, "image") == 0;
		cpu += jint(p, "cpu_user_ns") + jint(p, "cpu_sys_ns");
		if (jint(p, "max_rss_kb") > peak)
			peak = jint(p, "max_rss_kb");
		rchar += jint(p, "rchar");
		wchar += jint(p, "wchar");
		if (report_process_failed(p))
			failed++;
		exec_failed += cli_flag(p, "exec_failed");
		/* Images with no end: their use is in no total (print_unfinished). */
		const char *state = json_string_value(json_object_get(p, "state"));
		bool is_running = state && !strcmp(state, "running");
		bool is_lost = state && !strcmp(state, "lost");
		running += is_running;
		lost += is_lost;
		if ((is_running || is_lost) && json_array_size(unfinished) < UNFINISHED_NAMED)
			json_array_append_new(
			    unfinished,
			    json_pack("{s:I, s:O, s:s}", "pid", (json_int_t)jint(p, "pid"), "comm",
				      json_object_get(p, "comm"), "state", state));
	}
	sqlite3_finalize(st);
	for (size_t i = 0; i < json_array_size(all); i++) {
		json_t *p = json_array_get(all, i);
		char key[32];
		snprintf(key, sizeof(key), "%lld", (long long)jint(p, "parent_id"));
		json_t *parent = jhas(p, "parent_id") ? json_object_get(by_id, key) : NULL;
		if (parent) {
			json_t *kids = json_object_get(parent, "children");
			if (!kids) {
				kids = json_array();
				json_object_set_new(parent, "children", kids);
			}
			json_array_append(kids, p);
		} else {
			json_array_append(roots, p);
		}
	}
	json_decref(all);
	json_decref(by_id);
	json_object_set_new(totals, "processes", json_integer(count));
	json_object_set_new(totals, "images", json_integer(images));
	json_object_set_new(totals, "failed_processes", json_integer(failed));
	json_object_set_new(totals, "exec_failed_processes", json_integer(exec_failed));
	json_object_set_new(totals, "cpu_ns", json_integer(cpu));
	json_object_set_new(totals, "max_process_rss_kb", json_integer(peak));
	json_object_set_new(totals, "rchar", json_integer(rchar));
	json_object_set_new(totals, "wchar", json_integer(wchar));
	json_object_set_new(totals, "running_processes", json_integer(running));
	json_object_set_new(totals, "lost_processes", json_integer(lost));
	json_object_set_new(totals, "unfinished", unfinished);
	return roots;
}

/*
 * The run's structure: steps, each with its tools, each with its processes;
 * processes outside any step (the engine itself) under "outside_steps".
 */
static json_t *load_steps(sqlite3 *db, int64_t run_id)
{
	json_t *steps =
	    cli_rows_json(db, "SELECT * FROM steps WHERE run_id = ? ORDER BY start_ns, id", run_id);
	json_t *procs = cli_rows_json(
	    db,
	    "SELECT p.id, p.pid, p.step_id, p.helper, p.state, p.start_ns, p.end_ns, p.exit_code, "
	    "p.signal, "
	    "p.cpu_user_ns, p.cpu_sys_ns, p.max_rss_kb, p.rchar, p.wchar, p.argv, p.comm, "
	    "coalesce(t.name, p.comm) AS tool, t.category, " EXEC_FAILED_SQL " FROM processes p "
	    "LEFT JOIN tools t ON t.id = p.tool_id WHERE p.run_id = ? ORDER BY p.start_ns, p.id",
	    run_id);
	json_t *outside = json_object();
	size_t i, k;
	json_t *p, *s;

	json_object_set_new(outside, "tools", json_array());
	json_array_foreach(steps, i, s) json_object_set_new(s, "tools", json_array());
	json_array_foreach(procs, i, p)
	{
		json_t *owner = outside;
		json_array_foreach(steps, k,
				   s) if (json_integer_value(json_object_get(s, "id")) ==
					  json_integer_value(json_object_get(p, "step_id")))
		{
			owner = s;
			break;
		}
		json_t *tools = json_object_get(owner, "tools"), *t = NULL, *cand;
		const char *name = json_string_value(json_object_get(p, "tool"));
		json_array_foreach(
		    tools, k, cand) if (!strcmp(json_string_value(json_object_get(cand, "name")),
						name ? name : "?"))
		{
			t = cand;
			break;
		}
		if (!t) {
			t = json_pack("{s:s, s:O, s:i, s:i, s:i, s:i, s:i, s:b, s:[]}", "name",
				      name ? name : "?", "category", json_object_get(p, "category"),
				      "processes", 0, "measured", 0, "cpu_ns", 0, "max_rss_kb", 0,
				      "failed_processes", 0, "helper", cli_flag(p, "helper"),
				      "process_list");
			json_array_append_new(tools, t);
		}
		int64_t cpu = jint(p, "cpu_user_ns") + jint(p, "cpu_sys_ns");
		json_object_set_new(t, "processes", json_integer(jint(t, "processes") + 1));
		json_object_set_new(t, "cpu_ns", json_integer(jint(t, "cpu_ns") + cpu));
		if (jhas(p, "cpu_user_ns"))
			json_object_set_new(t, "measured", json_integer(jint(t, "measured") + 1));
		if (jint(p, "max_rss_kb") > jint(t, "max_rss_kb"))
			json_object_set_new(t, "max_rss_kb", json_integer(jint(p, "max_rss_kb")));
		if (report_process_failed(p))
			json_object_set_new(t, "failed_processes",
					    json_integer(jint(t, "failed_processes") + 1));
		json_array_append(json_object_get(t, "process_list"), p);
	}
	json_decref(procs);
	json_t *doc = json_pack("{s:o, s:o}", "steps", steps, "outside_steps", outside);
	return doc;
}

int run_report_load(sqlite3 *db, int64_t run_id, bool watch_ended, struct run_report *r)
{
	r->run = cli_run_object(db, run_id);
	if (json_is_null(r->run)) {
		json_decref(r->run);
		return -1;
	}
	r->totals = json_object();
	if (!jhas(r->run, "end_ns"))
		health_add_liveness(db, r->run);
	r->roots = load_tree(db, run_id, r->totals);
	if (jint(r->totals, "running_processes") && !watch_ended)
		/* A collector still writing brings their ends; unknown claims nothing. */
		json_object_set_new(r->totals, "watched_now",
				    json_boolean(health_collector_writing(db) != 0));
	r->structure = load_steps(db, run_id);
	json_object_set_new(r->structure, "containers", containers_of_run(db, run_id));
	batch_add(r->structure, batch_load(db, run_id));
	json_object_set_new(r->structure, "containers_unlinked_clis",
			    json_integer(containers_unlinked_clis(db, run_id)));
	json_object_set_new(r->structure, "energy", energy_run_json(db, run_id));
	return 0;
}

void run_report_free(struct run_report *r)
{
	json_decref(r->roots);
	json_decref(r->totals);
	json_decref(r->run);
	json_decref(r->structure);
}

int report_print_run(sqlite3 *db, int64_t run_id, const struct report_opts *o, FILE *out)
{
	struct run_report r;

	if (run_report_load(db, run_id, o->watch_ended, &r) < 0)
		return -1;
	report_print(&r, o, out);
	run_report_free(&r);
	return 0;
}
