#include "cli/render/clierror.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

static bool json_wanted, output_written;
static char first_error[1200];

void cli_error_want_json(bool wanted)
{
	json_wanted = wanted;
}

bool cli_error_json_wanted(void)
{
	return json_wanted;
}

void cli_error(const char *verb, const char *fmt, ...)
{
	char text[sizeof(first_error)];
	va_list ap;
	size_t len;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	len = strlen(text);
	while (len && text[len - 1] == '\n')
		text[--len] = '\0';
	fprintf(stderr, "tracer %s: %s\n", verb, text);
	if (!first_error[0])
		snprintf(first_error, sizeof(first_error), "%s", text);
}

void cli_error_output_written(void)
{
	output_written = true;
}

int cli_error_finish(const char *verb, int rc)
{
	if (rc == 0 || !json_wanted || output_written)
		return rc;
	const char *why = first_error[0] ? first_error
			  : rc == 2	 ? "bad usage (see the verb's --help)"
					 : "failed";
	json_t *doc = json_pack("{s:s, s:s, s:i}", "error", why, "verb", verb, "exit_code", rc);
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	json_decref(doc);
	return rc;
}
