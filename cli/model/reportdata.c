#include "cli/model/reportdata.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cost/rightsize.h"
#include "cli/cost/usage.h"
#include "cli/db/rows.h"
#include "cli/model/health.h"
#include "cli/render/explain.h"
#include "cli/render/format.h"
#include "cli/render/jsonfield.h"

#define SIGPIPE_NUMBER 13
/* Per step: the files listed, most opened first. */
#define FILES_PER_STEP 5
/* Earlier runs of the same pipeline compared with this one (docs/insight.md's window). */
#define HISTORY_RUNS 50

static const char run_columns[] =
    "SELECT id, name, pipeline, engine, status, hostname, arch, exit_code, signal, start_ns,"
    " end_ns, end_ns - start_ns AS wall_ns, cpu_ns, iowait_ns, runq_ns, reclaim_ns, sleep_ns,"
    " net_wait_ns, net_wait_recv_ns, net_wait_send_ns, net_wait_connect_ns, net_wait_accept_ns,"
    " net_wait_poll_ns,"
    " avg_cores, peak_cores, peak_rss_kb, read_bytes, write_bytes, net_tx_bytes, net_rx_bytes,"
    " steps, processes, failed_processes,"
    /* The command as it ran (argv redacted), for the header. */
    " (SELECT argv FROM processes WHERE id = runs.command_process_id) AS "
    "command_argv," RUN_UNFINISHED_COLUMNS " FROM runs WHERE id = ?1";

static const char step_columns[] =
    "SELECT id, key, name, kind, status, exit_code, signal, start_ns, end_ns,"
    " end_ns - start_ns AS wall_ns, cpu_ns, iowait_ns, runq_ns, reclaim_ns, sleep_ns,"
    " avg_cores, peak_cores, peak_rss_kb, memory_limit_kb, cpu_limit, read_bytes, write_bytes,"
    " net_tx_bytes, net_rx_bytes, character, processes FROM steps WHERE run_id = ?1"
    " ORDER BY start_ns, id";

/* The command of a process row (argv, exe) as one line, into "command". */
static void add_command(json_t *p)
{
	char cmd[512];
	char *argv = json_dumps(json_object_get(p, "argv"), JSON_COMPACT);

	format_command(argv, jstr(p, "exe"), cmd, sizeof(cmd));
	free(argv);
	json_object_set_new(p, "command", json_string(cmd));
	json_object_del(p, "argv");
	json_object_del(p, "exe");
}

/* What a failed step's failing processes were, with their exit explained. */
static void add_failures(sqlite3 *db, json_t *s)
{
	json_t *rows = cli_rows_json(
	    db,
	    "SELECT p.argv, p.exe, p.exit_code, p.signal, p.oom_killed, p.killed_by_pid,"
	    " p.killed_by_comm FROM processes p WHERE"
	    " p.step_id = ?1 AND p.helper = 0 AND (p.exit_code != 0 OR (p.signal IS NOT NULL AND"
	    " p.signal != 13)) ORDER BY p.end_ns LIMIT 3",
	    jint(s, "id"));
	size_t i;
	json_t *p;

	json_array_foreach(rows, i, p)
	{
		char why[200];
		explain_process_end(p, why, sizeof(why));
		add_command(p);
		json_object_set_new(p, "exit", json_string(why));
	}
	json_object_set_new(s, "failures", rows);
}

/* A path's index in paths (file_paths of the page: a path many steps opened, such as
 * a shared cache, is written once), added if new. */
static json_int_t path_index(json_t *paths, json_t *index, const char *path)
{
	json_t *known = json_object_get(index, path);

	if (known)
		return json_integer_value(known);
	json_int_t at = (json_int_t)json_array_size(paths);
	json_array_append_new(paths, json_string(path));
	json_object_set_new(index, path, json_integer(at));
	return at;
}

/* Per step: how many distinct files its processes opened, and the most opened (by their
 * index in paths). */
