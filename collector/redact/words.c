/*
 * Where a whole word is a secret by the structure of its command alone: the
 * value after an option named for credentials (--password X, --src-creds
 * user:X), the tool's own rules (redact.rules), a setting's value after its
 * name (git config user.password X), what a command that stores secrets is
 * given.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "collector/redact/internal.h"

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
 * `rclone config create r s3 secret_access_key X`, `ngrok config add-authtoken X`:
 * a setting's value after its name. */
static bool after_secret_name(const struct command *c, const char *prev2, const char *prev,
			      const char *word, size_t len)
{
	if (!prev || prev[0] == '-')
		return false;
	size_t plen = strlen(prev), k = plen;
	while (k > 0 && is_key_char(prev[k - 1]))
		k--;
	/* npm config set //registry.npmjs.org/:_authToken X: the name after the URL */
	bool set = prev2 && !strcasecmp(prev2, "set"); /* redis's CONFIG SET too */
	if (set && k < plen)
		return key_hides_value(prev + k, plen - k, word, len);
	if (k > 0)
		return false; /* a URL or a sentence, not a setting's name */
	if (set || !strcmp(c->tool, "git"))
		return redact_key_is_sensitive(prev, plen);
	/* rclone config create r s3 secret_access_key X: a compound name, in a config command */
	return c->configures && (strchr(prev, '_') || strchr(prev, '.') || strchr(prev, '-')) &&
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

/* docker build --secret id=npm,src=.npmrc: where the secret is, as NAME=VALUE
 * fields none of which is a secret (pairs.c would find one that is). */
static bool names_where_a_secret_is(const char *v, size_t len)
{
	static const char *const fields[] = {"id",  "src",	"source", "env", "type", "target",
					     "dst", "required", "mode",	  "uid", "gid"};
	size_t start = 0;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && v[i] != ',')
			continue;
		const char *eq = memchr(v + start, '=', i - start);
		if (!eq || !in_list(v + start, (size_t)(eq - v) - start, fields,
				    sizeof(fields) / sizeof(*fields)))
			return false;
		start = i + 1;
	}
	return true;
}

/* --password X, -storepass X, --src-creds user:X: where the value's secret starts, or -1. */
static long after_secret_option(const char *prev, const char *word, size_t len)
{
	size_t plen;

	if (!prev || prev[0] != '-' || strchr(prev, '=') || (plen = strlen(prev)) <= 2 ||
	    looks_like_option(word, len) || names_where_a_secret_is(word, len))
		return -1;
	if (!key_hides_value(prev, plen, word, len))
		return -1;
	const char *colon = key_keeps_user(prev, plen) ? memchr(word, ':', len) : NULL;
	/* user:secret keeps a user name, nothing that could hold more (a space, an '='). */
	for (const char *c = word; colon && c < colon; c++)
		if (!is_key_char(*c) && *c != '@')
			colon = NULL;
	return colon && colon > word ? colon + 1 - word : 0;
}

/* Where a whole value starts by the structure alone, or -1. */
long word_structural_secret(const struct redact_rules *r, const struct command *c,
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
