#include "collector/redact.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "common/fileutil.h"

#define KEY_MAX 256 /* longer keys are treated as sensitive: when in doubt, redact */
#define MAX_SPANS 32

/* Substrings of a normalised key (lower case, '-' as '_') that mark secrets. */
static const char *const secret_words[] = {
    "password", "passwd",      "passphrase", "secret",		 "token",      "api_key",
    "apikey",	"access_key",  "accesskey",  "private_key",	 "privatekey", "credential",
    "auth_key", "session_key", "signature",  "x_amz_credential",
};
/* Whole keys that are secrets but too short to match as substrings. */
static const char *const secret_keys[] = {
    "pass", "pwd", "pw", "auth", "authorization", "proxy_authorization", "cookie", "sig",
};
/* Endings that name where a secret is, or how long, not the secret itself. */
static const char *const harmless_suffixes[] = {
    "_file", "_path",	"_stdin", "_env",  "_cmd",    "_command", "_prompt",
    "_dir",  "_length", "_len",	  "_type", "_tokens", "_url",
};

/* Tools that take a secret as a detached or glued short option. */
struct tool_rule {
	const char *tool;
	const char *flag;
	bool glued;	  /* -pSECRET rather than -p SECRET */
	bool after_colon; /* user:SECRET: keep the user */
};
static const struct tool_rule tool_rules[] = {
    {"mysql", "-p", true, false},      {"mysqldump", "-p", true, false},
    {"mysqladmin", "-p", true, false}, {"mariadb", "-p", true, false},
    {"sshpass", "-p", false, false},   {"curl", "-u", false, true},
    {"curl", "--user", false, true},   {"curl", "--proxy-user", false, true},
    {"curl", "-U", false, true},       {"wget", "--password", false, false},
    {"smbclient", "-U", false, true},  {"htpasswd", "-b", false, false},
};

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

int redact_key_is_sensitive(const char *key, size_t len)
{
	char norm[KEY_MAX + 1];
	size_t n = 0;

	while (len && *key == '-') {
		key++;
		len--;
	}
	if (len == 0)
		return 0;
	if (len > KEY_MAX)
		return 1;
	for (size_t i = 0; i < len; i++) {
		char c = (char)tolower((unsigned char)key[i]);
		norm[n++] = c == '-' || c == '.' ? '_' : c;
	}
	norm[n] = '\0';
	for (size_t i = 0; i < sizeof(harmless_suffixes) / sizeof(*harmless_suffixes); i++)
		if (ends_with(norm, n, harmless_suffixes[i]))
			return 0;
	/* A tokenizer is not a token; blank the word out so "token" does not match in
	 * it, while a secret word elsewhere in the key still does. */
	for (char *t = strstr(norm, "tokeniz"); t; t = strstr(t, "tokeniz"))
		memset(t, '#', 7);
	for (size_t i = 0; i < sizeof(secret_keys) / sizeof(*secret_keys); i++)
		if (strcmp(norm, secret_keys[i]) == 0)
			return 1;
	for (size_t i = 0; i < sizeof(secret_words) / sizeof(*secret_words); i++)
		if (strstr(norm, secret_words[i]))
			return 1;
	return 0;
}

struct span {
	size_t start;
	size_t end;
};

struct spans {
	struct span s[MAX_SPANS];
	unsigned n;
	bool overflow;
};

static void add_span(struct spans *sp, size_t start, size_t end)
{
	if (end <= start)
		end = start; /* an empty secret still becomes REDACTED */
	if (sp->n == MAX_SPANS) {
		sp->overflow = true;
		return;
	}
	sp->s[sp->n].start = start;
	sp->s[sp->n].end = end;
	sp->n++;
}

static bool is_key_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

static bool is_pair_separator(char c)
{
	return c == ',' || c == '&' || c == ';' || c == '?' || c == ' ';
}

/* KEY=VALUE pairs: --password=X (value to the end) or a=1&token=X (to a separator). */
static void find_pairs(const char *arg, size_t len, struct spans *sp)
{
	for (size_t eq = 0; eq < len; eq++) {
		if (arg[eq] != '=')
			continue;
		size_t k = eq;
		while (k > 0 && is_key_char(arg[k - 1]))
			k--;
		if (k == eq || !redact_key_is_sensitive(arg + k, eq - k))
			continue;
		size_t end = eq + 1;
		if (k == 0 || (k <= 2 && arg[0] == '-')) {
			end = len; /* the whole rest of --flag=value is the value */
		} else {
			while (end < len && !is_pair_separator(arg[end]))
				end++;
		}
		add_span(sp, eq + 1, end);
		eq = end;
	}
}

/* scheme://user:secret@host and https://token@host */
static void find_url_credentials(const char *arg, size_t len, struct spans *sp)
{
	const char *p = arg;

	while ((p = strstr(p, "://")) != NULL) {
		size_t auth_start = (size_t)(p - arg) + 3;
		size_t i = auth_start, at = 0, colon = 0;

		for (; i < len; i++) {
			char c = arg[i];
			if (c == '/' || c == '?' || c == '#' || c == ' ')
				break;
			if (c == '@')
				at = i;
			if (c == ':' && !colon && !at)
				colon = i;
		}
		if (at) {
			if (colon && colon < at) {
				add_span(sp, colon + 1, at);
			} else {
				/* A bare user part: on http-like schemes it is usually a token. */
				size_t s = (size_t)(p - arg);
				while (s > 0 && isalpha((unsigned char)arg[s - 1]))
					s--;
				if (strncasecmp(arg + s, "http", 4) == 0 ||
				    strncasecmp(arg + s, "ftp", 3) == 0)
					add_span(sp, auth_start, at);
			}
		}
		p += 3;
	}
}

