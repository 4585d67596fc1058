/*
 * Per-tool rules (deploy/etc/redact.rules): where a tool takes a secret that
 * no option name gives away. Parsed from text, matched against one command's
 * words as redact_argv and the shell-string reader walk them.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "collector/redact/internal.h"

#define RULES_MAX 1024
#define FIELD_MAX 32

enum rule_kind { RULE_NEXT, RULE_GLUED, RULE_BOTH, RULE_POSITION, RULE_LAST, RULE_STDIN };

struct tool_rule {
	char tool[FIELD_MAX];
	char sub[FIELD_MAX]; /* "" for none */
	char arg[FIELD_MAX];
	enum rule_kind kind;
	unsigned position;
	unsigned line; /* in the file: rules of one tool apply in this order */
	char user_sep;
};

/* Sorted by tool, so that a tool's rules are one range found once per command. */
struct redact_rules {
	unsigned n;
	unsigned first[257]; /* rules whose tool starts with byte b: [first[b], first[b + 1]) */
	struct tool_rule r[];
};

unsigned redact_rules_count(const struct redact_rules *r)
{
	return r ? r->n : 0;
}

void redact_rules_free(struct redact_rules *r)
{
	free(r);
}

static const struct {
	const char *name;
	enum rule_kind kind;
} kinds[] = {{"next", RULE_NEXT},	  {"glued", RULE_GLUED}, {"both", RULE_BOTH},
	     {"position", RULE_POSITION}, {"last", RULE_LAST},	 {"stdin", RULE_STDIN}};

/* One line's fields, split at white space. */
static unsigned split_fields(char *line, char **f, unsigned max)
{
	unsigned n = 0;

	for (char *p = line; *p && n < max + 1;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		if (n == max)
			return max + 1; /* too many */
		f[n++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (*p)
			*p++ = '\0';
	}
	return n;
}

static int parse_rule(char *line, struct tool_rule *r, char *err, size_t err_size)
{
	char *f[5];
	unsigned n = split_fields(line, f, 5);

	if (n < 4 || n > 5) {
		snprintf(err, err_size, "want TOOL SUBCOMMAND KIND ARGUMENT [SEPARATOR]");
		return -1;
	}
	for (unsigned i = 0; i < n; i++)
		if (strlen(f[i]) >= FIELD_MAX) {
			snprintf(err, err_size, "'%.40s' is longer than %d bytes", f[i],
				 FIELD_MAX - 1);
			return -1;
		}
	memset(r, 0, sizeof(*r));
	memcpy(r->tool, f[0], strlen(f[0]));
	if (strcmp(f[1], "-") != 0)
		memcpy(r->sub, f[1], strlen(f[1]));
	unsigned k = 0;
	while (k < sizeof(kinds) / sizeof(*kinds) && strcmp(kinds[k].name, f[2]) != 0)
		k++;
	if (k == sizeof(kinds) / sizeof(*kinds)) {
		snprintf(err, err_size,
			 "unknown kind '%s' (next, glued, both, position, last, stdin)", f[2]);
		return -1;
	}
	r->kind = kinds[k].kind;
	memcpy(r->arg, f[3], strlen(f[3]));
	if (r->kind == RULE_POSITION) {
		char *end;
		unsigned long p = strtoul(f[3], &end, 10);
		if (*end || p < 1 || p > CMD_WORDS) {
			snprintf(err, err_size, "position '%s' is not 1 to %d", f[3], CMD_WORDS);
			return -1;
		}
		r->position = (unsigned)p;
	}
	if (n == 5) {
		if (strlen(f[4]) != 1) {
			snprintf(err, err_size, "the user separator '%s' is not one character",
				 f[4]);
			return -1;
		}
		r->user_sep = f[4][0];
	}
	return 0;
}

static int by_tool(const void *a, const void *b)
{
	const struct tool_rule *x = a, *y = b;
	int c = strcmp(x->tool, y->tool);

	return c ? c : (x->line > y->line) - (x->line < y->line); /* the file's order */
}

static void index_rules(struct redact_rules *rules)
{
	unsigned i = 0;

	qsort(rules->r, rules->n, sizeof(*rules->r), by_tool);
	for (unsigned b = 0; b < 256; b++) {
		rules->first[b] = i;
		while (i < rules->n && (unsigned char)rules->r[i].tool[0] == b)
			i++;
	}
	rules->first[256] = rules->n;
}

struct redact_rules *redact_rules_parse(const char *text, size_t len, char *err, size_t err_size)
{
	struct redact_rules *rules = malloc(sizeof(*rules) + RULES_MAX * sizeof(struct tool_rule));
	char line[512], why[160];
	unsigned lineno = 0;

	if (!rules) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	rules->n = 0;
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t llen = (nl ? (size_t)(nl - text) : len) - pos;
		lineno++;
		if (llen >= sizeof(line)) {
			snprintf(err, err_size, "line %u: longer than %zu bytes", lineno,
				 sizeof(line) - 1);
			goto bad;
		}
		memcpy(line, text + pos, llen);
		line[llen] = '\0';
		pos += llen + 1;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		size_t l = strlen(line);
		while (l && isspace((unsigned char)line[l - 1]))
			line[--l] = '\0';
		if (strspn(line, " \t") == l)
			continue;
		if (rules->n == RULES_MAX) {
			snprintf(err, err_size, "line %u: more than %d rules", lineno, RULES_MAX);
			goto bad;
		}
		if (parse_rule(line, &rules->r[rules->n], why, sizeof(why)) != 0) {
			snprintf(err, err_size, "line %u: %s", lineno, why);
			goto bad;
		}
		rules->r[rules->n++].line = lineno;
	}
	index_rules(rules);
	return rules;
bad:
	free(rules);
	return NULL;
}

