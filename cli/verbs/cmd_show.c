/*
 * tracer show [--db PATH] [--json | --format tsv|csv|json] [RUN]: a recorded
 * run as a process tree, or one row per process image for other programs
 * (like Nextflow's trace file; docs/export.md has the columns).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cli/cost/energyrun.h"
#include "cli/db/clidb.h"
#include "cli/model/runreport.h"
#include "cli/render/clierror.h"
#include "cli/render/export.h"
#include "cli/render/format.h"
#include "cli/render/report.h"
#include "cli/verbs/commands.h"
#include "common/paths.h"

static void show_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: tracer show [--db PATH] [--json | --format tsv|csv|json [--fields A,B,...]] "
	    "[RUN]\n"
	    "  RUN is a run id or name; default: the latest run\n"
	    "  --format: one row per process image, columns in docs/export.md\n"
	    "  --fields: only these columns, in this order (Nextflow's trace names too: %%cpu,\n"
	    "    %%mem, syscr, syscw, vol_ctxt, inv_ctxt, attempt, native_id, hash, submit)\n");
}

/* The trace: fixed columns, documented in docs/export.md; add, never rename. */
static const char *const trace_columns[] = {
    "run_id",
    "process_id",
    "parent_id",
    "pid",
    "ppid",
    "image",
    "step",
    "step_name",
    "tool",
    "exe",
    "argv",
    "cwd",
    "uid",
    "start",
    "end",
    "start_ns",
    "end_ns",
    "wall_ns",
    "status",
    "exit_code",
    "signal",
    "cpu_user_ns",
    "cpu_sys_ns",
    "cpu_ns",
    "peak_rss_kb",
    "rchar",
    "wchar",
    "read_bytes",
    "write_bytes",
    "net_tx_bytes",
    "net_rx_bytes",
    "iowait_ns",
    "runq_ns",
    "reclaim_ns",
    "oom_killed",
    "container_id",
    "slurm_job",
    "slurm_step",
    /* Nextflow trace.txt's names, for what the database can give (docs/export.md). */
    "%cpu",
    "%mem",
    "syscr",
    "syscw",
    "vol_ctxt",
    "inv_ctxt",
    "attempt",
    "native_id",
    "hash",
    "submit",
    "submit_ns",
    "queue_wait_ns",
    "energy_wh", /* docs/energy.md */
    "co2e_g",
    NULL,
};

static const char trace_sql[] =
    "SELECT p.run_id, p.id AS process_id, p.parent_id, p.pid, p.ppid, p.image,"
    " s.key AS step, s.name AS step_name, t.name AS tool, p.exe, p.argv, p.cwd, p.uid,"
    " strftime('%Y-%m-%dT%H:%M:%fZ', p.start_ns / 1e9, 'unixepoch') AS start,"
    " strftime('%Y-%m-%dT%H:%M:%fZ', p.end_ns / 1e9, 'unixepoch') AS end,"
    " p.start_ns, p.end_ns, p.end_ns - p.start_ns AS wall_ns,"
    " CASE WHEN p.state = 'exec' THEN 'exec' WHEN p.end_ns IS NULL THEN 'running'"
    " WHEN p.signal IS NOT NULL AND p.signal != 13 THEN 'killed'"
    " WHEN p.exit_code != 0 THEN 'failed' ELSE 'ok' END AS status,"
    " p.exit_code, p.signal, p.cpu_user_ns, p.cpu_sys_ns, p.cpu_user_ns + p.cpu_sys_ns AS cpu_ns,"
    " p.max_rss_kb AS peak_rss_kb, p.rchar, p.wchar, p.read_bytes, p.write_bytes,"
    " p.net_tx_bytes, p.net_rx_bytes, p.iowait_ns, p.runq_ns, p.reclaim_ns, p.oom_killed,"
    " p.container_id, p.slurm_job, p.slurm_step,"
    " round(100.0 * (p.cpu_user_ns + p.cpu_sys_ns) / nullif(p.end_ns - p.start_ns, 0), 1)"
    " AS \"%cpu\","
    " round(100.0 * p.max_rss_kb / (SELECT max(mem_total_kb) FROM host_samples), 2) AS \"%mem\","
    " p.syscr, p.syscw, p.vol_ctxsw AS vol_ctxt, p.invol_ctxsw AS inv_ctxt,"
    /* The step's attempt: earlier steps of the run of the same engine job (a retry). */
    " CASE WHEN s.id IS NULL THEN NULL ELSE 1 + (SELECT count(*) FROM steps s2 WHERE"
    " s2.run_id = s.run_id AND s2.start_ns < s.start_ns AND ((s.engine_job IS NOT NULL AND"
    " s2.engine_job = s.engine_job) OR (s.engine_job IS NULL AND s.signature IS NOT NULL AND"
    " s2.name = s.name AND s2.signature = s.signature))) END AS attempt,"
    " coalesce(p.slurm_job, p.container_id) AS native_id,"
    " CASE WHEN s.kind = 'nextflow-task' THEN substr(s.key, 1, 9) END AS hash,"
    " strftime('%Y-%m-%dT%H:%M:%fZ', (b.first_ns - b.queue_wait_ns) / 1e9, 'unixepoch')"
    " AS submit, b.first_ns - b.queue_wait_ns AS submit_ns, b.queue_wait_ns"
    " FROM processes p LEFT JOIN steps s ON s.id = p.step_id LEFT JOIN tools t ON t.id = p.tool_id"
    " LEFT JOIN batch_jobs b ON b.job_id = p.slurm_job AND b.run_id = p.run_id"
    " WHERE p.run_id = ?1 ORDER BY p.start_ns, p.id";