/* "Authorization: Bearer X", "Cookie: a=b", openssl "pass:X" */
static void find_headers(const char *arg, size_t len, struct spans *sp)
{
	size_t i = 0;

	while (i < len && isspace((unsigned char)arg[i]))
		i++;
	size_t name = i;
	while (i < len && (isalnum((unsigned char)arg[i]) || arg[i] == '-' || arg[i] == '_'))
		i++;
	if (i == name || i >= len || arg[i] != ':')
		return;
	if (i - name == 4 && strncmp(arg + name, "pass", 4) == 0) {
		add_span(sp, i + 1, len);
		return;
	}
	if (!redact_key_is_sensitive(arg + name, i - name))
		return;
	i++;
	while (i < len && isspace((unsigned char)arg[i]))
		i++;
	add_span(sp, i, len);
}

/* Every rule that finds a secret inside one argument. */
static void find_secrets(const char *arg, size_t len, struct spans *sp)
{
	find_pairs(arg, len, sp);
	find_url_credentials(arg, len, sp);
	find_headers(arg, len, sp);
}

static int span_cmp_start(const struct span *a, const struct span *b)
{
	return a->start < b->start ? -1 : a->start > b->start;
}

static void sort_spans(struct spans *sp)
{
	for (unsigned i = 1; i < sp->n; i++) {
		struct span key = sp->s[i];
		unsigned j = i;
		while (j > 0 && span_cmp_start(&sp->s[j - 1], &key) > 0) {
			sp->s[j] = sp->s[j - 1];
			j--;
		}
		sp->s[j] = key;
	}
}

/* Writes arg with spans replaced; returns bytes written incl. NUL, 0 if no room. */
static size_t write_redacted(const char *arg, size_t len, struct spans *sp, char *out, size_t cap)
{
	size_t o = 0, pos = 0;

	sort_spans(sp);
	for (unsigned i = 0; i <= sp->n; i++) {
		size_t copy_end = i < sp->n ? sp->s[i].start : len;
		if (copy_end > pos) {
			if (o + (copy_end - pos) >= cap)
				return 0;
			memcpy(out + o, arg + pos, copy_end - pos);
			o += copy_end - pos;
			pos = copy_end;
		}
		if (i == sp->n)
			break;
		if (sp->s[i].end < pos)
			continue; /* inside an earlier span */
		if (o + sizeof(REDACTED) - 1 >= cap)
			return 0;
		if (sp->s[i].start >= pos) {
			memcpy(out + o, REDACTED, sizeof(REDACTED) - 1);
			o += sizeof(REDACTED) - 1;
		}
		pos = sp->s[i].end;
	}
	if (o >= cap)
		return 0;
	out[o++] = '\0';
	return o;
}

static const struct tool_rule *tool_rule_for(const char *tool, const char *arg, bool glued)
{
	for (size_t i = 0; i < sizeof(tool_rules) / sizeof(*tool_rules); i++) {
		const struct tool_rule *r = &tool_rules[i];
		size_t fl = strlen(r->flag);
		if (strcmp(tool, r->tool) != 0 || r->glued != glued)
			continue;
		if (glued ? strncmp(arg, r->flag, fl) == 0 && arg[fl] != '\0'
			  : strcmp(arg, r->flag) == 0)
			return r;
	}
	return NULL;
}

/* A flag whose value is the next argument: --password, --api-token, -p for sshpass. */
static const struct tool_rule detached_secret = {"", "", false, false};

static const struct tool_rule *detached_rule(const char *tool, const char *prev)
{
	size_t len;

	if (!prev || prev[0] != '-' || strchr(prev, '='))
		return NULL;
	const struct tool_rule *r = tool_rule_for(tool, prev, false);
	if (r)
		return r;
	len = strlen(prev);
	if (len > 2 && redact_key_is_sensitive(prev, len))
		return &detached_secret;
	return NULL;
}

static size_t put(char *out, size_t cap, const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b);

	if (alen + blen + 1 > cap)
		return 0;
	memcpy(out, a, alen);
	memcpy(out + alen, b, blen + 1);
	return alen + blen + 1;
}

static size_t redact_one(const char *tool, const char *prev, const char *arg, char *out, size_t cap,
			 unsigned *count)
{
	size_t len = strlen(arg);
	const struct tool_rule *r = detached_rule(tool, prev);
	struct spans sp = {.n = 0};

	if (r) {
		const char *colon = r->after_colon ? strchr(arg, ':') : NULL;
		(*count)++;
		if (colon) {
			/* The user part is kept only if no other rule sees a secret in it. */
			find_secrets(arg, (size_t)(colon - arg), &sp);
			if (sp.n || sp.overflow)
				colon = NULL;
		}
		return colon ? put(out, cap, arg, (size_t)(colon - arg) + 1, REDACTED)
			     : put(out, cap, "", 0, REDACTED);
	}
	r = tool_rule_for(tool, arg, true);
	if (r) {
		(*count)++;
		return put(out, cap, arg, strlen(r->flag), REDACTED);
	}
	find_secrets(arg, len, &sp);
	if (sp.overflow) {
		(*count)++;
		return put(out, cap, "", 0, REDACTED);
	}
	*count += sp.n;
	return write_redacted(arg, len, &sp, out, cap);
}

unsigned redact_argv(char *const *argv, unsigned argc, char *out, size_t out_size, char **out_argv)
{
	unsigned count = 0;
	size_t used = 0;
	const char *tool = argc ? path_basename(argv[0]) : "";

	for (unsigned i = 0; i < argc; i++) {
		const char *prev = i ? argv[i - 1] : NULL;
		size_t n = redact_one(tool, prev, argv[i], out + used, out_size - used, &count);
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