extern const char redact_rules_default[]; /* generated from deploy/etc/redact.rules */

const struct redact_rules *redact_rules_builtin(void)
{
	static struct redact_rules *builtin;

	if (!builtin) {
		char err[200];
		builtin = redact_rules_parse(redact_rules_default, strlen(redact_rules_default),
					     err, sizeof(err));
		/* Only a build whose deploy/etc/redact.rules does not parse gets here
		 * (test_redact_rules fails on it): redact with no tool rules rather
		 * than not at all. */
		if (!builtin)
			builtin = redact_rules_parse("", 0, err, sizeof(err));
	}
	return builtin;
}

/* The range of TOOL's rules: [*lo, *hi), empty if it has none. */
static void tool_range(const struct redact_rules *r, const char *tool, unsigned *lo, unsigned *hi)
{
	unsigned b = (unsigned char)tool[0], i = r ? r->first[b] : 0, end = r ? r->first[b + 1] : 0;

	*lo = *hi = 0;
	if (!tool[0])
		return;
	while (i < end && strcmp(r->r[i].tool, tool) < 0)
		i++;
	*lo = *hi = i;
	while (*hi < end && !strcmp(r->r[*hi].tool, tool))
		(*hi)++;
}

bool rules_name_subcommand(const struct redact_rules *r, const char *tool, const char *word)
{
	unsigned lo, hi;

	tool_range(r, tool, &lo, &hi);
	for (unsigned i = lo; i < hi; i++)
		if (r->r[i].sub[0] == word[0] && !strcmp(r->r[i].sub, word))
			return true;
	return false;
}

bool rules_name_tool(const struct redact_rules *r, const char *name)
{
	if (!name[0] || !r)
		return false;
	unsigned b = (unsigned char)name[0];
	for (unsigned i = r->first[b]; i < r->first[b + 1]; i++)
		if (name[1] == r->r[i].tool[1] && !strcmp(name, r->r[i].tool))
			return true;
	return false;
}

/* The index of the rule's subcommand among the command's words, -1 for none
 * needed, -2 when it is not there. */
static int sub_index(const struct command *c, const struct tool_rule *t)
{
	if (!t->sub[0])
		return -1;
	unsigned stored = c->nwords < CMD_WORDS ? c->nwords : CMD_WORDS;
	for (unsigned i = stored; i-- > 0;)
		if (!strcmp(c->words[i], t->sub))
			return (int)i;
	return -2;
}

/* A rule of the command's tool whose subcommand, if it needs one, came. */
static bool rule_applies(const struct command *c, const struct tool_rule *t)
{
	return sub_index(c, t) != -2;
}

void command_start(struct command *c, const struct redact_rules *r, const char *tool)
{
	size_t n = strnlen(tool, sizeof(c->tool) - 1); /* not snprintf: once per exec */
	memcpy(c->tool, tool, n);
	c->tool[n] = '\0';
	c->nwords = 0;
	c->configures = false;
	c->at_tool = true;
	c->reads_secret = false;
	c->store_opened = c->store_verb = false;
	c->after_secrets_set = -1;
	tool_range(r, c->tool, &c->rule_lo, &c->rule_hi);
	for (unsigned i = c->rule_lo; i < c->rule_hi; i++)
		if (r->r[i].kind == RULE_STDIN && !strcmp(r->r[i].arg, "*") &&
		    rule_applies(c, &r->r[i]))
			c->reads_secret = true;
}

void command_switch(struct command *c, const struct redact_rules *r, const char *tool)
{
	bool reads = c->reads_secret;

	command_start(c, r, tool);
	c->reads_secret |= reads;
}

