/*
 * redact_argv: each argument is read with its command (the tool, behind
 * wrappers such as sudo or env), the two words before it and its place.
 * Rules by name and by tool find whole values; the other rules find secrets
 * inside the argument (pairs, code, URLs, tokens, shell strings).
 */
#include <ctype.h>
#include <string.h>

#include "collector/redact/internal.h"
#include "common/fileutil.h"

/*
 * A command that stores secrets (`gh secret set`, `kubectl create secret`,
 * `fly secrets set`, `az keyvault secret set`, `vault kv put`, `vault write`)
 * is given values that are secrets whatever their names: NAME=VALUE words,
 * --from-literal=NAME=VALUE, --body/--value VALUE. Reading one (`kubectl get
 * secret`) names no verb and is left alone. rules.c's store_see sees the words.
 */
static bool is_value_flag(const char *word, size_t len)
{
	static const char *const flags[] = {"--body", "-b", "--value", "--from-literal", "--data"};

	return in_list(word, len, flags, sizeof(flags) / sizeof(*flags));
}
static long secret_store_value(const struct command *st, const char *prev, const char *arg,
			       size_t len)
{
	if (!st->store_opened || !st->store_verb)
		return -1;
	const char *eq = memchr(arg, '=', len);
	if (prev && is_value_flag(prev, strlen(prev))) {
		if (strcmp(prev, "--from-literal") == 0 && eq)
			return eq + 1 - arg; /* --from-literal NAME=VALUE */
		return 0;
	}
	if (arg[0] == '-') {
		if (eq && is_value_flag(arg, (size_t)(eq - arg))) {
			const char *name_end = memchr(eq + 1, '=', len - (size_t)(eq + 1 - arg));
			bool literal = (size_t)(eq - arg) == 14; /* --from-literal=NAME=VALUE */
			return (literal && name_end ? name_end : eq) + 1 - arg;
		}
		if (arg[1] == 'b' && len > 2)
			return 2; /* gh secret set NAME -bVALUE */
		return -1;
	}
	if (!eq || eq == arg)
		return -1;
	for (const char *c = arg; c < eq; c++)
		if (!is_key_char(*c) && *c != '.')
			return -1; /* a word with '=' in it, not NAME=VALUE */
	return eq + 1 - arg;
}

/* `aws configure set aws_secret_access_key X`, `git config user.password X`,
 * `rclone config create r s3 secret_access_key X`: a setting's value after its name. */
static bool after_secret_name(const struct command *c, const char *prev2, const char *prev,
			      const char *word, size_t len)
{
	if (!prev || prev[0] == '-')
		return false;
	size_t plen = strlen(prev), k = plen;
	while (k > 0 && is_key_char(prev[k - 1]))
		k--;
	/* npm config set //registry.npmjs.org/:_authToken X: the name after the URL */
	if (prev2 && !strcmp(prev2, "set") && k < plen)
		return key_hides_value(prev + k, plen - k, word, len);
	if (k > 0)
		return false; /* a URL or a sentence, not a setting's name */
	if ((prev2 && !strcmp(prev2, "set")) || !strcmp(c->tool, "git"))
		return redact_key_is_sensitive(prev, plen);
	/* rclone config create r s3 secret_access_key X: a compound name, in a config command */
	return c->configures && (strchr(prev, '_') || strchr(prev, '.')) &&
	       key_classify(prev, plen) == KEY_SECRET && key_hides_value(prev, plen, word, len);
}

/* psql --password -h db: a switch, then another option, is no value. */
static bool looks_like_option(const char *word, size_t len)
{
	if (len < 2 || word[0] != '-')
		return false;
	size_t i = word[1] == '-' ? 2 : 1;
	if (i == len || (i == 1 && len != 2))
		return false; /* -xY might be a secret; -x and --name are options */
	for (; i < len; i++)
		if (!isalpha((unsigned char)word[i]) && word[i] != '-')
			return false;
	return true;
}

