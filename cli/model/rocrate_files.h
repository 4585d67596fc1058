/*
 * What each action of a run read and wrote, from the files table, as the
 * provenance record names it (docs/provenance.md): a path the action read
 * before it wrote it (or never wrote) is an input, a path it wrote an output.
 * Left out: the system's paths (cli/provpath.h), failed opens, directories,
 * and temporaries: paths written in the run that no longer exist. Each path
 * kept is stat()ed once, at export time, for its size and modification time.
 */
#ifndef TRACER_CLI_ROCRATE_FILES_H
#define TRACER_CLI_ROCRATE_FILES_H

#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

struct prov_files {
	json_t
	    *units;  /* unit key ("step:ID" / "process:ID") -> {path: [first read, first write]} */
	json_t *run; /* the whole run: the same, over every process */
	/* path -> its File entity, or why it is left out: "system", "failed" (never
	 * opened), "directory" (or another kind that is no regular file),
	 * "temporary", "truncated" (the path was cut at 512 bytes). */
	json_t *entries;
};

/* Reads the run's opens; 0, or -1 on a database error. by_step: units are
 * steps (else every process row is one). */
int prov_files_load(sqlite3 *db, int64_t run, int by_step, struct prov_files *pf);
/* The File entity of path (stat()ed on first use), or NULL when left out. */
json_t *prov_file_entity(struct prov_files *pf, const char *path);
/* A unit's inputs and outputs as arrays of {"@id": ...}; uses NULL: the run's. */
void prov_files_of(struct prov_files *pf, json_t *uses, json_t **inputs, json_t **outputs);
/* {"files": kept, "not_found": inputs gone by export time (kept, without size),
 * "left_out": {reason: paths}}: what the record says about its own coverage. */
json_t *prov_files_summary(const struct prov_files *pf);
void prov_files_free(struct prov_files *pf);

#endif
