/*
 * tracer export --ro-crate [RUN] DIR: a run's provenance as a Research Object
 * Crate (docs/provenance.md), DIR/ro-crate-metadata.json. DIR is made if
 * missing; an existing ro-crate-metadata.json in it is replaced, nothing else.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/db/clidb.h"
#include "cli/render/clierror.h"
#include "cli/verbs/commands.h"
#include "cli/render/jsonfield.h"
#include "cli/model/rocrate.h"

static const char usage_text[] =
    "usage: tracer export [--db PATH] [--json] --ro-crate [RUN] DIR\n"
    "  writes DIR/ro-crate-metadata.json: the run (default: the latest) as a Research\n"
    "  Object Crate (Process Run Crate; Workflow Run Crate where the workflow file is\n"
    "  known): one action per step with its tool and version, user, times, exit status,\n"
    "  container image, and the files it read and wrote (path, size, modification time)\n";

static void print_summary(const json_t *s, const char *dir)
{
	const json_t *files = json_object_get(s, "files");
	const char *why;
	json_t *n;

	printf("%s/ro-crate-metadata.json: run %lld, %lld actions (one per %s and the run), "
	       "%lld files\n",
	       dir, (long long)jint(s, "run_id"), (long long)jint(s, "actions"), jstr(s, "unit"),
	       (long long)jint(files, "files"));
	printf("  profile: %s\n", jstr(s, "profile"));
	if (jint(files, "not_found"))
		printf("  %lld inputs no longer exist (named without size)\n",
		       (long long)jint(files, "not_found"));
	json_object_foreach(json_object_get(files, "left_out"), why, n)
	    printf("  left out: %lld %s\n", (long long)json_integer_value(n), why);
}

/* --db, --json, --ro-crate, --help, then [RUN] DIR. */
static int parse(int argc, char **argv, struct cli_query *q, const char **dir, bool *crate)
{
	static const struct option opts[] = {{"db", required_argument, 0, 'd'},
					     {"json", no_argument, 0, 'j'},
					     {"ro-crate", no_argument, 0, 'r'},
					     {"help", no_argument, 0, 'h'},
					     {0, 0, 0, 0}};
	int c;

	q->db_path = cli_default_db();
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'd')
			q->db_path = optarg;
		else if (c == 'j')
			q->json = true;
		else if (c == 'r')
			*crate = true;
		else {
			fputs(usage_text, c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : 2;
		}
	}
	int left = argc - optind;
	if (!*crate || left < 1 || left > 2) {
		fputs(usage_text, stderr);
		return 2;
	}
	q->arg = left == 2 ? argv[optind] : NULL;
	*dir = argv[argc - 1];
	return -1;
}

int cmd_export(int argc, char **argv)
{
	struct cli_query q = {.verb = "export"};
	const char *dir = NULL;
	bool crate = false;
	int64_t run;
	int rc = parse(argc, argv, &q, &dir, &crate);

	if (rc >= 0)
		return rc;
	sqlite3 *db = cli_open_run(&q, &run);
	if (!db)
		return 1;
	json_t *summary = NULL;
	rc = 1;
	if (rocrate_write(db, run, dir, "export", &summary) == 0) {
		rc = 0;
		if (q.json) {
			json_object_set_new(summary, "path",
					    json_sprintf("%s/ro-crate-metadata.json", dir));
			cli_print_json(summary);
		} else {
			print_summary(summary, dir);
		}
	}
	json_decref(summary);
	sqlite3_close(db);
	return rc;
}
