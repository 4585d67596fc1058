/*
 * Who runs `tracer run`'s own aggregator, and the directory its database
 * needs: never root, never nobody (docs/security.md, "Who may talk to whom").
 */
#ifndef TRACER_RUNUSER_H
#define TRACER_RUNUSER_H

#include "common/privdrop.h"

/*
 * user_opt (--user) or the first user of the list in runuser.c that can keep
 * db_path. 0, or -1 after saying what to do.
 */
int pick_aggregator_user(const char *user_opt, const char *db_path, struct run_as *who);
/* Makes db_path's directory for owner if missing; -1 (said why) if owner cannot write it. */
int prepare_db_directory(const char *db_path, const struct run_as *owner);

#endif
