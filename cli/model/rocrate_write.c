/* Writing a crate to its directory (cli/rocrate.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/render/clierror.h"
#include "cli/model/rocrate.h"

int rocrate_write(sqlite3 *db, int64_t run, const char *dir, const char *verb, json_t **summary)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	json_t *doc = rocrate_build(db, run, NULL, summary);
	int rc = -1;

	if (!doc) {
		cli_error(verb, "reading the run for its crate: %s", sqlite3_errmsg(db));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/ro-crate-metadata.json", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		cli_error(verb, "%s: %s", dir, strerror(errno));
	else if (json_dump_file(doc, tmp, JSON_INDENT(1) | JSON_PRESERVE_ORDER) != 0 ||
		 rename(tmp, path) != 0) {
		cli_error(verb, "%s: cannot write (%s)", path, strerror(errno));
		remove(tmp);
	} else {
		rc = 0;
	}
	json_decref(doc);
	if (rc != 0) {
		json_decref(*summary);
		*summary = NULL;
	}
	return rc;
}
