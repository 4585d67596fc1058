/* What the query verbs share: options, opening the database, finding a run. */
#ifndef TRACER_CLIDB_H
#define TRACER_CLIDB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>
#include <sqlite3.h>

#include "cli/db/rows.h" /* the row converters every verb uses */

struct cli_query {
	const char *verb;
	const char *db_path;
	bool json;
	bool color;	 /* stdout is a terminal */
	const char *arg; /* the positional argument, if any */
	long list_limit; /* runs: how many it lists (the fleet reads a bounded few more) */
};

/* The database a verb reads without --db: $TRACER_DB if set, else the daemons'. */
const char *cli_default_db(void);
/* The database the aggregator listening on socket_path writes, as it announces
 * it beside its socket (SOCKET.db, a real path) while it runs: 1 read into out,
 * 0 not announced (not running, or an older aggregator). */
int cli_announced_db(const char *socket_path, char *out, size_t size);

/*
 * Parses --db PATH, --json, --help and at most one positional argument.
 * Extra options (name, has_arg) are passed to on_extra. Returns 0, or the exit
 * code to return (0 after --help, 2 on bad usage).
 */
struct cli_extra_option {
	const char *name;
	bool has_arg;
	const char **value; /* set to optarg, or to "" for flags */
};
int cli_parse(int argc, char **argv, struct cli_query *q, const char *usage,
	      const struct cli_extra_option *extra, bool *done);
/*
 * An option's number: all of text a number within [min, max], else the reason
 * printed ("tracer VERB: --NAME ...") and -1. A NULL text keeps *out as is.
 */
int cli_number(const char *verb, const char *name, const char *text, double min, double max,
	       double *out);
/* Says why a verb fails: on stderr, and as {"error": ...} on stdout with JSON (clierror.h). */
void cli_fail(const struct cli_query *q, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Opens the database read-only; NULL with the reason printed. With --fleet, an
 * in-memory copy of what the verb reads from the fleet store, and q->arg the
 * run's id in it (cli/db/fleet.h). */
sqlite3 *cli_open(struct cli_query *q);
/* findrun.c: RUN is an id, a name, or NULL: the asking user's newest run (root: the
 * newest of all). Returns the id, 0 if none, -1 on error. */
int64_t cli_find_run(sqlite3 *db, const char *spec);
/* findrun.c: the first column of a prepared, bound query's first row (an id), 0
 * when it has none. Finalizes st. */
int64_t cli_first_id(sqlite3_stmt *st);
/* The run named by q->arg (id or name; NULL: latest): id, or 0 with the reason printed. */
int64_t cli_run(const struct cli_query *q, sqlite3 *db);
/* cli_open and cli_run together: the database, or NULL (said why; nothing to close). */
sqlite3 *cli_open_run(struct cli_query *q, int64_t *run);
/* ANSI colour for a severity, "" without a terminal. */
const char *cli_severity_color(const struct cli_query *q, const char *severity);
const char *cli_reset(const struct cli_query *q);
/* Prints a JSON document to stdout. */
void cli_print_json(json_t *doc);

#endif
