/*
 * tracer explain [--db PATH] [--json] [--step ID] [RUN]: why a run or step was
 * slow or failed, ranked by evidence. Failures first, earliest cause first;
 * then the steps that took the most time, each with where its processes'
 * time went (CPU, disk I/O wait, waiting for a CPU, memory reclaim, sleep)
 * and the signals raised about it. Everything comes from measurements.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/clidb.h"
#include "cli/commands.h"
#include "cli/format.h"
#include "common/character.h"

static const char usage[] =
    "usage: tracer explain [--db PATH] [--json] [--step ID] [--top N] [RUN]\n"
    "  why a run (default: the latest) or one step was slow or failed\n";

static const char step_columns[] =
    "SELECT s.id, s.name, s.kind, s.key, s.status, s.exit_code, s.signal, s.start_ns, s.end_ns,"
    " s.end_ns - s.start_ns AS wall_ns, s.cpu_ns, s.iowait_ns, s.runq_ns, s.reclaim_ns, s.sleep_ns,"
    " s.avg_cores, s.peak_cores, s.peak_rss_kb, s.memory_limit_kb, s.cpu_limit, s.read_bytes,"
    " s.write_bytes, s.net_tx_bytes, s.net_rx_bytes, s.character, s.processes FROM steps s";

static int64_t jint(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static double jnum(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* Shares of the step's process time and the sentence that explains it. */
static void explain_step(json_t *s)
{
	double cpu = (double)jint(s, "cpu_ns"), io = (double)jint(s, "iowait_ns");
	double runq = (double)jint(s, "runq_ns"), reclaim = (double)jint(s, "reclaim_ns");
	double sleep = (double)jint(s, "sleep_ns");
	double total = cpu + io + runq + reclaim + sleep;
	const char *character = jstr(s, "character");
	const char *name = jstr(s, "name_for_text")[0] ? jstr(s, "name_for_text")
			   : jstr(s, "name")[0]	       ? jstr(s, "name")
						       : jstr(s, "key");
	char text[512], a[32], b[32];

	if (total <= 0) {
		json_object_set_new(s, "explanation", json_string("no time measured"));
		return;
	}
	json_object_set_new(s, "shares",
			    json_pack("{s:f, s:f, s:f, s:f, s:f}", "cpu", cpu / total, "io_wait",
				      io / total, "cpu_wait", runq / total, "reclaim",
				      reclaim / total, "sleep", sleep / total));
	if (!strcmp(character, "io")) {
		format_bytes((uint64_t)jint(s, "read_bytes"), a, sizeof(a));
		format_bytes((uint64_t)jint(s, "write_bytes"), b, sizeof(b));
		snprintf(text, sizeof(text),
			 "%s spent %.0f%% of its time waiting on disk I/O (read %s, wrote %s from "
			 "storage)",
			 name, 100 * io / total, a, b);
	} else if (!strcmp(character, "contended")) {
		snprintf(
		    text, sizeof(text),
		    "%s competed for CPUs: it waited for one %.0f%% of the time it was runnable "
		    "(%.1f cores used on average%s)",
		    name, 100 * runq / (runq + cpu), jnum(s, "avg_cores"),
		    jnum(s, "cpu_limit") > 0 ? ", under a CPU limit" : "");
	} else if (!strcmp(character, "memory")) {
		format_bytes((uint64_t)jint(s, "peak_rss_kb") * 1024, a, sizeof(a));
		snprintf(text, sizeof(text),
			 "%s was short of memory: %.0f%% of its time went to reclaiming memory "
			 "(peak %s%s)",
			 name, 100 * reclaim / total, a,
			 jint(s, "memory_limit_kb") > 0 ? ", under a memory limit" : "");
	} else if (!strcmp(character, "network")) {
		format_bytes((uint64_t)(jint(s, "net_rx_bytes") + jint(s, "net_tx_bytes")), a,
			     sizeof(a));
		snprintf(text, sizeof(text),
			 "%s was network-bound: asleep %.0f%% of its time while moving %s over the "
			 "network",
			 name, 100 * sleep / total, a);
	} else if (!strcmp(character, "waiting")) {
		snprintf(text, sizeof(text),
			 "%s was mostly waiting: %.0f%% of its time neither on a CPU nor on disk "
			 "(a lock, a pipe, a child, a timer, the network)",
			 name, 100 * sleep / total);
	} else {
		char peak[32] = "";
		if (jnum(s, "peak_cores") > 0)
			snprintf(peak, sizeof(peak), " (peak %.1f)", jnum(s, "peak_cores"));
		snprintf(
		    text, sizeof(text),
		    "%s was compute-bound: %.0f%% of its time on a CPU, %.1f cores on average%s",
		    name, 100 * cpu / total, jnum(s, "avg_cores"), peak);
	}
	json_object_set_new(s, "explanation", json_string(text));
}

