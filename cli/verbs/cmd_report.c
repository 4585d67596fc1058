/*
 * tracer report [RUN] --html FILE: one self-contained HTML file (no network
 * needed to open it): summary and what failed, a grouped and zoomable
 * timeline, distributions per tool and step name, a searchable task table,
 * earlier runs, files per step, usage over time, signals, right-sizing. The
 * data (reportdata.c) is embedded as JSON and drawn by inline script with DOM
 * calls only (no HTML from data). Every '<' in the data is written as
 * \u003c, so no text in it can close the script element.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cost/costrun.h"
#include "cli/cost/energyrun.h"
#include "cli/cost/hostprice.h"
#include "cli/db/clidb.h"
#include "cli/model/reportdata.h"
#include "cli/model/rocrate.h"
#include "cli/render/clierror.h"
#include "cli/verbs/commands.h"

extern const char report_template[];

static const char usage_text[] =
    "usage: tracer report [--db PATH] [--json] --html FILE [--headroom PCT] [RUN]\n" PRICE_USAGE(
	"                     ") "  a self-contained HTML report of a run (default: your latest) "
				 "in FILE\n"
				 "  (- writes it to stdout); --headroom: right-sizing headroom, % "
				 "(default 20);\n"
				 "  --json: say where it went as {html, run, bytes} instead of a "
				 "line of text;\n"
				 "  the price options as for tracer cost (docs/cost.md): the cost "
				 "section's price;\n"
				 "  --ro-crate DIR: also the run's provenance, as tracer export "
				 "--ro-crate writes it\n";

/* The template with the data in place of @DATA@ ("-": stdout). 0, or 1 (said why). */
static int write_page(const char *path, const char *data, bool quiet)
{
	const char *marker = strstr(report_template, "@DATA@");
	bool to_stdout = !strcmp(path, "-");
	FILE *f = to_stdout ? stdout : fopen(path, "w");

	if (!f) {
		cli_error("report", "cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (!data || !marker) {
		cli_error("report", "cannot build the page (out of memory?)\n");
		if (!to_stdout)
			fclose(f);
		return 1;
	}
	fwrite(report_template, 1, (size_t)(marker - report_template), f);
	/* '<' only occurs inside JSON strings: as \u003c no "<!--" or "</" reaches the parser. */
	for (const char *c = data; *c; c++) {
		if (*c == '<')
			fputs("\\u003c", f);
		else
			fputc(*c, f);
	}
	fputs(marker + strlen("@DATA@"), f);
	if (to_stdout ? fflush(f) != 0 || ferror(f) : fclose(f) != 0) {
		cli_error("report", "writing %s failed: %s\n", path, strerror(errno));
		return 1;
	}
	if (!to_stdout && !quiet)
		printf("wrote %s\n", path);
	return 0;
}

/*
 * The run's cost by step name, as `tracer cost RUN` computes it; unpriced, the
 * shares alone. false for a bad price option or config line (said why).
 */
/* The page shows of each part of the energy its key, processes, CPU, Wh and CO2e: those,
 * as rows of part_columns, not an object each (a step each on large runs). */
static json_t *energy_parts_as_rows(json_t *energy)
{
	static const char *const shown[] = {"key", "processes", "cpu_ns", "energy_wh", "co2e_g"};
	json_t *parts = json_object_get(energy, "parts"), *rows = json_array(),
	       *columns = json_array();
	size_t i;
	json_t *part;

	if (!json_is_array(parts)) {
		json_decref(rows);
		json_decref(columns);
		return energy;
	}
	for (size_t c = 0; c < sizeof(shown) / sizeof(*shown); c++)
		json_array_append_new(columns, json_string(shown[c]));
	json_array_foreach(parts, i, part)
	{
		json_t *row = json_array();
		for (size_t c = 0; c < sizeof(shown) / sizeof(*shown); c++) {
			json_t *v = json_object_get(part, shown[c]);
			json_array_append(row, v ? v : json_null());
		}
		json_array_append_new(rows, row);
	}
	json_object_set_new(energy, "part_columns", columns);
	json_object_set_new(energy, "parts", rows);
	return energy;
}

static bool add_cost(sqlite3 *db, int64_t run, const struct price_options *po, json_t *doc)
{
	struct cost_query cq = {.by = "step"};
	struct cost_report r = {.db = db, .by = "step", .cpu_weight = 0.5};

	cost_run_window(db, run, &r);
	int rc = cost_compute(db, "report", po, &cq, &r);
	if (rc == 0)
		json_object_set_new(doc, "cost", cost_json(&r));
	else if (rc == COST_NO_CAPACITY)
		json_object_set_new(doc, "cost",
				    json_pack("{s:s}", "unavailable",
					      "the host's CPUs and memory are unknown "
					      "(no host samples recorded)"));
	cost_tally_free(&cq.tally);
	return rc != HOST_PRICE_ERROR;
}

int cmd_report(int argc, char **argv)
{
	struct cli_query q = {.verb = "report"};
	const char *html = NULL, *headroom_arg = NULL, *crate_dir = NULL;
	struct price_options po = {0};
	const struct cli_extra_option extra[] = {{"html", true, &html},
						 {"headroom", true, &headroom_arg},
						 {"ro-crate", true, &crate_dir},
						 PRICE_EXTRA_OPTIONS(po),
						 {NULL, false, NULL}};
	bool done;
	int rc = cli_parse(argc, argv, &q, usage_text, extra, &done);

	if (done)
		return rc;
	if (!html) {
		cli_error("report", "--html FILE is required (- for stdout)");
		fputs(usage_text, stderr);
		return 2;
	}
	double headroom_pct = 20;
	if (cli_number("report", "headroom", headroom_arg, 0, 500, &headroom_pct) != 0)
		return 2;
	double headroom = headroom_pct / 100.0;
	int64_t run;
	sqlite3 *db = cli_open_run(&q, &run);
	if (!db)
		return 1;
	json_t *doc = report_data(db, run, headroom), *crate = NULL;
	if (crate_dir && rocrate_write(db, run, crate_dir, "report", &crate) != 0) {
		json_decref(doc);
		sqlite3_close(db);
		return 1;
	}
	json_decref(crate);
	if (doc)
		json_object_set_new(doc, "energy", energy_parts_as_rows(energy_run_json(db, run)));
	if (doc && !add_cost(db, run, &po, doc)) {
		json_decref(doc);
		sqlite3_close(db);
		return 1;
	}
	char *data =
	    doc ? json_dumps(doc, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(9)) : NULL;
	json_decref(doc);
	sqlite3_close(db);
	/* --json: where the page went, for a program; the page itself is the output with "-". */
	bool say_json = q.json && strcmp(html, "-") != 0;
	rc = write_page(html, data, say_json);
	if (rc == 0 && say_json) {
		struct stat st;
		json_t *said =
		    json_pack("{s:s, s:I, s:I}", "html", html, "run", (json_int_t)run, "bytes",
			      (json_int_t)(stat(html, &st) == 0 ? st.st_size : 0));
		cli_print_json(said);
		json_decref(said);
	}
	free(data);
	return rc;
}
