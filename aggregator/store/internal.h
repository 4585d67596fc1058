/*
 * What the files of store/ share, and nothing outside store/ may use:
 *   store.c     open (pragmas, migration), close, transactions
 *   sql.c       preparing, stepping and binding statements
 *   processes.c the processes table (its column list) and the restart reads
 *   groups.c    runs, steps, tools and pipelines
 *   telemetry.c files, OOM kills, cgroups, samples, host samples, losses
 *   streams.c   collector streams and the aggregator's own counters
 *   signals.c   signals and step history (the insight layer's side)
 *   ship.c      the outbox entry points (shipping on or off)
 *   containers.c container links (which run and step started a container)
 * Each table's file prepares its own statements at open.
 */
#ifndef TRACER_STORE_INTERNAL_H
#define TRACER_STORE_INTERNAL_H

#include <stddef.h>

#include "aggregator/store/store.h"

/* processes.c: frees what the batch INSERT's bindings were kept in (after finalizing it). */
void store_free_processes(struct store *s);

/* sql.c */
int exec_sql(sqlite3 *db, const char *sql);
int64_t max_id(sqlite3 *db, const char *table);
/* A persistent statement; -1 (logged) on error. */
int prepare(struct store *s, const char *sql, sqlite3_stmt **st);
/*
 * Prepares "UPDATE table SET c = ?N, ... WHERE k1 = ?1 AND ...": the first
 * n_key of columns (a comma-separated list) name the row, the rest are
 * written; parameters are numbered as in the INSERT over the same list, so one
 * binding function serves both.
 */
int prepare_update(struct store *s, const char *table, const char *columns, int n_key,
		   sqlite3_stmt **st);
/* Steps, then resets and clears the bindings: SQLite's result code. */
int run_write(sqlite3_stmt *st);
/* The same for a statement whose every parameter is bound before each step. */
int run_bound_write(sqlite3_stmt *st);
/* Runs a bound write and readies the statement for the next; 0 or SQLite's code. */
int step_done(struct store *s, sqlite3_stmt *st);
/* Updates the row in place by its key, or inserts it if there is none. */
int update_or_insert(struct store *s, sqlite3_stmt *update, sqlite3_stmt *insert,
		     void (*bind)(sqlite3_stmt *st, const void *row), const void *row);
void bind_text_or_null(sqlite3_stmt *st, int i, const char *v);
void bind_id_or_null(sqlite3_stmt *st, int i, int64_t v);
void bind_u64(sqlite3_stmt *st, int i, uint64_t v);
/* The value if have, else NULL (an unknown is NULL, never 0). */
void bind_i64_if(sqlite3_stmt *st, int i, bool have, int64_t v);
void bind_double_if(sqlite3_stmt *st, int i, bool have, double v);
void copy_column(sqlite3_stmt *st, int col, char *out, size_t size);
char *dup_column(sqlite3_stmt *st, int col);

/* Each table file's statements, prepared at open. 0 or -1. */
int store_prepare_processes(struct store *s);
int store_prepare_groups(struct store *s);
int store_prepare_telemetry(struct store *s);
int store_prepare_streams(struct store *s);
int store_prepare_containers(struct store *s);

#endif