/* Secret stores (`gh secret set`, `vault kv put`): see argv.c. */
static void store_see(struct command *c, const char *word, size_t len)
{
	static const char *const verbs[] = {"set",   "create", "put",	"add",
					    "patch", "update", "write", "edit"};

	if ((len == 6 || len == 7) && !memcmp(word, "secret", 6) && (len == 6 || word[6] == 's'))
		c->store_opened = true;
	else if (len == 2 && word[0] == 'k' && word[1] == 'v')
		c->store_opened = true;
	else if (len >= 5 && !memcmp(word + len - 5, "vault", 5) &&
		 (len == 5 || word[len - 6] == '/'))
		c->store_opened = true;
	else if (len >= 3 && len <= 6 && in_list(word, len, verbs, sizeof(verbs) / sizeof(*verbs)))
		c->store_verb = true;
}

void command_see(struct command *c, const struct redact_rules *r, const char *word, size_t len)
{
	c->at_tool = false;
	store_see(c, word, len);
	if (c->after_secrets_set >= 0)
		c->after_secrets_set++;
	else if (len == 3 && !memcmp(word, "set", 3) && c->nwords && c->nwords <= CMD_WORDS &&
		 !strcmp(c->words[c->nwords - 1], "secrets"))
		c->after_secrets_set = 0;
	/* --password-stdin, sshfs -o password_stdin */
	if (len >= 6 && !strncasecmp(word + len - 5, "stdin", 5) &&
	    key_reads_secret_stdin(word, len))
		c->reads_secret = true;
	for (unsigned i = c->rule_lo; i < c->rule_hi; i++) {
		const struct tool_rule *t = &r->r[i];
		if (t->kind == RULE_STDIN && strlen(t->arg) == len && !memcmp(word, t->arg, len) &&
		    rule_applies(c, t))
			c->reads_secret = true;
	}
	if (word[0] == '-' && len > 1)
		return; /* an option; "-" alone is a word (stdin) */
	if ((len == 6 && !memcmp(word, "config", 6)) || (len == 9 && !memcmp(word, "configure", 9)))
		c->configures = true;
	if (c->nwords < CMD_WORDS) {
		size_t n = len < CMD_WORD_LEN - 1 ? len : CMD_WORD_LEN - 1;
		memcpy(c->words[c->nwords], word, n);
		c->words[c->nwords][n] = '\0';
	}
	if (c->nwords < 1000)
		c->nwords++;
}

/* user:secret keeps the user unless the user part itself hides a secret. */
static long after_user(const struct tool_rule *t, const char *word, size_t len, size_t from)
{
	if (!t->user_sep)
		return (long)from;
	const char *sep = memchr(word + from, t->user_sep, len - from);
	if (!sep)
		return (long)from;
	struct spans sp;
	spans_clear(&sp);
	find_secrets(word + from, (size_t)(sep - word) - from, &sp);
	return sp.n || sp.overflow ? (long)from : sep + 1 - word;
}

static long rule_secret(const struct command *c, const struct tool_rule *t, const char *prev,
			const char *word, size_t len)
{
	size_t al = strlen(t->arg);

	if (t->kind == RULE_POSITION) {
		if (word[0] == '-' && len > 1)
			return -1;
		int s = sub_index(c, t);
		unsigned after = s == -1 ? c->nwords + 1 : c->nwords - (unsigned)s;
		return after == t->position ? 0 : -1;
	}
	if (t->kind == RULE_STDIN || t->kind == RULE_LAST || word[0] == '\0')
		return -1;
	if ((t->kind == RULE_NEXT || t->kind == RULE_BOTH) && prev && !strcmp(prev, t->arg))
		return after_user(t, word, len, 0);
	if (len > al && !memcmp(word, t->arg, al)) {
		/* --user=alice:X: a long option's value after '=' */
		if (t->kind != RULE_GLUED && word[al] == '=' && al > 2)
			return after_user(t, word, len, al + 1);
		if (t->kind == RULE_GLUED || t->kind == RULE_BOTH)
			return after_user(t, word, len, al);
	}
	return -1;
}

bool command_last_is_secret(const struct command *c, const struct redact_rules *r)
{
	for (unsigned i = c->rule_lo; r && i < c->rule_hi; i++)
		if (r->r[i].kind == RULE_LAST && rule_applies(c, &r->r[i]))
			return true;
	return false;
}

long command_rule_secret(const struct command *c, const struct redact_rules *r, const char *prev,
			 const char *word, size_t len)
{
	if (c->at_tool)
		return -1; /* the tool's own name */
	for (unsigned i = c->rule_lo; r && i < c->rule_hi; i++) {
		const struct tool_rule *t = &r->r[i];
		if (!rule_applies(c, t))
			continue;
		long from = rule_secret(c, t, prev, word, len);
		if (from >= 0)
			return from;
	}
	return -1;
}
