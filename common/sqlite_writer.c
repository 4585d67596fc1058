#include "common/sqlite_writer.h"

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "common/log.h"

#define OPEN_ATTEMPTS 20
#define RETRY_PAUSE_NS (50 * 1000 * 1000)

static bool transient(int rc)
{
	return (rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN;
}

int sqlite_open_writer(const char *path, int extra_flags, int busy_ms, const char *setup_sql,
		       sqlite3 **db, char *err, size_t err_size)
{
	const struct timespec pause = {.tv_nsec = RETRY_PAUSE_NS};

	for (int attempt = 1;; attempt++) {
		int rc = sqlite3_open_v2(
		    path, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | extra_flags, NULL);
		if (rc == SQLITE_OK) {
			sqlite3_busy_timeout(*db, busy_ms);
			rc = sqlite3_exec(*db, setup_sql, NULL, NULL, NULL);
			if (rc == SQLITE_OK)
				return 0;
		}
		snprintf(err, err_size, "%s: %s", path,
			 *db ? sqlite3_errmsg(*db) : sqlite3_errstr(rc));
		sqlite3_close(*db);
		*db = NULL;
		if (!transient(rc) || attempt == OPEN_ATTEMPTS)
			return -1;
		log_warn("%s (attempt %d of %d; retrying)", err, attempt, OPEN_ATTEMPTS);
		nanosleep(&pause, NULL);
	}
}