static void add_files(sqlite3 *db, int64_t run, json_t *steps, json_t *paths)
{
	sqlite3_stmt *st;
	json_t *by_step = json_object(), *index = json_object();

	if (sqlite3_prepare_v2(
		db,
		"SELECT p.step_id, f.path, sum(f.count) AS opens, max(f.access) FROM files f JOIN"
		" processes p ON p.id = f.process_id WHERE p.run_id = ?1 AND p.step_id IS NOT NULL"
		" GROUP BY p.step_id, f.path ORDER BY p.step_id, opens DESC, f.path",
		-1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run);
		while (sqlite3_step(st) == SQLITE_ROW) {
			char key[24];
			snprintf(key, sizeof(key), "%lld", (long long)sqlite3_column_int64(st, 0));
			json_t *f = json_object_get(by_step, key);
			if (!f) {
				f = json_pack("{s:i, s:[]}", "distinct", 0, "top");
				json_object_set_new(by_step, key, f);
			}
			json_object_set_new(f, "distinct", json_integer(jint(f, "distinct") + 1));
			json_t *top = json_object_get(f, "top");
			if (json_array_size(top) < FILES_PER_STEP)
				json_array_append_new(
				    top,
				    json_pack("[I, I, s?]",
					      path_index(paths, index,
							 (const char *)sqlite3_column_text(st, 1)),
					      (json_int_t)sqlite3_column_int64(st, 2),
					      (const char *)sqlite3_column_text(st, 3)));
		}
		sqlite3_finalize(st);
	}
	size_t i;
	json_t *s;
	json_array_foreach(steps, i, s)
	{
		char key[24];
		snprintf(key, sizeof(key), "%lld", (long long)jint(s, "id"));
		json_t *f = json_object_get(by_step, key);
		json_object_set(s, "files", f ? f : json_null());
	}
	json_decref(by_step);
	json_decref(index);
}

/*
 * Every process image of the run as one compact row (columns named once in
 * proc_columns): the distributions per tool and the task table are built
 * from these in the page. Status: 0 ok, 1 failed, 2 killed, 3 running,
 * 4 ended by SIGPIPE (its reader had gone: not a failure).
 */
static void add_processes(sqlite3 *db, int64_t run, int64_t run_start, json_t *steps, json_t *doc)
{
	json_t *tools = json_array(), *tool_index = json_object(), *rows = json_array();
	json_t *step_index = json_object();
	sqlite3_stmt *st;
	size_t i;
	json_t *s;

	json_array_foreach(steps, i, s)
	{
		char key[24];
		snprintf(key, sizeof(key), "%lld", (long long)jint(s, "id"));
		json_object_set_new(step_index, key, json_integer((json_int_t)i));
	}
	if (sqlite3_prepare_v2(
		db,
		"SELECT p.step_id, coalesce(t.name, p.comm, '?'), p.start_ns, p.end_ns,"
		" p.cpu_user_ns + p.cpu_sys_ns, p.max_rss_kb, p.read_bytes, p.write_bytes,"
		" p.iowait_ns, p.exit_code, p.signal, p.helper FROM processes p LEFT JOIN tools t"
		" ON t.id = p.tool_id WHERE p.run_id = ?1 ORDER BY p.start_ns, p.id",
		-1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, run);
		while (sqlite3_step(st) == SQLITE_ROW) {
			char key[24];
			const char *tool = (const char *)sqlite3_column_text(st, 1);
			json_t *ti = json_object_get(tool_index, tool);
			if (!ti) {
				ti = json_integer((json_int_t)json_array_size(tools));
				json_object_set_new(tool_index, tool, ti);
				json_array_append_new(tools, json_string(tool));
			}
			snprintf(key, sizeof(key), "%lld", (long long)sqlite3_column_int64(st, 0));
			json_t *si = sqlite3_column_type(st, 0) == SQLITE_NULL
					 ? NULL
					 : json_object_get(step_index, key);
			int64_t start = sqlite3_column_int64(st, 2);
			bool ended = sqlite3_column_type(st, 3) != SQLITE_NULL;
			bool signalled = sqlite3_column_type(st, 10) != SQLITE_NULL;
			int signal = sqlite3_column_int(st, 10);
			int status = !ended				     ? 3
				     : signalled && signal == SIGPIPE_NUMBER ? 4
				     : signalled			     ? 2
				     : sqlite3_column_int(st, 9) != 0	     ? 1
									     : 0;
			json_t *row = json_pack(
			    "[I, O, I, o, I, I, I, I, I, i, b]",
			    (json_int_t)(si ? json_integer_value(si) : -1), ti,
			    (json_int_t)(start - run_start),
			    ended ? json_integer(sqlite3_column_int64(st, 3) - start) : json_null(),
			    (json_int_t)sqlite3_column_int64(st, 4),
			    (json_int_t)sqlite3_column_int64(st, 5),
			    (json_int_t)sqlite3_column_int64(st, 6),
			    (json_int_t)sqlite3_column_int64(st, 7),
			    (json_int_t)sqlite3_column_int64(st, 8), status,
			    sqlite3_column_int(st, 11) != 0);
			json_array_append_new(rows, row);
		}
		sqlite3_finalize(st);
	}
	json_object_set_new(doc, "tools", tools);
	json_object_set_new(doc, "proc_columns",
			    json_pack("[s, s, s, s, s, s, s, s, s, s, s]", "step", "tool",
				      "start_offset_ns", "wall_ns", "cpu_ns", "peak_rss_kb",
				      "read_bytes", "write_bytes", "iowait_ns", "status",
				      "helper"));
	json_object_set_new(doc, "procs", rows);
	json_decref(tool_index);
	json_decref(step_index);
}

