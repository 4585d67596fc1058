/* Which run a verb's RUN argument names: an id, a name, or none (the asker's newest). */
#include <ctype.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/db/clidb.h"

/* Who is asking: the user behind sudo, else ourselves. */
static uid_t asking_uid(void)
{
	const char *sudo_uid = getenv("SUDO_UID");

	if (getuid() == 0 && sudo_uid && *sudo_uid)
		return (uid_t)strtoul(sudo_uid, NULL, 10);
	return getuid();
}

int64_t cli_first_id(sqlite3_stmt *st)
{
	int64_t id = 0;

	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}

/* The newest run whose command ran as uid; 0 if none. */
static int64_t newest_run_of(sqlite3 *db, uid_t uid)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db,
			       "SELECT r.id FROM runs r JOIN processes p ON p.id = "
			       "r.command_process_id WHERE p.uid = ?1 ORDER BY r.id DESC LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(st, 1, uid);
	return cli_first_id(st);
}

int64_t cli_find_run(sqlite3 *db, const char *spec)
{
	sqlite3_stmt *st;
	int64_t id;
	bool numeric = spec && *spec;

	/* No run named: yours, on a host others trace too; root's default is the newest. */
	if (!spec && asking_uid() != 0 && (id = newest_run_of(db, asking_uid())) > 0)
		return id;
	for (const char *p = spec; p && *p; p++)
		numeric = numeric && isdigit((unsigned char)*p);
	const char *sql = !spec ? "SELECT id FROM runs ORDER BY id DESC LIMIT 1"
			  : numeric
			      ? "SELECT id FROM runs WHERE id = ?1"
			      : "SELECT id FROM runs WHERE name = ?1 ORDER BY id DESC LIMIT 1";
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (spec)
		sqlite3_bind_text(st, 1, spec, -1, SQLITE_STATIC);
	return cli_first_id(st);
}
