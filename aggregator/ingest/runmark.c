#include "aggregator/ingest/runmark.h"

#include <stdio.h>
#include <string.h>

#include "common/fileutil.h"

/* Options of `tracer run` that take a value (kept in step with cli/verbs/cmd_run.c). */
static const char *const valued_options[] = {"--pipeline",  "--run",  "--db",	 "--socket",
					     "--log-level", "--user", "--scope", "--json-out"};

static bool takes_value(const char *opt)
{
	for (size_t i = 0; i < sizeof(valued_options) / sizeof(*valued_options); i++)
		if (strcmp(opt, valued_options[i]) == 0)
			return true;
	return false;
}

static void copy_value(char *dst, const char *src)
{
	snprintf(dst, RUNMARK_NAME_MAX, "%s", src);
}

bool runmark_parse(const char *exe, char *const *argv, size_t argc, struct runmark *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!exe || argc < 2 || strcmp(path_basename(exe), "tracer") != 0 ||
	    strcmp(argv[1], "run") != 0)
		return false;
	for (i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *eq = strchr(a, '=');
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-')
			break; /* first command word */
		if (strncmp(a, "--pipeline=", 11) == 0)
			copy_value(out->pipeline, a + 11);
		else if (strncmp(a, "--run=", 6) == 0)
			copy_value(out->run, a + 6);
		else if (!eq && takes_value(a) && i + 1 < argc) {
			if (strcmp(a, "--pipeline") == 0)
				copy_value(out->pipeline, argv[i + 1]);
			else if (strcmp(a, "--run") == 0)
				copy_value(out->run, argv[i + 1]);
			i++;
		}
	}
	if (i < argc)
		copy_value(out->command, path_basename(argv[i]));
	return true;
}

bool runmark_is_tracer_daemon(const char *exe)
{
	const char *base = exe ? path_basename(exe) : "";

	return strcmp(base, "tracer-collector") == 0 || strcmp(base, "tracer-aggregator") == 0 ||
	       strcmp(base, "tracer-shipper") == 0;
}
