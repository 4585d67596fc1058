/* tracer show [--db PATH] [--json] [RUN]: a recorded run as a process tree. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cli/clidb.h"
#include "cli/commands.h"
#include "cli/report.h"
#include "common/paths.h"

static void show_usage(FILE *out)
{
	fprintf(out, "usage: tracer show [--db PATH] [--json] [RUN]\n"
		     "  RUN is a run id or name; default: the latest run\n");
}

int cmd_show(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"db", required_argument, 0, 'd'},
	    {"json", no_argument, 0, 'j'},
	    {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0},
	};
	const char *db_path = TRACER_DEFAULT_DB;
	struct report_opts ro = {.json = false, .width = 0};
	struct winsize ws;
	sqlite3 *db;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			db_path = optarg;
			break;
		case 'j':
			ro.json = true;
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
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		ro.width = ws.ws_col;
	struct cli_query q = {.verb = "show", .db_path = db_path, .json = ro.json};
	if (!(db = cli_open(&q)))
		return 1;
	const char *spec = optind < argc ? argv[optind] : NULL;
	int64_t id = report_find_run(db, spec);
	int rc = 0;
	if (id < 0) {
		fprintf(stderr, "tracer show: %s: %s\n", db_path, sqlite3_errmsg(db));
		rc = 1;
	} else if (id == 0) {
		fprintf(stderr,
			spec ? "tracer show: no run '%s'\n" : "tracer show: no runs recorded yet\n",
			spec);
		rc = 1;
	} else {
		report_print_run(db, id, &ro, stdout);
	}
	sqlite3_close(db);
	return rc;
}
