/*
 * The files of db/: where a verb's database comes from and how its rows read.
 * A db file may use render/ (to say why it failed, cleanly), nothing above.
 * Every database is opened read-only here, and only here.
 *   clidb.c      the query verbs' options (--db, --json), opening, cli_fail
 *   findrun.c    which run RUN names: an id, a name, or the asker's newest
 *   dbkind.c     what a --db path holds, told apart before any query runs
 *   rows.c       rows as JSON in the CLI's one vocabulary (docs/export.md)
 *   liveness.h   when collectors count as gone; the SQL of a run still watched
 *   fleet.c      the fleet store: where it is, its credentials, its queries
 *   fleet_load.c a verb's rows copied from the fleet store into an in-memory database
 *   fleet_copy.c   the store's rows copied into our tables (FINAL, ids remapped)
 *   fleet_tsv.c    a few columns of many rows copied as TabSeparated (idle's samples)
 *   fleet_rows.c   the fleet's batch rows and their processes, read for a join
 *   fleet_join.c   a run joined with the jobs it submitted that ran on other hosts
 *   fleet_match.c  which submission sent which job, across hosts (no SQL)
 *   fleet_merge.c  a joined job's run copied in under the step that submitted it
 *   fleet_hosts.c  the hosts of a joined run, and the fleet's word on a job's own run
 *   fleet_runs_join.c  runs: a joined job's run folded into its submitter's row
 *   fleet_window.c the time window a fleet read covers
 *   fleet_pipeline.c a pipeline's runs on every host, in one database (recommend)
 *   fleet_jobside.c    a job's own run: which fleet run it belongs to
 *   fleet_live.c   top: what runs now on each host, read one host at a time
 *   fleet_energy.c energy: the RAPL readings that bracket each loaded run
 * Each file's header is its door; nothing is private to the folder yet.
 */
#ifndef TRACER_CLI_DB_INTERNAL_H
#define TRACER_CLI_DB_INTERNAL_H

#include "cli/db/clidb.h"
#include "cli/db/dbkind.h"
#include "cli/db/fleet.h"
#include "cli/db/fleet_join.h"
#include "cli/db/liveness.h"
#include "cli/db/rows.h"

#endif
