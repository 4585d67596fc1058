#include "cli/db/clidb.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/db/dbkind.h"
#include "cli/db/fleet.h"
#include "cli/render/clierror.h"
#include "cli/render/termsafe.h"
#include "common/fileutil.h"
#include "common/paths.h"

const char *cli_default_db(void)
{
	/* The user's own choice for every verb, so a private database needs no --db each time. */
	const char *env = getenv("TRACER_DB");

	return env && *env ? env : TRACER_DEFAULT_DB;
}

int cli_announced_db(const char *socket_path, char *out, size_t size)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s.db", socket_path);
	if (read_small_file(path, out, size) <= 0)
		return 0;
	out[strcspn(out, "\n")] = '\0';
	return out[0] != '\0';
}

int cli_parse(int argc, char **argv, struct cli_query *q, const char *usage,
	      const struct cli_extra_option *extra, bool *done)
{
	struct option longopts[24] = {
	    {"db", required_argument, 0, 'd'},
	    {"json", no_argument, 0, 'j'},
	    {"help", no_argument, 0, 'h'},
	};
	size_t n = 3, n_extra = 0;
	int c, index;

	*done = false;
	while (extra && extra[n_extra].name && n + n_extra < 23) {
		longopts[n + n_extra] = (struct option){
		    extra[n_extra].name, extra[n_extra].has_arg ? required_argument : no_argument,
		    0, 'x'};
		n_extra++;
	}
	longopts[n + n_extra] = (struct option){0, 0, 0, 0};
	if (!q->db_path)
		q->db_path = cli_default_db();
	/* no-color.org: a set, non-empty NO_COLOR turns colour off. */
	const char *no_color = getenv("NO_COLOR");
	q->color = isatty(STDOUT_FILENO) && !(no_color && *no_color);
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, &index)) != -1) {
		switch (c) {
		case 'd':
			q->db_path = optarg;
			break;
		case 'j':
			q->json = true;
			break;
		case 'x':
			/* 'x' entries exist only when extra was given. */
			if (extra)
				*extra[index - (int)n].value = optarg ? optarg : "";
			break;
		case 'h':
			fputs(usage, stdout);
			*done = true;
			return 0;
		default:
			fputs(usage, stderr);
			*done = true;
			return 2;
		}
	}
	if (argc - optind > 1) {
		fputs(usage, stderr);
		*done = true;
		return 2;
	}
	q->arg = optind < argc ? argv[optind] : NULL;
	return 0;
}

int cli_number(const char *verb, const char *name, const char *text, double min, double max,
	       double *out)
{
	char *end;

	if (!text)
		return 0;
	errno = 0;
	double v = strtod(text, &end);
	if (end == text || *end || errno || !(v >= min && v <= max)) {
		cli_error(verb, "--%s %s: expected a number from %g to %g", name, text, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

void cli_fail(const struct cli_query *q, const char *fmt, ...)
{
	char text[1200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	cli_error(q->verb, "%s", text);
}

sqlite3 *cli_open(struct cli_query *q)
{
	struct db_probe probe;
	char why[1024];

	if (fleet_active()) /* tracer --fleet: the rows this verb needs, from ClickHouse */
		return fleet_open(q);
	db_probe_open(q->db_path, &probe);
	if (probe.kind != DB_TRACER) {
		cli_fail(q, "%s", db_probe_problem(&probe, q->db_path, why, sizeof(why)));
		return NULL;
	}
	return probe.db;
}

int64_t cli_run(const struct cli_query *q, sqlite3 *db)
{
	int64_t id = cli_find_run(db, q->arg);

	if (id < 0)
		cli_fail(q, "%s: %s", q->db_path, sqlite3_errmsg(db));
	else if (id == 0 && q->arg)
		cli_fail(q, "no run '%s'", q->arg);
	else if (id == 0)
		cli_fail(q, "no runs recorded yet");
	return id > 0 ? id : 0;
}

sqlite3 *cli_open_run(struct cli_query *q, int64_t *run)
{
	sqlite3 *db = cli_open(q);

	if (db && !(*run = cli_run(q, db))) {
		sqlite3_close(db);
		db = NULL;
	}
	return db;
}

const char *cli_severity_color(const struct cli_query *q, const char *severity)
{
	if (!q->color || !severity || !termsafe_stdout())
		return "";
	if (!strcmp(severity, "critical"))
		return TERMSAFE_RED;
	if (!strcmp(severity, "warning"))
		return TERMSAFE_YELLOW;
	return TERMSAFE_CYAN;
}

const char *cli_reset(const struct cli_query *q)
{
	return q->color && termsafe_stdout() ? TERMSAFE_RESET : "";
}

void cli_print_json(json_t *doc)
{
	cli_error_output_written();
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
}
