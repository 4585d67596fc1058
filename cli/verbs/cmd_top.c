/*
 * tracer top [--once] [--interval S]: what is running now, per run, step and
 * tool, refreshing. Each running step shows its progress and expected
 * remaining time from its own history: the median wall time of the same step
 * (same pipeline, same name) over earlier successful runs.
 */
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli/db/clidb.h"
#include "cli/db/fleet.h"
#include "cli/model/health.h"
#include "cli/render/format.h"
#include "cli/verbs/commands.h"
#include "common/timeutil.h"

static const char usage_text[] =
    "usage: tracer [--fleet URL] top [--db PATH] [--json] [--once] [--interval SECONDS]\n"
    "  running runs, steps and tools, refreshed every --interval seconds (default 2)\n"
    "  --fleet: every host's, from the fleet store (each run with its host)\n"
    "  --once: print one view and exit. Keys: q quits (so does Ctrl-C).\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int64_t median_wall(sqlite3 *db, int64_t pipeline_id, const char *name, int64_t run,
			   int *count)
{
	sqlite3_stmt *st;
	int64_t walls[50];
	int n = 0;

	*count = 0;
	if (!pipeline_id || !name ||
	    sqlite3_prepare_v2(
		db,
		"SELECT s.end_ns - s.start_ns FROM steps s JOIN runs r ON r.id ="
		" s.run_id WHERE r.pipeline_id = ?1 AND s.name = ?2 AND s.run_id != ?3"
		" AND s.status = 'ok' AND s.end_ns IS NOT NULL ORDER BY 1 LIMIT 50",
		-1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(st, 1, pipeline_id);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, run);
	while (n < 50 && sqlite3_step(st) == SQLITE_ROW)
		walls[n++] = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	*count = n;
	return n ? (n % 2 ? walls[n / 2] : (walls[n / 2 - 1] + walls[n / 2]) / 2) : 0;
}

/* Runs with live work, their running steps, and per step the tools now running. */
static json_t *snapshot(sqlite3 *db, int64_t now_ns)
{
	/* watched: a collector of the run's host is alive, so "running" is news, not a
	 * leftover of daemons that stopped before the run ended. */
	json_t *runs = cli_rows_json(
	    db,
	    "SELECT r.id, r.name, r.pipeline, r.pipeline_id, r.engine, r.start_ns,"
	    " " HEALTH_RUN_LAST_HEARD_SQL " AS last_heard_ns,"
	    " " HEALTH_RUN_WATCHED_SQL("?1") " AS watched"
					     " FROM runs r WHERE r.end_ns IS NULL AND (r.status IS "
					     "NULL OR r.status = 'running')"
					     " ORDER BY r.id DESC",
	    now_ns - liveness_stale_ns());
	for (size_t i = 0; i < json_array_size(runs); i++) {
		json_t *r = json_array_get(runs, i);
		int64_t id = json_integer_value(json_object_get(r, "id"));
		json_object_set_new(
		    r, "elapsed_ns",
		    json_integer(now_ns - json_integer_value(json_object_get(r, "start_ns"))));
		json_t *steps =
		    cli_rows_json(db,
				  "SELECT id, coalesce(name, key) AS name, kind, start_ns FROM"
				  " steps WHERE run_id = ?1 AND status = 'running' ORDER BY"
				  " start_ns",
				  id);
		for (size_t k = 0; k < json_array_size(steps); k++) {
			json_t *s = json_array_get(steps, k);
			int64_t elapsed =
			    now_ns - json_integer_value(json_object_get(s, "start_ns"));
			int history;
			int64_t usual = median_wall(
			    db, json_integer_value(json_object_get(r, "pipeline_id")),
			    json_string_value(json_object_get(s, "name")), id, &history);
			json_object_set_new(s, "elapsed_ns", json_integer(elapsed));
			if (usual > 0) {
				json_object_set_new(s, "usual_ns", json_integer(usual));
				json_object_set_new(s, "history", json_integer(history));
				json_object_set_new(s, "progress",
						    json_real((double)elapsed / (double)usual));
				json_object_set_new(s, "remaining_ns",
						    json_integer(usual - elapsed));
			}
			/* Tools running in the step, with cores from their last two samples. */
			json_object_set_new(
			    s, "tools",
			    cli_rows_json(
				db,
				"WITH live AS (SELECT p.id, coalesce(t.name, p.comm) AS tool FROM"
				" processes p LEFT JOIN tools t ON t.id = p.tool_id WHERE "
				"p.step_id = ?1"
				" AND p.state = 'running' AND p.helper = 0), last AS (SELECT "
				"m.process_id,"
				" m.rss_kb, (m.cpu_user_ns + m.cpu_sys_ns - lag(m.cpu_user_ns +"
				" m.cpu_sys_ns) OVER w) * 1.0 / (m.ts_ns - lag(m.ts_ns) OVER w) AS "
				"cores,"
				" row_number() OVER (PARTITION BY m.process_id ORDER BY m.ts_ns "
				"DESC) AS k"
				" FROM samples m WHERE m.process_id IN (SELECT id FROM live) "
				"WINDOW w AS"
				" (PARTITION BY m.process_id ORDER BY m.ts_ns)) SELECT l.tool, "
				"count(*) AS"
				" processes, coalesce(sum(x.cores), 0) AS cores, "
				"coalesce(sum(x.rss_kb), 0)"
				" AS rss_kb FROM live l LEFT JOIN last x ON x.process_id = l.id "
				"AND x.k = 1"
				" GROUP BY l.tool ORDER BY cores DESC",
				json_integer_value(json_object_get(s, "id"))));
		}
		json_object_set_new(r, "steps", steps);
	}
	return runs;
}

/* --fleet: every host's running runs, read one host at a time (ids repeat across
 * hosts), each with its host (_host) and hostname. NULL: said why. */
static json_t *fleet_snapshot(int64_t now_ns)
{
	json_t *hosts = fleet_live_hosts("top"), *all = hosts ? json_array() : NULL, *h, *r;
	size_t i, k;

	json_array_foreach(hosts, i, h)
	{
		const char *host = json_string_value(json_object_get(h, "_host"));
		sqlite3 *db = host ? fleet_open_live("top", host) : NULL;
		if (!db) {
			json_decref(all);
			all = NULL;
			break;
		}
		json_t *runs = snapshot(db, now_ns);
		sqlite3_close(db);
		json_array_foreach(runs, k, r)
		{
			json_object_set_new(r, "host", json_string(host));
			json_object_set(r, "hostname", json_object_get(h, "hostname"));
		}
		json_array_extend(all, runs);
		json_decref(runs);
	}
	json_decref(hosts);
	return all;
}

/* " on HOSTNAME" over the fleet; nothing on one host. */
static const char *on_host(const json_t *r, char *buf, size_t size)
{
	const char *name = json_string_value(json_object_get(r, "hostname"));
	const char *host = json_string_value(json_object_get(r, "host"));

	if (!host)
		return "";
	snprintf(buf, size, " on %s", name && *name ? name : host);
	return buf;
}

/* A run no collector watches now: its end was not seen. Over the fleet, its host
 * stopped reporting, and the records of that host are what is missing. */
static void print_unwatched(const json_t *r, const char *where)
{
	char a[32];
	int64_t heard = json_integer_value(json_object_get(r, "last_heard_ns"));

	format_duration((int64_t)now_realtime_ns() - heard, a, sizeof(a));
	if (json_object_get(r, "host"))
		printf("\nrun %lld '%s'%s  unknown: its host stopped reporting (last heard %s%s): "
		       "the records of %s are missing, so its end was not seen\n",
		       (long long)json_integer_value(json_object_get(r, "id")),
		       json_string_value(json_object_get(r, "name")), where, heard ? a : "never",
		       heard ? " ago" : "", where + 4);
	else
		printf("\nrun %lld '%s'  unknown: no collector heard from for %s, so its "
		       "end was not seen\n",
		       (long long)json_integer_value(json_object_get(r, "id")),
		       json_string_value(json_object_get(r, "name")), heard ? a : "ever");
}

static void print_view(const struct cli_query *q, json_t *runs)
{
	char a[32], b[32], mem[32], now[40];

	size_t unwatched = 0;
	for (size_t i = 0; i < json_array_size(runs); i++)
		unwatched += !cli_flag(json_array_get(runs, i), "watched");
	format_time((int64_t)now_realtime_ns(), now, sizeof(now));
	printf("tracer top  %s  %zu running run%s", now + 11, json_array_size(runs) - unwatched,
	       json_array_size(runs) - unwatched == 1 ? "" : "s");
	if (unwatched)
		printf(", %zu whose %s", unwatched,
		       fleet_active() ? "host stopped reporting" : "collector stopped");
	printf("\n");
	for (size_t i = 0; i < json_array_size(runs); i++) {
		json_t *r = json_array_get(runs, i);
		char where[300];
		on_host(r, where, sizeof(where));
		if (!cli_flag(r, "watched")) {
			print_unwatched(r, where);
			continue;
		}
		format_duration(json_integer_value(json_object_get(r, "elapsed_ns")), a, sizeof(a));
		printf("\nrun %lld '%s'%s%s%s  running %s\n",
		       (long long)json_integer_value(json_object_get(r, "id")),
		       json_string_value(json_object_get(r, "name")), where,
		       json_string_value(json_object_get(r, "engine")) ? "  " : "",
		       json_string_value(json_object_get(r, "engine"))
			   ? json_string_value(json_object_get(r, "engine"))
			   : "",
		       a);
		json_t *steps = json_object_get(r, "steps");
		for (size_t k = 0; k < json_array_size(steps); k++) {
			json_t *s = json_array_get(steps, k);
			format_duration(json_integer_value(json_object_get(s, "elapsed_ns")), a,
					sizeof(a));
			printf("  %-28.28s %9s", json_string_value(json_object_get(s, "name")), a);
			if (json_object_get(s, "usual_ns")) {
				int64_t rem =
				    json_integer_value(json_object_get(s, "remaining_ns"));
				format_duration(json_integer_value(json_object_get(s, "usual_ns")),
						b, sizeof(b));
				double pct = 100 * json_real_value(json_object_get(s, "progress"));
				if (rem >= 0) {
					format_duration(rem, a, sizeof(a));
					printf("  %3.0f%% of usual %s, ~%s left", pct, b, a);
				} else {
					format_duration(-rem, a, sizeof(a));
					printf("  %s%s over its usual %s%s",
					       cli_severity_color(q, "warning"), a, b,
					       cli_reset(q));
				}
			} else {
				printf("  (no history yet)");
			}
			printf("\n");
			json_t *tools = json_object_get(s, "tools");
			for (size_t t = 0; t < json_array_size(tools); t++) {
				json_t *tool = json_array_get(tools, t);
				format_bytes(
				    (uint64_t)json_integer_value(json_object_get(tool, "rss_kb")) *
					1024,
				    mem, sizeof(mem));
				printf("      %-24.24s x%-3lld %5.2f cores %10s\n",
				       json_string_value(json_object_get(tool, "tool")),
				       (long long)json_integer_value(
					   json_object_get(tool, "processes")),
				       json_number_value(json_object_get(tool, "cores")), mem);
			}
		}
	}
	fflush(stdout);
}

/*
 * Waits up to seconds for a key on a terminal stdin, read without waiting for
 * Enter; true if it was q or Q. Not a terminal: just sleeps.
 */
struct view_call {
	const struct cli_query *q;
	json_t *runs;
};

static int call_view(void *ctx)
{
	struct view_call *v = ctx;

	print_view(v->q, v->runs);
	return 0;
}

/* On a terminal, the view's long lines wrap at a word, not mid-word where the terminal would. */
static void print_view_fitted(const struct cli_query *q, json_t *runs)
{
	struct view_call v = {q, runs};
	int columns = format_terminal_columns(STDOUT_FILENO);

	if (columns > 0)
		print_wrapped_call(call_view, &v, columns);
	else
		print_view(q, runs);
}

static bool quit_key_within(double seconds)
{
	int ms = (int)(seconds * 1000);
	struct termios saved, raw;
	bool tty = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;

	if (!tty) {
		struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
		nanosleep(&ts, NULL);
		return false;
	}
	raw = saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
	char c = 0;
	bool quit =
	    poll(&p, 1, ms) == 1 && read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q');
	tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	return quit;
}

int cmd_top(int argc, char **argv)
{
	struct cli_query q = {.verb = "top"};
	const char *once = NULL, *interval_arg = NULL;
	const struct cli_extra_option extra[] = {
	    {"once", false, &once}, {"interval", true, &interval_arg}, {NULL, false, NULL}};
	bool done;
	int rc = cli_parse(argc, argv, &q, usage_text, extra, &done);

	if (done)
		return rc;
	double interval = 2.0;
	if (cli_number("top", "interval", interval_arg, 0.2, 3600, &interval) != 0)
		return 2;
	sqlite3 *db = fleet_active() ? NULL : cli_open(&q);
	if (!db && !fleet_active())
		return 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	bool loop = !once && !q.json;
	do {
		int64_t now = (int64_t)now_realtime_ns();
		json_t *runs = db ? snapshot(db, now) : fleet_snapshot(now);
		if (!runs) {
			rc = 1;
			break;
		}
		if (q.json) {
			json_t *doc = json_pack("{s:o}", "runs", runs);
			cli_print_json(doc);
			json_decref(doc);
		} else {
			if (loop && q.color) { /* past the output filter, which refuses it */
				fflush(stdout);
				if (write(STDOUT_FILENO, "\033[H\033[2J", 7) < 0)
					break;
			}
			print_view_fitted(&q, runs);
			json_decref(runs);
		}
		if (loop && quit_key_within(interval))
			break;
	} while (loop && !stop);
	sqlite3_close(db);
	return rc;
}
