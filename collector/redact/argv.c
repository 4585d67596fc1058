/*
 * redact_argv: each argument is read with its command (the tool, behind
 * wrappers such as sudo or env), the two words before it and its place.
 * Rules by name and by tool find whole values; the other rules find secrets
 * inside the argument (pairs, code, URLs, tokens, shell strings).
 */
#include <string.h>

#include "collector/redact/internal.h"
#include "common/fileutil.h"

/*
 * Secrets known by their place that the rules file cannot say:
 * `htpasswd -b FILE USER PASSWORD` and `htpasswd -nb USER PASSWORD` (the
 * last), `mc alias set NAME URL KEY SECRET` (or `mc config host add ...`)
 * and `nextflow secrets set NAME VALUE` (also in the argv of the java its
 * launcher execs). The argument's index, or 0.
 */
static unsigned positional_secret(char *const *argv, unsigned argc)
{
	unsigned found = 0;
	bool htpasswd = false;

	for (unsigned i = 0; i < argc; i++) {
		const char *name = path_basename(argv[i]);
		if (argv[i][0] == 's' && i + 3 < argc && !strcmp(argv[i], "secrets") &&
		    !strcmp(argv[i + 1], "set") && !strchr(argv[i + 2], '='))
			found = i + 3;
		if (name[0] == 'h' && !strcmp(name, "htpasswd"))
			htpasswd = true;
		else if (htpasswd && argv[i][0] == '-' && argv[i][1] != '-' && strchr(argv[i], 'b'))
			found = argc - 1;
		if (name[0] != 'm' || strcmp(name, "mc") != 0)
			continue;
		for (unsigned j = i + 1; j + 1 < argc; j++)
			if ((!strcmp(argv[j], "alias") && !strcmp(argv[j + 1], "set")) ||
			    (!strcmp(argv[j], "host") && !strcmp(argv[j + 1], "add")))
				found = j + 5 < argc ? j + 5 : 0;
	}
	return found;
}

static bool is_command_name(const struct redact_rules *r, const char *name)
{
	return rules_name_tool(r, name) || !strcmp(name, "git") || !strcmp(name, "htpasswd") ||
	       !strcmp(name, "sqlplus");
}

/* One argument into out: bytes written incl. NUL, 0 if no room. */
static size_t redact_arg(const struct redact_rules *r, const struct command *c, char *const *argv,
			 unsigned argc, unsigned i, bool positional, char *out, size_t cap,
			 unsigned *count)
{
	const char *arg = argv[i];
	size_t len = strlen(arg);
	struct spans sp;

	spans_clear(&sp);
	if (positional || (i + 1 == argc && i && !c->at_tool && (arg[0] != '-' || !arg[1]) &&
			   command_last_is_secret(c, r)))
		add_span(&sp, 0, len);
	else
		find_word_secrets(r, c, i > 1 ? argv[i - 2] : NULL, i ? argv[i - 1] : NULL, arg,
				  len, &sp, 0);
	if (sp.overflow || (sp.n == 1 && sp.s[0].start == 0 && sp.s[0].end >= len)) {
		(*count)++;
		if (cap < sizeof(REDACTED))
			return 0;
		memcpy(out, REDACTED, sizeof(REDACTED));
		return sizeof(REDACTED);
	}
	*count += sp.n;
	return write_redacted(arg, len, &sp, out, cap);
}

unsigned redact_argv(const struct redact_rules *rules, char *const *argv, unsigned argc, char *out,
		     size_t out_size, char **out_argv)
{
	unsigned count = 0, positional = positional_secret(argv, argc);
	size_t used = 0;
	struct command cmd;

	if (!rules)
		rules = redact_rules_builtin();
	command_start(&cmd, rules, argc ? path_basename(argv[0]) : "");
	for (unsigned i = 0; i < argc; i++) {
		const char *name = path_basename(argv[i]);
		bool starts = i && is_command_name(rules, name) &&
			      !rules_name_subcommand(rules, cmd.tool, argv[i]);
		if (starts)
			command_switch(&cmd, rules, name); /* sudo -u app mysql -pX */
		size_t n = redact_arg(rules, &cmd, argv, argc, i, i && i == positional, out + used,
				      out_size - used, &count);
		if (i && !starts)
			command_see(&cmd, rules, argv[i], strlen(argv[i]));
		else
			cmd.at_tool = false; /* the tool's name is behind */
		if (n == 0) {
			/* No room for the redacted form: give up on this argument. */
			if (out_size - used < sizeof(REDACTED)) {
				out_argv[i] = (char *)REDACTED;
				count++;
				continue;
			}
			memcpy(out + used, REDACTED, sizeof(REDACTED));
			n = sizeof(REDACTED);
			count++;
		}
		out_argv[i] = out + used;
		used += n;
	}
	return count;
}
