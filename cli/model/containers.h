/*
 * The containers a run started (container_links): where each one's work is
 * counted, how it was linked, and those the run cannot claim because another
 * run started the same command at the same moment. For show, explain, run.
 */
#ifndef TRACER_CLI_CONTAINERS_H
#define TRACER_CLI_CONTAINERS_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>
#include <sqlite3.h>

/* The run's containers, linked or ambiguous, oldest first (empty on a database before v14). */
json_t *containers_of_run(sqlite3 *db, int64_t run_id);
/*
 * `docker|podman|nerdctl run` CLIs of the run that no container was linked to
 * (the image's own command, nothing after the image to match; or none started).
 */
int64_t containers_unlinked_clis(sqlite3 *db, int64_t run_id);
/*
 * The query of a process's failed opens (?1) for a failure's evidence, newest
 * first, leaving out those of a container's first process from before it ran
 * its command (runc's setup: the image's /etc/passwd and /etc/group).
 */
const char *containers_failed_opens_sql(sqlite3 *db);

#endif