#define TRACE_COLUMNS_MAX (sizeof(trace_columns) / sizeof(*trace_columns))

/* --fields: the columns named, each a trace column, in their order. 0, or -1 (said why). */
static int choose_fields(const char *list, const char **chosen)
{
	size_t n = 0;
	char *copy = strdup(list), *save = NULL;

	if (!copy)
		return -1;
	for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		const char *const *c = trace_columns;
		while (*c && strcmp(*c, name) != 0)
			c++;
		if (!*c || n + 1 >= TRACE_COLUMNS_MAX) {
			cli_error("show", "--fields: no column '%s' (docs/export.md lists them)",
				  name);
			free(copy);
			return -1;
		}
		chosen[n++] = *c;
	}
	free(copy);
	chosen[n] = NULL;
	if (!n) {
		cli_error("show", "--fields: name at least one column");
		return -1;
	}
	return 0;
}

static void print_trace(sqlite3 *db, int64_t run, enum export_format f, const char *const *columns)
{
	json_t *rows = cli_rows_json(db, trace_sql, run); /* argv comes back as a list */

	energy_add_to_process_rows(db, run, rows);

	export_rows(stdout, f, columns, rows);
	json_decref(rows);
}

int cmd_show(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"db", required_argument, 0, 'd'},	   {"json", no_argument, 0, 'j'},
	    {"format", required_argument, 0, 'f'}, {"fields", required_argument, 0, 'F'},
	    {"help", no_argument, 0, 'h'},	   {0, 0, 0, 0},
	};
	const char *db_path = cli_default_db();
	struct report_opts ro = {.json = false, .width = 0};
	sqlite3 *db;
	int c;
	enum export_format format = EXPORT_NONE;
	const char *chosen[TRACE_COLUMNS_MAX];
	const char *const *columns = trace_columns;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			db_path = optarg;
			break;
		case 'j':
			ro.json = true;
			break;
		case 'f':
			if (export_format_parse("show", optarg, &format) != 0)
				return 2;
			break;
		case 'F':
			if (choose_fields(optarg, chosen) != 0)
				return 2;
			columns = chosen;
			break;
		case 'h':
			show_usage(stdout);
			return 0;
		default:
			show_usage(stderr);
			return 2;
		}
	}
	if (argc - optind > 1) {
		show_usage(stderr);
		return 2;
	}
	if (columns != trace_columns && format == EXPORT_NONE) {
		cli_error("show", "--fields chooses the columns of --format tsv|csv|json");
		return 2;
	}
	ro.width = format_terminal_columns(STDOUT_FILENO);
	struct cli_query q = {.verb = "show",
			      .db_path = db_path,
			      .json = ro.json,
			      .arg = optind < argc ? argv[optind] : NULL};
	if (!(db = cli_open(&q)))
		return 1;
	const char *spec = q.arg; /* --fleet: the run's id in its copy */
	int64_t id = cli_find_run(db, spec);
	int rc = 0;
	if (id < 0) {
		cli_error("show", "%s: %s", db_path, sqlite3_errmsg(db));
		rc = 1;
	} else if (id == 0) {
		if (spec)
			cli_error("show", "no run '%s'", spec);
		else
			cli_error("show", "no runs recorded yet");
		rc = 1;
	} else if (format != EXPORT_NONE) {
		print_trace(db, id, format, columns);
	} else {
		report_print_run(db, id, &ro, stdout);
	}
	sqlite3_close(db);
	return rc;
}
