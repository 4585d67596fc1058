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
#include <stdio.h>

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
/* fleet_rows.c: the answer to a FORMAT JSONEachRow query as an array of row objects
 * (lines that are not JSON left out); NULL with err set when the query failed. */
json_t *fleet_json_rows(const char *sql, char *err, size_t size);
/* The database name in the URL (letters, digits, _). */
const char *fleet_database(void);

/* fleet_copy.c: SELECT * FROM the store's table FINAL WHERE where, into the local
 * table local (ours, or a temporary one made like it): the rows copied, -1 said why. */
long fleet_copy_rows(sqlite3 *db, const char *verb, const char *table, const char *local,
		     const char *where);
/* How a copied row's ids change on the way in (the runs list numbers runs anew). */
struct fleet_remap {
	const char *column;   /* "id" of runs, "run_id" of signals */
	sqlite3_stmt *lookup; /* (host, id) -> local id */
	bool renumber;	      /* the row's own id repeats across hosts: a new one */
};
/* fleet_copy_rows with the ids of m's column remapped (m may be NULL). */
long fleet_copy_remapped(sqlite3 *db, const char *verb, const char *table, const char *local,
			 const char *where, const struct fleet_remap *m);
/* ClickHouse string literal of s, quoted and escaped, in out. */
/* fleet_copy_remapped by PREWHERE: only for a condition on columns every copy of a
 * record has the same (its key), since it is applied before FINAL picks the newest. */
long fleet_copy_prewhere(sqlite3 *db, const char *verb, const char *table, const char *prewhere,
			 const struct fleet_remap *m);
/* The rows of one host (host quoted) whose newest copy matches cond: found by the keys
 * of every copy that ever matched it (no FINAL over the host's whole table, which the
 * sort key (_host, _key) would make read every column of every row), then cond on the
 * newest copy, so the answer is FINAL's. */
long fleet_copy_keyed(sqlite3 *db, const char *verb, const char *table, const char *host,
		      const char *cond);
void fleet_quote(const char *s, char *out, size_t size);
/* fleet_tsv.c: the rows select_sql (FORMAT TabSeparated) answers, each bound to insert_sql's
 * parameters as types says, a letter a column (i integer, r real, t text): in one
 * transaction. The rows inserted, or -1 said why. */
long fleet_copy_tsv(sqlite3 *db, const char *verb, const char *select_sql, const char *insert_sql,
		    const char *types);

/* fleet_join.c: the batch jobs that run HOST:ID's steps submitted and that ran on other
 * hosts (docs/shipping.md, "One run across hosts"), joined under those steps in db:
 * their processes, samples, signals and totals; the jobs that could not be joined said.
 * 0, or -1 said why. */
int fleet_join_batch(sqlite3 *db, const char *verb, const char *host, int64_t id);
/* fleet_jobside.c: for each job of run id its own host could not link, whose run it is
 * across the fleet (fleet_job_parents: fleet_link, fleet_run HOST:ID, fleet_candidates).
 * 0, or -1 said why. */
int fleet_place_jobs(sqlite3 *db, const char *verb, const char *host, int64_t id);
/* fleet_hosts.c: those facts on show's job rows (fleet mode; nothing otherwise). */
void fleet_job_parents_add(sqlite3 *db, json_t *jobs);
/* fleet_window.c: for `cost HOST:ID`, the host's other processes alive during run id
 * (loaded already), with their runs, steps, tools and samples. 0, or -1 said why. */
int fleet_load_window(sqlite3 *db, const char *verb, const char *host, int64_t id);
/* fleet_window.c: the loaded run's start and end (its start while running; 0 none). */
void fleet_run_span(sqlite3 *db, int64_t *start, int64_t *end);
/* fleet_window.c: for `energy --since`, the hosts with processes alive in [from, to]
 * ([{"host", "hostnames": [their runs' hostnames]}]); NULL said why. */
json_t *fleet_window_hosts(const char *verb, int64_t from, int64_t to);
/* One host's processes alive in [from, to], with their runs, steps, tools and samples,
 * into db (one host's ids are unique). 0, or -1 said why. */
int fleet_load_host_window(sqlite3 *db, const char *verb, const char *host, int64_t from,
			   int64_t to);
/* fleet_energy.c: for each run in db (one host's), that host's RAPL readings bracketing
 * it and the host samples over them, as `tracer energy` reads them on the host; nothing
 * from a store without energy_samples. 0, or -1 said why. */
int fleet_load_energy(sqlite3 *db, const char *verb, const char *host);
/* fleet_window.c: for `cost --since`, fleet_load_host_window and what pricing the host
 * needs beside: its largest host samples (its capacity) and its collector streams (the
 * time observed). 0, or -1 said why. */
int fleet_load_host_cost(sqlite3 *db, const char *verb, const char *host, int64_t from, int64_t to);
/* fleet_pipeline.c: for `recommend --pipeline P`, every host's runs of P in one database
 * (each host's ids moved past the others'), with what right-sizing reads; NULL said why. */
sqlite3 *fleet_open_pipeline(const char *verb, const char *pipeline);
/* fleet_load.c: for `idle`, the host's samples of its last FLEET_IDLE_DAYS, its runs
 * then and its collector rows, into db. 0, or -1 said why. */
int fleet_load_idle_host(sqlite3 *db, const char *verb, const char *host);
/* fleet_load.c: an empty database of our schema, in memory; NULL said why. */
sqlite3 *fleet_memory_db(const char *verb);
/* fleet_runs_join.c: for `runs`, each joined job's run folded into its submitter's row
 * (fleet_runs maps the rows to their hosts' runs). 0, or -1 said why. */
int fleet_join_runs_list(sqlite3 *db, const char *verb);

/* fleet_live.c, for tracer --fleet top: the hosts with a running run in the store
 * (_host, hostname), NULL said why; and one host's running work, with what top reads
 * beside it (the usual times, its collector rows), NULL said why. */
json_t *fleet_live_hosts(const char *verb);
sqlite3 *fleet_open_live(const char *verb, const char *host);

/* fleet_hosts.c: the hosts of a run whose batch jobs were joined from other hosts
 * (host, hostname, head, jobs, processes, cpu_ns, peak_rss_kb); NULL for a run whole on
 * its host, and outside fleet mode. */
json_t *fleet_hosts_json(sqlite3 *db);

#endif
