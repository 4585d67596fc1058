/*
 * The energy document of a run or a window (docs/energy.md): what `tracer
 * energy --json` prints, and the "energy" of show --json, the report and the
 * RO-Crate export: the model with its sources, one part per step (run,
 * pipeline, tool, user) and the total.
 */
#ifndef TRACER_CLI_ENERGYRUN_H
#define TRACER_CLI_ENERGYRUN_H

#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "cli/cost/energy.h"

/*
 * {"model", "by", "parts": [{by, key, processes, cpu_ns, memory_gib_hours,
 * cpu_wh, memory_wh, energy_wh, co2e_g (, step_id)}], "total": {...}} of run
 * (0: every process alive in [from, to]). NULL with the reason in err.
 */
json_t *energy_document(sqlite3 *db, int64_t run, int64_t from, int64_t to, const char *by,
			const struct energy_options *o, char *err, size_t err_size);

/*
 * The same document over several databases (the fleet: one per host, loaded in
 * turn): parts with the same key summed. label prefixes the measured runs' ids
 * ("HOST:"; NULL for none). NULL from new with the reason in err; gather_db -1 said
 * in err (e is kept: free it); finish frees e.
 */
struct energy_gather;
struct energy_gather *energy_gather_new(const struct energy_options *o, const char *by, char *err,
					size_t err_size);
int energy_gather_db(struct energy_gather *e, sqlite3 *db, const char *label, int64_t run,
		     int64_t from, int64_t to, char *err, size_t err_size);
json_t *energy_gather_finish(struct energy_gather *e);
void energy_gather_free(struct energy_gather *e);

/* The run by step with the default coefficients (energy.conf, cost.conf's region), as
 * show --json and the report carry it; {"unavailable": why} when it cannot be had. */
json_t *energy_run_json(sqlite3 *db, int64_t run);

/* Sets "energy_wh" and "co2e_g" of each row (objects with "process_id") of the run's
 * processes, with the default coefficients; left out when they cannot be had. */
void energy_add_to_process_rows(sqlite3 *db, int64_t run, json_t *rows);

/* Whether the runs of db (run, or all with 0) were all recorded on this machine. */
bool energy_recorded_here(sqlite3 *db, int64_t run);

#endif
