/*
 * A run as a Research Object Crate (docs/provenance.md): ro-crate-metadata.json
 * following the Process Run Crate profile (one CreateAction per step, or per
 * process where the run has no steps) and, where the run's workflow file is
 * known, the Workflow Run Crate profile. Files are named by path, size and
 * modification time (stat() at export time); their contents are never read.
 */
#ifndef TRACER_CLI_ROCRATE_H
#define TRACER_CLI_ROCRATE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "cli/model/rocrate_files.h"

#define PROCESS_RUN_CRATE "https://w3id.org/ro/wfrun/process/0.5"
#define WORKFLOW_RUN_CRATE "https://w3id.org/ro/wfrun/workflow/0.5"
#define WORKFLOW_RO_CRATE "https://w3id.org/workflowhub/workflow-ro-crate/1.0"

/* The crate's JSON-LD document; *summary says what it holds and left out. NULL on a
 * database error. */
json_t *rocrate_build(sqlite3 *db, int64_t run, const char *dpkg_dir, json_t **summary);

/* Builds the crate and writes DIR/ro-crate-metadata.json (DIR made if missing, the file
 * replaced through a temporary one): 0 with *summary set, or -1 (said why, as verb). */
int rocrate_write(sqlite3 *db, int64_t run, const char *dir, const char *verb, json_t **summary);

/* Pieces (cli/rocrate_actions.c). The graph's entities are kept by @id in `entities`
 * (an object) so each is written once. */
struct crate {
	sqlite3 *db;
	int64_t run;
	json_t *entities;  /* @id -> entity */
	json_t *exes;	   /* executable path -> its package (pkgowner.h), filled at the end */
	json_t *tool_exes; /* tool @id -> the executable it names */
	struct prov_files *files;
	const char *hostname;
};

void crate_put(struct crate *c, json_t *entity); /* takes the reference */
/* {"@id": ...} of the agent for a uid (a Person named by the account). */
json_t *crate_agent(struct crate *c, int64_t uid);
/* {"@id": ...} of the tool that ran (SoftwareApplication). */
json_t *crate_tool(struct crate *c, const char *name, const char *exe);
/* One CreateAction per step (or per process): their {"@id"} references. */
json_t *crate_step_actions(struct crate *c, bool by_step);
/* Tools get their packages and versions once every executable is known. */
void crate_tool_versions(struct crate *c, const char *dpkg_dir);
/* The action's status properties from a status word and exit code / signal. */
void crate_set_status(json_t *action, const char *status, json_t *exit_code, json_t *signal);

#endif
