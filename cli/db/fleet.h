/*
 * tracer --fleet URL VERB ...: the verbs read the fleet store (the shippers'
 * ClickHouse tables, docs/shipping.md "Reading the fleet") instead of a local
 * database. The rows a verb needs are copied (FINAL, bounded) into an
 * in-memory SQLite database with our own schema, and the verb's own code runs
 * on it: the same text, --json and report as on the host itself.
 */
#ifndef TRACER_CLI_FLEET_H
#define TRACER_CLI_FLEET_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
#include <sqlite3.h>

#include "cli/db/clidb.h"

/* The fleet store a verb reads: URL clickhouse://HOST:PORT/DB[?secure=1], or the
 * path of a file with a [fleet] section (url = ..., credentials = FILE); NULL:
 * ~/.config/tracer/fleet.conf, else /etc/tracer/fleet.conf. 0, or -1 said why. */
int fleet_select(const char *url_or_config);
bool fleet_active(void);
/* Does this verb read the fleet store (the others refuse --fleet)? */
bool fleet_reads(const char *verb);

/* The verb's database, loaded from the fleet store for q (its verb and run,
 * HOST:ID or a name); q->arg becomes the run's id there. NULL: said why in one
 * line (the store unreachable, no such run). */
sqlite3 *fleet_open(struct cli_query *q);

/* `tracer runs` over the fleet: each row's id back to its host's, and its host.
 * Nothing outside fleet mode. */
void fleet_label_runs(sqlite3 *db, json_t *rows);

/* The HOST column's width for those rows (0 outside fleet mode). */
int fleet_host_width(json_t *rows);

/* fleet.c, for fleet_load.c: a query's answer (JSONEachRow lines), or NULL with
 * the reason in err. The caller frees it. */
char *fleet_query(const char *sql, char *err, size_t size);
/* The database name in the URL (letters, digits, _). */
const char *fleet_database(void);

#endif