/*
 * The same steps in earlier successful runs of this pipeline (or, without
 * one, of runs of the same name): per step name, [wall_ns, peak_rss_kb] of
 * each, newest first, at most HISTORY_RUNS runs back.
 */
static json_t *history(sqlite3 *db, json_t *run)
{
	sqlite3_stmt *st;
	json_t *by_name = json_object();
	bool by_pipeline =
	    !json_is_null(json_object_get(run, "pipeline")) && json_object_get(run, "pipeline");
	int64_t runs = 0;

	if (sqlite3_prepare_v2(
		db,
		"WITH earlier AS (SELECT id FROM runs WHERE id != ?1 AND status = 'ok' AND "
		"start_ns <"
		" ?2 AND (CASE WHEN ?3 THEN pipeline = ?4 ELSE name = ?4 END) ORDER BY start_ns "
		"DESC"
		" LIMIT ?5) SELECT s.name, s.end_ns - s.start_ns, s.peak_rss_kb, (SELECT count(*) "
		"FROM"
		" earlier) FROM steps s JOIN earlier e ON e.id = s.run_id WHERE s.status = 'ok' AND"
		" s.end_ns IS NOT NULL AND s.name IS NOT NULL ORDER BY s.start_ns DESC",
		-1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(st, 1, jint(run, "id"));
		sqlite3_bind_int64(st, 2, jint(run, "start_ns"));
		sqlite3_bind_int(st, 3, by_pipeline);
		sqlite3_bind_text(st, 4, jstr(run, by_pipeline ? "pipeline" : "name"), -1,
				  SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 5, HISTORY_RUNS);
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *name = (const char *)sqlite3_column_text(st, 0);
			json_t *list = json_object_get(by_name, name);
			if (!list) {
				list = json_array();
				json_object_set_new(by_name, name, list);
			}
			json_array_append_new(
			    list, json_pack("[I, I]", (json_int_t)sqlite3_column_int64(st, 1),
					    (json_int_t)sqlite3_column_int64(st, 2)));
			runs = sqlite3_column_int64(st, 3);
		}
		sqlite3_finalize(st);
	}
	return json_pack("{s:s, s:I, s:o}", "compared_by", by_pipeline ? "pipeline" : "run name",
			 "runs", (json_int_t)runs, "steps", by_name);
}

/* Steps as rows of one column list (step_columns), as the processes are: each step's
 * keys written once for the run, not once a step (most of a large run's page). A key
 * only some steps have (failures) is null in the others. */
