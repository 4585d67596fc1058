/*
 * Dropping root for good: supplementary groups, then gid, then uid, then
 * no_new_privs. Every step is checked; a caller that gets -1 must exit
 * (fail closed), never carry on privileged.
 */
#ifndef TRACER_PRIVDROP_H
#define TRACER_PRIVDROP_H

#include <stdbool.h>
#include <sys/types.h>

struct run_as {
	uid_t uid;
	gid_t gid;
	char name[64];
	/* A group kept beside the user's own, or 0: tracer run's socket directory. */
	gid_t extra_group;
	/* "UID:GID" with no account: no supplementary groups (tracer run's collector). */
	bool no_account;
};

/* Resolves a user name, a numeric uid, or "UID:GID" (ids no account has). 0, or -1. */
int run_as_lookup(const char *user, struct run_as *out);
/*
 * Whether a daemon has a user to become: 1 as root with --user NAME, 0 when not
 * root (nothing to drop), -1 as root without one (said so: it must not run).
 */
int run_as_needed(const char *user);
/* Becomes that user with its own groups and no capabilities. 0 or -1. */
int drop_privileges(const struct run_as *who);
/*
 * The capability bounding set emptied now (drop_privileges does it too): for a
 * caller about to start threads as root, which then never hold one (the set
 * is per thread). Root's effective capabilities are not changed.
 */
void privdrop_empty_bounding_set(void);

#endif
