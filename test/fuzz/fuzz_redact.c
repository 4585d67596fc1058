/* argv redaction: any argv (NUL-separated input), any output size. The redacted
 * arguments fit in the output and never keep a secret after a --password= option
 * (what the design keeps there is a setting or a path: docs/redaction.md). An input with a
 * \x01 byte is a rules file's text up to it, then the argv: the rules parser gets
 * any text, and redaction any rules it accepts. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/redact/redact.h"

/* The documented values a password option takes that are not a secret: a setting
 * (where the secret comes from, or that there is none) or the path of a file that
 * holds it, made only of a path's characters (docs/redaction.md). */
static bool password_is_setting(const char *value, size_t len)
{
	static const char *const settings[] = {"on", "off",  "true", "false", "yes",
					       "no", "none", "null", "stdin", "-"};

	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
		if (strlen(settings[i]) == len && !strncmp(value, settings[i], len))
			return true;
	if (len < 2)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!strchr(
			"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-~+@%",
			value[i]))
			return false;
	return value[0] == '~' || value[0] == '.' ||
	       (value[0] == '/' && memchr(value + 1, '/', len - 1));
}

/* Whether what follows a --password= in an output argument is a secret left in it:
 * the value is the shell word there (past its opening quotes, up to a blank, a quote or
 * an operator); nothing, the redaction mark or a documented setting is no leak. */
static bool value_leaks(const char *after)
{
	while (*after == '\'' || *after == '"' || *after == '\\')
		after++;
	size_t len = strcspn(after, " \t\n\"'\\;&|<>()`,?"); /* and a pair's end: a=1,b=2 */

	return len && strncmp(after, REDACTED, 3) != 0 && !password_is_setting(after, len);
}

/* The first --password= that is an option: the argument's start, or a word's in a
 * shell string (after a blank or a quote). Glued to other letters (num--password=,
 * x--password=) it is part of another name, which the name rules judge whole. */
static const char *password_option(const char *arg)
{
	for (const char *at = strstr(arg, "--password="); at; at = strstr(at + 1, "--password="))
		if (at == arg || strchr(" \t\n\"'", at[-1]))
			return at;
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct redact_rules *rules = NULL;
	const uint8_t *split = memchr(data, 1, size);
	char err[256];

	if (split) {
		rules = redact_rules_parse((const char *)data, (size_t)(split - data), err,
					   sizeof(err));
		size -= (size_t)(split - data) + 1;
		data = split + 1;
	}
	char *copy = malloc(size + 1);
	char *argv[64];
	unsigned argc = 0;

	if (!copy) {
		redact_rules_free(rules);
		return 0;
	}
	memcpy(copy, data, size);
	copy[size] = '\0';
	for (char *p = copy; p < copy + size && argc < 64; p += strlen(p) + 1)
		argv[argc++] = p;
	size_t out_size = size ? (size_t)data[0] * 4 + 1 : 16;
	char *out = malloc(out_size);
	char *out_argv[64];
	if (out) {
		redact_argv(rules, argv, argc, out, out_size, out_argv);
		for (unsigned i = 0; i < argc; i++) {
			/* Inside the output, or the fixed REDACTED when even that did not fit. */
			bool inside = out_argv[i] >= out && out_argv[i] < out + out_size;
			if (!inside && strcmp(out_argv[i], REDACTED) != 0)
				abort();
			if (inside && memchr(out_argv[i], '\0',
					     (size_t)(out + out_size - out_argv[i])) == NULL)
				abort();
			const char *eq = password_option(out_argv[i]);
			if (eq && value_leaks(eq + 11)) {
				fprintf(stderr, "LEAK arg %u: in [%s] out [%s]\n", i, argv[i],
					out_argv[i]);
				abort();
			}
		}
	}
	free(out);
	free(copy);
	redact_rules_free(rules);
	return 0;
}
