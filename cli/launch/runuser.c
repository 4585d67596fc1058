#include "cli/launch/runuser.h"

#include <errno.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileutil.h"
#include "common/paths.h"

/* Permission bits only (no ACLs): good enough to give a clear error early. */
static bool user_can_write(const struct stat *st, const struct run_as *who)
{
	if (st->st_uid == who->uid)
		return st->st_mode & S_IWUSR;
	if (st->st_gid == who->gid)
		return st->st_mode & S_IWGRP;
	return st->st_mode & S_IWOTH;
}

/* Whether who can keep the database: write its directory (WAL files beside it)
 * and the file itself if it exists. A missing directory is made for it. */
static bool can_keep_db(const char *db_path, const struct run_as *who)
{
	char dir[4096];
	struct stat st;

	if (stat(db_path, &st) == 0 && !user_can_write(&st, who))
		return false;
	path_dirname(db_path, dir, sizeof(dir));
	return stat(dir, &st) != 0 || user_can_write(&st, who);
}

/*
 * The aggregator never runs as root, nor as nobody (any unrelated service's
 * uid). --user; else the first of these that can keep the database: the
 * packaged user where it can already write, the sudo user, the (non-root)
 * owner of the database directory, the packaged user for a directory made
 * now. None of them is trusted with the collector's stream: the socket
 * directory stays root's and the collector checks the listener (see
 * start_daemons). -1 with none, after saying what to do.
 */
int pick_aggregator_user(const char *user_opt, const char *db_path, struct run_as *who)
{
	const char *sudo_uid = getenv("SUDO_UID");
	const char *candidates[4] = {TRACER_AGGREGATOR_USER, NULL, NULL, TRACER_AGGREGATOR_USER};
	char dir[4096], uid_text[16];
	struct stat st;
	struct run_as c;

	if (user_opt)
		return run_as_lookup(user_opt, who);
	path_dirname(db_path, dir, sizeof(dir));
	bool dir_exists = stat(dir, &st) == 0;
	if (sudo_uid && *sudo_uid && strcmp(sudo_uid, "0") != 0)
		candidates[1] = sudo_uid;
	if (dir_exists && st.st_uid != 0 &&
	    (!getpwnam("nobody") || getpwnam("nobody")->pw_uid != st.st_uid)) {
		snprintf(uid_text, sizeof(uid_text), "%u", (unsigned)st.st_uid);
		candidates[2] = uid_text;
	}
	for (size_t i = 0; i < sizeof(candidates) / sizeof(*candidates); i++) {
		if (!candidates[i] || run_as_lookup(candidates[i], &c) != 0)
			continue;
		if ((i > 0 || dir_exists) && can_keep_db(db_path, &c)) {
			*who = c;
			return 0;
		}
	}
	if (run_as_lookup(TRACER_AGGREGATOR_USER, who) == 0 ||
	    (candidates[1] && run_as_lookup(candidates[1], who) == 0))
		return 0; /* prepare_db_directory says what it cannot write */
	fprintf(stderr,
		"tracer run: no user to run the aggregator as (never root, never nobody): create "
		"the packaged one with `useradd --system --no-create-home --shell "
		"/usr/sbin/nologin " TRACER_AGGREGATOR_USER "` (make install and the package do), "
		"run through sudo to keep the database as yourself, or pass --user NAME\n");
	return -1;
}

int prepare_db_directory(const char *db_path, const struct run_as *owner)
{
	char dir[4096];
	struct stat st;

	path_dirname(db_path, dir, sizeof(dir));
	if (stat(dir, &st) == 0) {
		if (user_can_write(&st, owner))
			return 0;
		/* A directory that does not exist yet is made for the aggregator: say so. */
		fprintf(
		    stderr,
		    "tracer run: the aggregator runs unprivileged as %s, which cannot "
		    "write %s; pass a --db in a directory it can write or in a new one "
		    "(tracer run makes it, owned by the aggregator's user: --db %s%stracer/%s), "
		    "or --user NAME\n",
		    owner->name, dir, dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
		    path_basename(db_path));
		return -1;
	}
	if (mkdir_parents(dir, 0755) != 0 || chown(dir, owner->uid, owner->gid) != 0) {
		fprintf(stderr, "tracer run: cannot create %s: %s\n", dir, strerror(errno));
		return -1;
	}
	return 0;
}
