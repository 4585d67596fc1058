/*
 * tracer explain [--db PATH] [--json] [--step ID] [RUN]: why a run or step was
 * slow or failed, ranked by evidence. Failures first, earliest cause first;
 * then the steps that took the most time, each with where its processes'
 * time went (CPU, disk I/O wait, waiting for a CPU, memory reclaim, sleep)
 * and the signals raised about it. Everything comes from measurements.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/db/clidb.h"
#include "cli/model/containers.h"
#include "cli/model/health.h"
#include "cli/render/clierror.h"
#include "cli/render/explain.h"
#include "cli/render/format.h"
#include "cli/render/jsonfield.h"
#include "cli/render/report.h"
#include "cli/render/sections.h"
#include "cli/verbs/commands.h"
#include "common/strutil.h"
#include "common/timeutil.h"

static const char usage[] =
    "usage: tracer explain [--db PATH] [--json] [--step ID|RUN:KEY] [--top N] [RUN]\n"
    "  why a run (default: the latest) or one step was slow or failed\n";

static const char step_columns[] =
    "SELECT s.id, s.name, s.kind, s.key, s.status, s.exit_code, s.signal, s.start_ns, s.end_ns,"
    " s.end_ns - s.start_ns AS wall_ns, s.cpu_ns, s.iowait_ns, s.runq_ns, s.reclaim_ns, s.sleep_ns,"
    " s.net_wait_ns, s.net_wait_recv_ns, s.net_wait_send_ns, s.net_wait_connect_ns,"
    " s.net_wait_accept_ns, s.net_wait_poll_ns, s.avg_cores, s.peak_cores, s.peak_rss_kb, "
    "s.memory_limit_kb, s.cpu_limit, s.read_bytes,"
    " s.write_bytes, s.net_tx_bytes, s.net_rx_bytes, s.character, s.processes FROM steps s";

static void print_signal(const struct cli_query *q, json_t *g, const char *indent)
{
	const char *sev = jstr(g, "severity");
	printf("%s%s%s%s [%s] %s\n", indent, cli_severity_color(q, sev), sev, cli_reset(q),
	       jstr(g, "kind"), jstr(g, "message"));
}

/*
 * --step ID (what `tracer show` prints) or RUN:KEY (a run's id or name, and the
 * step's key). With a RUN argument too, --step N is that run's step with id N
 * (as `show` prints it), else its step with key N: never another run's step.
 */