static json_t *as_columns(json_t *objects, json_t *doc, const char *columns_key)
{
	json_t *columns = json_array(), *rows = json_array();
	size_t i, c;
	json_t *o, *name;
	const char *key;
	json_t *v;

	json_array_foreach(objects, i, o)
	{
		json_object_foreach(o, key, v)
		{
			bool known = false;
			json_array_foreach(columns, c, name) known |=
			    !strcmp(json_string_value(name), key);
			if (!known)
				json_array_append_new(columns, json_string(key));
		}
	}
	json_array_foreach(objects, i, o)
	{
		json_t *row = json_array();
		json_array_foreach(columns, c, name)
		{
			v = json_object_get(o, json_string_value(name));
			json_array_append(row, v ? v : json_null());
		}
		json_array_append_new(rows, row);
	}
	json_object_set_new(doc, columns_key, columns);
	return rows;
}

json_t *report_data(sqlite3 *db, int64_t run_id, double headroom)
{
	struct host_capacity cap;
	char now[40];
	json_t *runs = cli_rows_json(db, run_columns, run_id);
	json_t *run = json_incref(json_array_get(runs, 0));
	json_t *steps = cli_rows_json(db, step_columns, run_id);
	size_t i;
	json_t *s;

	json_decref(runs);
	if (!run) {
		json_decref(steps);
		return NULL;
	}
	/* Not ended: watched (running) or not (unknown), and for how long so far. */
	if (json_is_null(json_object_get(run, "end_ns")))
		health_add_liveness(db, run);
	/* The headline judges the run by the rule its steps are judged by. */
	explain_run_character(run);
	explain_time(run);
	json_object_del(run, "shares");
	json_array_foreach(steps, i, s)
	{
		if (!strcmp(jstr(s, "status"), "failed") || !strcmp(jstr(s, "status"), "killed"))
			add_failures(db, s);
	}
	json_t *paths = json_array();
	add_files(db, run_id, steps, paths);
	json_t *signals = cli_rows_json(
	    db,
	    "SELECT g.kind, g.severity, g.message, g.active, g.step_id, s.name AS step FROM signals"
	    " g LEFT JOIN steps s ON s.id = g.step_id WHERE g.run_id = ?1 ORDER BY CASE g.severity"
	    " WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, g.id",
	    run_id);
	usage_capacity(db, &cap);
	json_t *recs = rightsize_steps(db, false, run_id);
	json_array_foreach(recs, i, s) rightsize_step(s, headroom, &cap);
	format_time((int64_t)time(NULL) * 1000000000LL, now, sizeof(now));
	json_t *usage = cli_rows_json(
	    db,
	    "WITH d AS (SELECT p.step_id, m.ts_ns, m.rss_kb, (m.cpu_user_ns + m.cpu_sys_ns) -"
	    " lag(m.cpu_user_ns + m.cpu_sys_ns) OVER w AS dcpu, m.ts_ns - lag(m.ts_ns) OVER w AS dt"
	    " FROM samples m JOIN processes p ON p.id = m.process_id WHERE p.run_id = ?1 AND"
	    " p.step_id IS NOT NULL WINDOW w AS (PARTITION BY m.process_id ORDER BY m.ts_ns))"
	    " SELECT step_id, ts_ns, sum(rss_kb) AS rss_kb, coalesce(sum(CASE WHEN dt > 0 THEN"
	    " CAST(dcpu AS REAL) / dt END), 0) AS cores, coalesce(sum(CASE WHEN dt > 0 THEN dcpu"
	    " END), 0) AS cpu_ns FROM d GROUP BY step_id, ts_ns"
	    " HAVING count(dt) > 0 ORDER BY step_id, ts_ns",
	    run_id);
	json_t *doc =
	    json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:f, s:i, s:f, s:s}", "run", run, "steps",
		      steps, "signals", signals, "usage", usage, "recommendations", recs, "history",
		      history(db, run), "headroom", headroom, "host_cpus", cap.cpus,
		      "host_memory_gib", cap.memory_gib, "generated_at", now);
	add_processes(db, run_id, jint(run, "start_ns"), steps, doc);
	json_object_set_new(doc, "steps", as_columns(steps, doc, "step_columns"));
	json_object_set_new(doc, "file_paths", paths);
	return doc;
}