static void print_signal(const struct cli_query *q, json_t *g, const char *indent)
{
	const char *sev = jstr(g, "severity");
	printf("%s%s%s%s [%s] %s\n", indent, cli_severity_color(q, sev), sev, cli_reset(q),
	       jstr(g, "kind"), jstr(g, "message"));
}

int cmd_explain(int argc, char **argv)
{
	struct cli_query q = {.verb = "explain"};
	const char *step_arg = NULL, *top_arg = NULL;
	const struct cli_extra_option extra[] = {
	    {"step", true, &step_arg}, {"top", true, &top_arg}, {NULL, false, NULL}};
	char sql[2048], buf[64], wall[32];
	bool done;
	int rc = cli_parse(argc, argv, &q, usage, extra, &done);

	if (done)
		return rc;
	long top = top_arg ? strtol(top_arg, NULL, 10) : 5;
	sqlite3 *db = cli_open(&q);
	if (!db)
		return 1;
	int64_t run = 0, step = step_arg ? strtoll(step_arg, NULL, 10) : 0;
	if (step) {
		json_t *r = cli_rows_json(db, "SELECT run_id FROM steps WHERE id = ?1", step);
		run = jint(json_array_get(r, 0), "run_id");
		json_decref(r);
		if (!run) {
			fprintf(stderr, "tracer explain: no step %s\n", step_arg);
			sqlite3_close(db);
			return 1;
		}
	} else if (!(run = cli_run(&q, db))) {
		sqlite3_close(db);
		return 1;
	}
	json_t *runs = cli_rows_json(
	    db,
	    "SELECT id, name, pipeline, engine, status, exit_code, signal, start_ns, end_ns,"
	    " end_ns - start_ns AS wall_ns, cpu_ns, iowait_ns, runq_ns, reclaim_ns, sleep_ns,"
	    " avg_cores, peak_cores, peak_rss_kb, read_bytes, write_bytes, net_tx_bytes,"
	    " net_rx_bytes, steps, processes, failed_processes FROM runs WHERE id = ?1",
	    run);
	json_t *r = json_incref(json_array_get(runs, 0));
	json_decref(runs);
	if (r) {
		/* The run as a whole, told the same way as a step. */
		double wall_s = (double)jint(r, "wall_ns") / 1e9;
		const char *c = time_character(
		    (uint64_t)jint(r, "cpu_ns"), (uint64_t)jint(r, "iowait_ns"),
		    (uint64_t)jint(r, "runq_ns"), (uint64_t)jint(r, "reclaim_ns"),
		    (uint64_t)jint(r, "sleep_ns"),
		    wall_s > 0
			? (double)(jint(r, "net_tx_bytes") + jint(r, "net_rx_bytes")) / wall_s
			: 0);
		json_object_set_new(r, "character", c ? json_string(c) : json_null());
		json_object_set_new(r, "name_for_text", json_string("the run"));
		explain_step(r);
		json_object_del(r, "name_for_text");
	}
	/* Failure evidence: critical signals, earliest first (the first failure is the cause). */
	char where[64] = "";
	if (step)
		snprintf(where, sizeof(where), "%" PRId64, step);
	char full[2300];
	snprintf(full, sizeof(full),
		 "SELECT g.id, g.kind, g.severity, g.step_id, g.process_id, g.message, g.details,"
		 " g.at_ns, g.active FROM signals g WHERE g.run_id = ?1 %s%s ORDER BY"
		 " CASE g.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END,"
		 " coalesce(g.at_ns, g.detected_ns), g.id",
		 step ? "AND g.step_id = " : "", where);
	json_t *sigs = cli_rows_json(db, full, run);
	snprintf(sql, sizeof(sql), "%s WHERE s.run_id = ?1 %s%s ORDER BY wall_ns DESC",
		 step_columns, step ? "AND s.id = " : "", where);
	json_t *steps = cli_rows_json(db, sql, run);
	int64_t run_wall = jint(r, "wall_ns");
	size_t shown = 0;
	for (size_t i = 0; i < json_array_size(steps); i++) {
		json_t *s = json_array_get(steps, i);
		explain_step(s);
		if (run_wall > 0)
			json_object_set_new(
			    s, "share_of_run",
			    json_real((double)jint(s, "wall_ns") / (double)run_wall));
		json_t *mine = json_array();
		for (size_t k = 0; k < json_array_size(sigs); k++)
			if (jint(json_array_get(sigs, k), "step_id") == jint(s, "id"))
				json_array_append(mine, json_array_get(sigs, k));
		json_object_set_new(s, "signals", mine);
	}
	json_t *failures = json_array();
	for (size_t k = 0; k < json_array_size(sigs); k++)
		if (!strcmp(jstr(json_array_get(sigs, k), "severity"), "critical"))
			json_array_append(failures, json_array_get(sigs, k));
	if (q.json) {
		json_t *doc = json_pack("{s:o, s:O, s:O, s:O}", "run", r ? r : json_null(),
					"failure", failures, "steps", steps, "signals", sigs);
		cli_print_json(doc);
		json_decref(doc);
	} else {
		format_duration(run_wall, wall, sizeof(wall));
		printf("Run %lld '%s'%s%s%s: %s after %s, %lld steps, %lld processes\n",
		       (long long)run, jstr(r, "name"), jstr(r, "engine")[0] ? " [" : "",
		       jstr(r, "engine"), jstr(r, "engine")[0] ? "]" : "",
		       jstr(r, "status")[0] ? jstr(r, "status") : "recorded", wall,
		       (long long)jint(r, "steps"), (long long)jint(r, "processes"));
		if (json_object_get(r, "explanation"))
			printf("  Overall: %s\n", jstr(r, "explanation"));
		if (json_array_size(failures)) {
			printf("\nWhy it failed (earliest first):\n");
			for (size_t k = 0; k < json_array_size(failures); k++) {
				snprintf(buf, sizeof(buf), "  %zu. ", k + 1);
				print_signal(&q, json_array_get(failures, k), buf);
			}
		}
		if (json_array_size(steps)) {
			printf("\nWhere the time went (steps by wall time):\n");
			for (size_t i = 0; i < json_array_size(steps) && (long)shown < top;
			     i++, shown++) {
				json_t *s = json_array_get(steps, i);
				format_duration(jint(s, "wall_ns"), wall, sizeof(wall));
				printf("  %zu. %s: %s", i + 1,
				       jstr(s, "name")[0] ? jstr(s, "name") : jstr(s, "key"), wall);
				if (json_object_get(s, "share_of_run"))
					printf(" (%.0f%% of the run)",
					       100 * jnum(s, "share_of_run"));
				printf(", %s\n     %s\n", jstr(s, "status"),
				       jstr(s, "explanation"));
				json_t *mine = json_object_get(s, "signals");
				for (size_t k = 0; k < json_array_size(mine); k++)
					if (strcmp(jstr(json_array_get(mine, k), "severity"),
						   "critical"))
						print_signal(&q, json_array_get(mine, k), "     ");
			}
		}
		/* Warnings about processes outside any step. */
		bool header = false;
		for (size_t k = 0; k < json_array_size(sigs); k++) {
			json_t *g = json_array_get(sigs, k);
			if (json_integer_value(json_object_get(g, "step_id")) ||
			    !strcmp(jstr(g, "severity"), "critical"))
				continue;
			if (!header)
				printf("\nOther signals:\n");
			header = true;
			print_signal(&q, g, "  ");
		}
		if (!json_array_size(sigs) && !json_array_size(steps))
			printf("\nNo signals and no steps: nothing stood out.\n");
		json_decref(r);
	}
	json_decref(failures);
	json_decref(steps);
	json_decref(sigs);
	sqlite3_close(db);
	return 0;
}