static int64_t step_of(sqlite3 *db, const char *arg, const char *run_arg)
{
	const char *colon = strrchr(arg, ':');
	sqlite3_stmt *st;
	char run[256];

	if (!colon && !run_arg) {
		char *end;
		long long n = strtoll(arg, &end, 10);
		return *arg && !*end ? n : 0;
	}
	if (colon)
		snprintf(run, sizeof(run), "%.*s", (int)(colon - arg), arg);
	else
		copy_string(run, sizeof(run), run_arg);
	int64_t run_id = cli_find_run(db, run);
	if (run_id <= 0 ||
	    sqlite3_prepare_v2(
		db,
		"SELECT id FROM steps WHERE run_id = ?1 AND (key = ?2 OR (?3 AND"
		" CAST(id AS TEXT) = ?2)) ORDER BY CAST(id AS TEXT) = ?2 DESC LIMIT 1",
		-1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_text(st, 2, colon ? colon + 1 : arg, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, !colon);
	return cli_first_id(st);
}

/* The run to explain: the step's, or the one named (default: the latest). 0: none (said). */
static int64_t run_to_explain(sqlite3 *db, struct cli_query *q, int64_t step, const char *step_arg)
{
	int64_t run;

	if (!step)
		return cli_run(q, db);
	json_t *r = cli_rows_json(db, "SELECT run_id FROM steps WHERE id = ?1", step);
	run = jint(json_array_get(r, 0), "run_id");
	json_decref(r);
	if (!run)
		cli_error("explain", "no step %s\n", step_arg);
	return run;
}

/*
 * A run or step not ended: its numbers hold the processes that ended (the
 * aggregator adds a process when it ends), so its sentence says so.
 */
static void only_what_ended(json_t *o)
{
	char text[640];

	if (!strcmp(jstr(o, "explanation"), "no time measured"))
		snprintf(text, sizeof(text),
			 "not ended: its time is counted as its processes end (tracer top shows "
			 "what the running ones use now)");
	else
		snprintf(text, sizeof(text),
			 "%s (of its processes that ended; tracer top shows the running ones)",
			 jstr(o, "explanation"));
	json_object_set_new(o, "explanation", json_string(text));
}

/* The run's row, with its character and where its time went; NULL if it has none. */
static json_t *load_run(sqlite3 *db, int64_t run)
{
	json_t *runs = cli_rows_json(
	    db,
	    "SELECT id, name, pipeline, engine, status, exit_code, signal, start_ns, end_ns,"
	    " end_ns - start_ns AS wall_ns, cpu_ns, iowait_ns, runq_ns, reclaim_ns, sleep_ns,"
	    " net_wait_ns, net_wait_recv_ns, net_wait_send_ns, net_wait_connect_ns,"
	    " net_wait_accept_ns, net_wait_poll_ns, avg_cores, peak_cores, peak_rss_kb, "
	    "read_bytes, write_bytes, net_tx_bytes,"
	    " net_rx_bytes, steps, processes, failed_processes," RUN_UNFINISHED_COLUMNS
	    " FROM runs WHERE id = ?1",
	    run);
	json_t *r = json_incref(json_array_get(runs, 0));

	json_decref(runs);
	if (!r)
		return NULL;
	if (json_is_null(json_object_get(r, "end_ns")))
		health_add_liveness(db, r);
	/* The run as a whole, told the same way as a step. */
	explain_run_character(r);
	json_object_set_new(r, "name_for_text", json_string("the run"));
	explain_time(r);
	if (json_is_null(json_object_get(r, "end_ns")))
		only_what_ended(r);
	json_object_del(r, "name_for_text");
	return r;
}

struct filter {
	char text[64];
};

/* "AND column = STEP", or nothing without a step. */
static struct filter step_filter(int64_t step, const char *column)
{
	struct filter f = {""};

	if (step)
		snprintf(f.text, sizeof(f.text), "AND %s = %lld", column, (long long)step);
	return f;
}

/* Signals of the run (or of one step): critical first, then earliest first. */
static json_t *load_signals(sqlite3 *db, int64_t run, int64_t step)
{
	char sql[2300];

	snprintf(
	    sql, sizeof(sql),
	    "SELECT g.id, g.kind, g.severity, g.step_id, g.process_id, g.message, g.details,"
	    " g.at_ns, g.active, CASE WHEN json_valid(g.details) THEN"
	    " coalesce(json_extract(g.details, '$.went_on_past'), 0) ELSE 0 END AS went_on_past"
	    " FROM signals g WHERE g.run_id = ?1 %s ORDER BY"
	    " CASE g.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END,"
	    " coalesce(g.at_ns, g.detected_ns), g.id",
	    step_filter(step, "g.step_id").text);
	return cli_rows_json(db, sql, run);
}

/* Steps by wall time, each with where its time went, its share of the run and its signals. */
static json_t *load_steps(sqlite3 *db, json_t *r, int64_t step, json_t *sigs)
{
	char sql[2048];
	/* Steps not ended count up to where the run's time runs to so far. */
	bool ended = !json_is_null(json_object_get(r, "end_ns"));
	int64_t horizon = jint(r, "start_ns") + jint(r, "so_far_ns");
	int64_t run_wall = ended ? jint(r, "wall_ns") : jint(r, "so_far_ns");

	snprintf(sql, sizeof(sql),
		 "%s WHERE s.run_id = ?1 %s ORDER BY coalesce(s.end_ns, %lld) - s.start_ns DESC",
		 step_columns, step_filter(step, "s.id").text, (long long)horizon);
	json_t *steps = cli_rows_json(db, sql, jint(r, "id"));
	for (size_t i = 0; i < json_array_size(steps); i++) {
		json_t *s = json_array_get(steps, i);
		int64_t wall = jint(s, "wall_ns");
		if (json_is_null(json_object_get(s, "end_ns"))) {
			wall = horizon > jint(s, "start_ns") ? horizon - jint(s, "start_ns") : 0;
			json_object_set_new(s, "so_far_ns", json_integer(wall));
		}
		explain_time(s);
		if (json_object_get(s, "so_far_ns"))
			only_what_ended(s);
		if (run_wall > 0)
			json_object_set_new(s, "share_of_run",
					    json_real((double)wall / (double)run_wall));
		json_t *mine = json_array();
		for (size_t k = 0; k < json_array_size(sigs); k++)
			if (jint(json_array_get(sigs, k), "step_id") == jint(s, "id"))
				json_array_append(mine, json_array_get(sigs, k));
		json_object_set_new(s, "signals", mine);
	}
	return steps;
}

struct explanation {
	int64_t run;
	json_t *r, *sigs, *steps, *failures;
	json_t *went_on_past;  /* failures of a script's earlier steps it went on past */
	json_t *containers;    /* the containers it started, linked or ambiguous */
	int64_t unlinked_clis; /* its `docker run`s no container was linked to */
	bool failed;	       /* the run, or the step asked about, failed or was killed */
	long top;
};

/*
 * Whether a failure of this process is listed already: a killed tool that failed
 * its step has both the step's tool_failed and its own killed signal, with the
 * same evidence; the first (the most severe, then the earliest) is enough.
 */
static bool lists_process(const json_t *list, int64_t process_id)
{
	for (size_t i = 0; process_id > 0 && i < json_array_size(list); i++)
		if (jint(json_array_get(list, i), "process_id") == process_id)
			return true;
	return false;
}

/* Critical signals; for one step, also its failures its run later handled. */
static bool is_failure(const json_t *g, int64_t step)
{
	if (!strcmp(jstr(g, "severity"), "critical"))
		return true;
	return step &&
	       (!strcmp(jstr(g, "kind"), "tool_failed") || !strcmp(jstr(g, "kind"), "killed"));
}

/*
 * Whether path is in the program's own installation: in the directory above
 * its executable's (/usr for /usr/bin/python3), or under its bin/ or lib*\/. Every
 * interpreter probes there for optional files at start (pyvenv.cfg, ._pth,
 * zipped stdlib): failing to find them is normal, not evidence.
 */
static bool in_own_installation(const char *exe, const char *path)
{
	const char *bin = exe ? strrchr(exe, '/') : NULL;
	size_t n;

	if (!bin || bin == exe)
		return false;
	/* The prefix: exe with its last two components removed. */
	for (n = (size_t)(bin - exe); n > 0 && exe[n - 1] != '/'; n--)
		;
	if (n == 0 || strncmp(path, exe, n) != 0)
		return false;
	const char *rest = path + n;
	return !strchr(rest, '/') || !strncmp(rest, "bin/", 4) || !strncmp(rest, "lib", 3);
}

/* Adds to a failure what we hold about its process: its exit, its failed opens. */
static void add_evidence(sqlite3 *db, json_t *g)
{
	int64_t id = jint(g, "process_id");
	json_t *ev = json_object(), *opens = json_array();
	char exit_text[200];
	json_int_t own = 0;

	json_t *rows = cli_rows_json(db,
				     "SELECT exit_code, signal, exe, oom_killed, killed_by_pid, "
				     "killed_by_comm FROM processes WHERE id = ?1",
				     id);
	json_t *p = json_array_get(rows, 0);
	char exe[1024] = "";
	if (p && json_is_string(json_object_get(p, "exe")))
		snprintf(exe, sizeof(exe), "%s", jstr(p, "exe"));
	if (p && (json_is_integer(json_object_get(p, "signal")) ||
		  json_is_integer(json_object_get(p, "exit_code")))) {
		explain_process_end(p, exit_text, sizeof(exit_text));
		json_object_set_new(ev, "exit", json_string(exit_text));
		if (json_is_integer(json_object_get(p, "killed_by_pid")))
			json_object_set_new(ev, "killed_by",
					    json_pack("{s:O, s:O}", "pid",
						      json_object_get(p, "killed_by_pid"), "comm",
						      json_object_get(p, "killed_by_comm")));
	}
	json_decref(rows);
	/* Opens that failed, newest first: a missing input shows here. */
	rows = cli_rows_json(db, containers_failed_opens_sql(db), id);
	for (size_t i = 0; i < json_array_size(rows); i++) {
		json_t *f = json_array_get(rows, i);
		int err = (int)jint(f, "result");
		if (in_own_installation(exe, jstr(f, "path"))) {
			own++;
			continue;
		}
		if (json_array_size(opens) >= 5)
			continue;
		json_array_append_new(opens,
				      json_pack("{s:s, s:i, s:s}", "path", jstr(f, "path"), "errno",
						err, "error", err ? strerror(err) : "failed"));
	}
	json_decref(rows);
	json_object_set_new(ev, "failed_opens", opens);
	json_object_set_new(ev, "failed_opens_own_installation", json_integer(own));
	json_object_set_new(g, "evidence", ev);
}

/* The evidence under a failure: what the exit means, and the opens that failed. */
static void print_evidence(json_t *g)
{
	json_t *ev = json_object_get(g, "evidence");
	json_t *opens = json_object_get(ev, "failed_opens");

	if (json_object_get(ev, "exit"))
		printf("     %s\n", jstr(ev, "exit"));
	for (size_t i = 0; i < json_array_size(opens); i++) {
		json_t *o = json_array_get(opens, i);
		printf("     it could not open %s: %s\n", jstr(o, "path"), jstr(o, "error"));
	}
	json_int_t own = jint(ev, "failed_opens_own_installation");
	if (own)
		printf("     (%lld failed open%s in its own installation not listed: a program "
		       "probing for optional files at start)\n",
		       (long long)own, own == 1 ? "" : "s");
}

/* Failure signals numbered, each with its evidence. */
static void print_numbered_failures(const struct cli_query *q, json_t *list)
{
	char buf[64];

	for (size_t k = 0; k < json_array_size(list); k++) {
		snprintf(buf, sizeof(buf), "  %zu. ", k + 1);
		print_signal(q, json_array_get(list, k), buf);
		print_evidence(json_array_get(list, k));
	}
}

static void print_failures(const struct cli_query *q, const struct explanation *e)
{
	if (!e->failed)
		return;
	printf("\nWhy it failed (earliest first):\n");
	print_numbered_failures(q, e->failures);
	if (!json_array_size(e->failures))
		printf("  it %s, and no tool in it failed on its own: see the steps below\n",
		       jstr(e->r, "status"));
	if (!json_array_size(e->went_on_past))
		return;
	printf("\nEarlier failures the run went on past (earliest first):\n");
	print_numbered_failures(q, e->went_on_past);
}

static void print_steps(const struct cli_query *q, const struct explanation *e)
{
	char wall[32];

	if (!json_array_size(e->steps))
		return;
	printf("\nWhere the time went (steps by wall time):\n");
	for (size_t i = 0; i < json_array_size(e->steps) && (long)i < e->top; i++) {
		json_t *s = json_array_get(e->steps, i);
		bool open = json_object_get(s, "so_far_ns") != NULL;
		bool unknown = open && !json_is_true(json_object_get(e->r, "watched"));
		format_duration(open ? jint(s, "so_far_ns") : jint(s, "wall_ns"), wall,
				sizeof(wall));
		printf("  %zu. %s: %s%s", i + 1,
		       jstr(s, "name")[0] ? jstr(s, "name") : jstr(s, "key"), wall,
		       !open	 ? ""
		       : unknown ? " when last seen"
				 : " so far");
		if (json_object_get(s, "share_of_run"))
			printf(" (%.0f%% of the run)", 100 * jnum(s, "share_of_run"));
		printf(", %s\n     %s\n", unknown ? "unknown" : jstr(s, "status"),
		       jstr(s, "explanation"));
		json_t *mine = json_object_get(s, "signals");
		for (size_t k = 0; k < json_array_size(mine); k++) {
			json_t *g = json_array_get(mine, k);
			/* Critical ones and those the run went on past are listed above. */
			if (strcmp(jstr(g, "severity"), "critical") && !jint(g, "went_on_past"))
				print_signal(q, g, "     ");
		}
	}
}

/* Warnings about processes outside any step. */
static void print_other_signals(const struct cli_query *q, const struct explanation *e)
{
	bool header = false;

	for (size_t k = 0; k < json_array_size(e->sigs); k++) {
		json_t *g = json_array_get(e->sigs, k);
		if (json_integer_value(json_object_get(g, "step_id")) ||
		    !strcmp(jstr(g, "severity"), "critical"))
			continue;
		if (!header)
			printf("\nOther signals:\n");
		header = true;
		print_signal(q, g, "  ");
	}
}

/* A finished run with processes that have no end here: their use is in none of the numbers. */
static void print_unfinished(json_t *r)
{
	int64_t running = jint(r, "running_processes"), lost = jint(r, "lost_processes");

	if (!json_object_get(r, "end_ns") || json_is_null(json_object_get(r, "end_ns")) ||
	    (!running && !lost))
		return;
	printf("  Not counted:");
	if (running)
		printf(" %lld %s outlived the command (still running at its end)",
		       (long long)running, plural(running, "process", "processes"));
	if (lost)
		printf("%s %lld %s ended while no collector watched", running ? ";" : "",
		       (long long)lost, plural(lost, "process", "processes"));
	printf(": what %s used is in none of these numbers (tracer show %lld names %s)\n",
	       running + lost == 1 ? "it" : "they", (long long)jint(r, "id"),
	       running + lost == 1 ? "it" : "them");
}

/* Where the run stands: "ok after 3s", "running for 12s so far", or unknown and why. */
static void run_state_text(json_t *r, char *out, size_t size)
{
	char wall[32], ago[32];

	if (!json_is_null(json_object_get(r, "end_ns")) || !json_object_get(r, "so_far_ns")) {
		format_duration(jint(r, "wall_ns"), wall, sizeof(wall));
		snprintf(out, size, "%s after %s",
			 jstr(r, "status")[0] ? jstr(r, "status") : "recorded", wall);
		return;
	}
	format_duration(jint(r, "so_far_ns"), wall, sizeof(wall));
	if (json_is_true(json_object_get(r, "watched"))) {
		snprintf(out, size, "running for %s so far", wall);
	} else if (jint(r, "last_heard_ns")) {
		format_duration((int64_t)now_realtime_ns() - jint(r, "last_heard_ns"), ago,
				sizeof(ago));
		snprintf(out, size,
			 "unknown: not ended after %s, when a collector of its host last wrote "
			 "here (%s ago); its end was not seen",
			 wall, ago);
	} else {
		snprintf(out, size,
			 "unknown: no collector of its host ever wrote here; its end was not seen");
	}
}

static void print_text(const struct cli_query *q, const struct explanation *e)
{
	char state[256];
	json_t *r = e->r;

	run_state_text(r, state, sizeof(state));
	printf("Run %lld '%s'%s%s%s: %s, %lld %s, %lld %s\n", (long long)e->run, jstr(r, "name"),
	       jstr(r, "engine")[0] ? " [" : "", jstr(r, "engine"), jstr(r, "engine")[0] ? "]" : "",
	       state, (long long)jint(r, "steps"), plural(jint(r, "steps"), "step", "steps"),
	       (long long)jint(r, "processes"),
	       plural(jint(r, "processes"), "process", "processes"));
	if (json_object_get(r, "explanation"))
		printf("  Overall: %s\n", jstr(r, "explanation"));
	print_unfinished(r);
	containers_print(stdout, e->containers, e->unlinked_clis, "  ");
	print_failures(q, e);
	print_steps(q, e);
	print_other_signals(q, e);
	if (!json_array_size(e->sigs) && !json_array_size(e->steps) && !e->failed)
		printf("\nNo signals and no steps: nothing stood out.\n");
}

static void print_json(const struct explanation *e)
{
	json_t *doc =
	    json_pack("{s:O, s:b, s:O, s:O, s:O, s:O, s:O, s:I}", "run", e->r ? e->r : json_null(),
		      "failed", e->failed, "failure", e->failures, "went_on_past", e->went_on_past,
		      "steps", e->steps, "signals", e->sigs, "containers", e->containers,
		      "containers_unlinked_clis", (json_int_t)e->unlinked_clis);
	cli_print_json(doc);
	json_decref(doc);
}

int cmd_explain(int argc, char **argv)
{
	struct cli_query q = {.verb = "explain"};
	const char *step_arg = NULL, *top_arg = NULL;
	const struct cli_extra_option extra[] = {
	    {"step", true, &step_arg}, {"top", true, &top_arg}, {NULL, false, NULL}};
	struct explanation e = {0};
	bool done;
	int rc = cli_parse(argc, argv, &q, usage, extra, &done);

	if (done)
		return rc;
	double top = 5;
	if (cli_number("explain", "top", top_arg, 1, 1000, &top) != 0)
		return 2;
	e.top = (long)top;
	sqlite3 *db = cli_open(&q);
	if (!db)
		return 1;
	int64_t step = step_arg ? step_of(db, step_arg, q.arg) : 0;
	if (step_arg && step <= 0) {
		if (q.arg)
			cli_error("explain",
				  "run %s has no step %s (its steps are in tracer show %s)\n",
				  q.arg, step_arg, q.arg);
		else
			cli_error("explain", "no step %s (an id from tracer show, or RUN:KEY)\n",
				  step_arg);
		sqlite3_close(db);
		return 1;
	}
	if (!(e.run = run_to_explain(db, &q, step, step_arg))) {
		sqlite3_close(db);
		return 1;
	}
	e.r = load_run(db, e.run);
	e.sigs = load_signals(db, e.run, step);
	e.containers = containers_of_run(db, e.run);
	e.unlinked_clis = containers_unlinked_clis(db, e.run);
	e.steps = load_steps(db, e.r, step, e.sigs);
	/* Failure evidence: critical signals, earliest first (the first failure is the cause). */
	e.failures = json_array();
	e.went_on_past = json_array();
	for (size_t k = 0; k < json_array_size(e.sigs); k++) {
		json_t *g = json_array_get(e.sigs, k);
		json_t *list = is_failure(g, step)	 ? e.failures
			       : jint(g, "went_on_past") ? e.went_on_past
							 : NULL;
		if (list && !lists_process(list, jint(g, "process_id"))) {
			add_evidence(db, g);
			json_array_append(list, g);
		}
	}
	/* "Why it failed" only when it did: the run, or the step asked about. */
	const char *status = jstr(e.r, "status");
	if (step) {
		for (size_t i = 0; i < json_array_size(e.steps); i++)
			status = jstr(json_array_get(e.steps, i), "status");
	}
	e.failed = !strcmp(status, "failed") || !strcmp(status, "killed");
	if (q.json)
		print_json(&e);
	else
		print_text(&q, &e);
	json_decref(e.r);
	json_decref(e.failures);
	json_decref(e.went_on_past);
	json_decref(e.steps);
	json_decref(e.sigs);
	json_decref(e.containers);
	sqlite3_close(db);
	return 0;
}