/* --password X, -storepass X, --src-creds user:X: where the value's secret starts, or -1. */
static long after_secret_option(const char *prev, const char *word, size_t len)
{
	size_t plen;

	if (!prev || prev[0] != '-' || strchr(prev, '=') || (plen = strlen(prev)) <= 2 ||
	    looks_like_option(word, len))
		return -1;
	if (!key_hides_value(prev, plen, word, len))
		return -1;
	const char *colon = key_keeps_user(prev, plen) ? memchr(word, ':', len) : NULL;
	return colon && colon > word ? colon + 1 - word : 0;
}

/* Where a whole value starts by the structure alone, or -1. */
static long structural_secret(const struct redact_rules *r, const struct command *c,
			      const char *prev2, const char *prev, const char *word, size_t len)
{
	long from = secret_store_value(c, prev, word, len);

	if (from >= 0 && (size_t)from < len)
		return from;
	if (c->after_secrets_set == 1)
		return 0; /* secrets set NAME VALUE */
	from = command_rule_secret(c, r, prev, word, len);
	if (from >= 0)
		return from;
	from = after_secret_option(prev, word, len);
	if (from >= 0)
		return from;
	return after_secret_name(c, prev2, prev, word, len) ? 0 : -1;
}

enum { HAS_EQ = 1, HAS_COLON = 2, HAS_QUOTE = 4, HAS_AT = 8 };

/* Which of the bytes the rules below start from the argument holds: one pass,
 * so that a plain word (most of them: paths, numbers, names) meets only the
 * token formats. */
static unsigned marks_of(const char *arg, size_t len)
{
	unsigned m = 0;

	for (size_t i = 0; i < len; i++)
		switch (arg[i]) {
		case '=':
			m |= HAS_EQ;
			break;
		case ':':
			m |= HAS_COLON;
			break;
		case '"':
		case '\'':
			m |= HAS_QUOTE;
			break;
		case '@':
			m |= HAS_AT;
			break;
		default:
			break;
		}
	return m;
}

void find_secrets(const char *arg, size_t len, struct spans *sp)
{
	unsigned m = marks_of(arg, len);

	if (m & HAS_EQ)
		find_pairs(arg, len, sp);
	if (m & HAS_QUOTE) {
		find_quoted_keys(arg, len, sp);
		find_code_assignments(arg, len, sp);
	}
	if (m & HAS_COLON) {
		find_url_credentials(arg, len, sp);
		find_header_at(arg, 0, len, sp);
		find_windows_option(arg, len, sp);
		if (m & HAS_AT)
			find_user_at_host(arg, len, sp);
	}
	find_token_shapes(arg, len, sp);
}

static bool has_shell_words(const char *arg, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (arg[i] == ' ' || arg[i] == '\t' || arg[i] == '\n' || arg[i] == ';' ||
		    arg[i] == '|' || arg[i] == '&')
			return true;
	return false;
}

void find_word_secrets(const struct redact_rules *r, const struct command *c, const char *prev2,
		       const char *prev, const char *word, size_t len, struct spans *sp, int depth)
{
	long from = structural_secret(r, c, prev2, prev, word, len);

	if (from >= 0) {
		add_span(sp, (size_t)from, len);
		return;
	}
	find_secrets(word, len, sp);
	find_oracle_login(c->tool, word, len, sp);
	/* An argument that is a shell string; a shell string's own words have
	 * find_nested_words for that (depth -1). */
	if (depth >= 0 && has_shell_words(word, len))
		find_shell_words(r, word, len, sp, depth);
}

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
			 unsigned i, bool positional, char *out, size_t cap, unsigned *count)
{
	const char *arg = argv[i];
	size_t len = strlen(arg);
	struct spans sp;

	spans_clear(&sp);
	if (positional)
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
		size_t n = redact_arg(rules, &cmd, argv, i, i && i == positional, out + used,
				      out_size - used, &count);
		if (i && !starts)
			command_see(&cmd, rules, argv[i], strlen(argv[i]));
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
