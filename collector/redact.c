#include "collector/redact.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "bpf/events.h" /* TRACER_ARGV_MAX */
#include "common/fileutil.h"

#define KEY_MAX 256 /* longer keys are treated as sensitive: when in doubt, redact */
#define MAX_SPANS 32
#define NEST_MAX 4 /* shell strings inside shell strings, read this deep */

/* Substrings of a normalised key (lower case, '-' as '_') that mark secrets. */
static const char *const secret_words[] = {
    "password",		"passwd",      "passphrase", "secret",	    "token",
    "api_key",		"apikey",      "access_key", "accesskey",   "private_key",
    "privatekey",	"credential",  "auth_key",   "session_key", "signature",
    "x_amz_credential", "extraheader", "storepass",  "keypass",	    "bearer",
};
/* Whole keys that are secrets but too short to match as substrings. */
static const char *const secret_keys[] = {
    "pass",
    "pwd",
    "pw",
    "auth",
    "authorization",
    "proxy_authorization",
    "cookie",
    "sig",
    "aws_secret_access_key",
    "aws_session_token",
    "psk",
};
/* Endings of variable names that hold secrets (MYSQL_PWD, DB_PASS, GITHUB_PAT). */
static const char *const secret_suffixes[] = {"_pwd", "_pass", "_passwd", "_pat"};
/* Endings that name where a secret is, or how long, not the secret itself. */
static const char *const harmless_suffixes[] = {
    "_file", "_path", "_stdin",	 "_env", "_cmd", "_command", "_prompt", "_dir", "_length",
    "_len",  "_type", "_tokens", "_url", "_id",	 "_ids",     "_name",	"_arn",
};

/* Tools that take a secret as a detached or glued short option. */
struct tool_rule {
	const char *tool;
	const char *flag;
	bool glued;    /* -pSECRET rather than -p SECRET */
	char user_sep; /* user:SECRET (or user,SECRET, user%SECRET): keep the user */
};
static const struct tool_rule tool_rules[] = {
    {"mysql", "-p", true, 0},	     {"mysqldump", "-p", true, 0},
    {"mysqladmin", "-p", true, 0},   {"mariadb", "-p", true, 0},
    {"sshpass", "-p", false, 0},     {"curl", "-u", false, ':'},
    {"curl", "--user", false, ':'},  {"curl", "--proxy-user", false, ':'},
    {"curl", "-U", false, ':'},	     {"wget", "--password", false, 0},
    {"smbclient", "-U", false, '%'}, {"curl", "-u", true, ':'},
    {"sshpass", "-p", true, 0},	     {"docker", "-p", false, 0},
    {"podman", "-p", false, 0},	     {"redis-cli", "-a", false, 0},
    {"redis-cli", "-a", true, 0},    {"mongo", "-p", false, 0},
    {"mongosh", "-p", false, 0},     {"ldapsearch", "-w", false, 0},
    {"ldapmodify", "-w", false, 0},  {"ldapadd", "-w", false, 0},
    {"az", "-p", false, 0},	     {"zip", "-P", false, 0},
    {"7z", "-p", true, 0},	     {"openssl", "-k", false, 0},
    {"unzip", "-P", false, 0},	     {"rar", "-p", true, 0},
    {"unrar", "-p", true, 0},	     {"sqlcmd", "-P", false, 0},
    {"bcp", "-P", false, 0},	     {"lftp", "-u", false, ','},
    {"ncftp", "-p", false, 0},	     {"ncftpget", "-p", false, 0},
    {"ncftpput", "-p", false, 0},    {"ssh-keygen", "-N", false, 0},
    {"ssh-keygen", "-P", false, 0},  {"ssh-keygen", "-N", true, 0},
    {"ssh-keygen", "-P", true, 0},
};

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

/* What kind of key the word before `_key` names when the key is not a secret:
 * a database's or a sort's key, a public key, a key's id in a key store. */
static const char *const harmless_key_kinds[] = {
    "sort",	   "primary",	"partition", "hash",   "range",	    "group",   "cache",
    "public",	   "pub",	"host",	     "kms",    "gpg",	    "pgp",     "ssh",
    "s3",	   "foreign",	"join",	     "index",  "dedup",	    "merge",   "lookup",
    "routing",	   "message",	"row",	     "object", "unique",    "shard",   "search",
    "label",	   "tag",	"column",    "field",  "record",    "map",     "dict",
    "idempotency", "composite", "compound",  "order",  "secondary", "cluster",
};
/* Words after `key` that name something about a key, not the key itself. */
static const char *const key_attributes[] = {"id",   "ids",	"name",	       "alias",	    "arn",
					     "ref",  "version", "fingerprint", "algorithm", "size",
					     "bits", "column",	"field",       "server"};

static bool in_list(const char *word, size_t len, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(list[i]) == len && memcmp(word, list[i], len) == 0)
			return true;
	return false;
}

/*
 * A key that is some kind of key: --account-key, --sse-c-key, AccountKey=,
 * --client-key-data. Most such options carry the key itself; the kinds that
 * do not (--sort-key, --public-key, --kms-key-id) are listed above.
 */
static bool names_a_key(const char *norm, size_t n)
{
	size_t prev_start = 0, prev_len = 0, start = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i < n && norm[i] != '_')
			continue;
		size_t wlen = i - start;
		if (wlen == 3 && memcmp(norm + start, "key", 3) == 0 && prev_len > 0) {
			size_t next = i < n ? i + 1 : n, next_len = 0;
			while (next + next_len < n && norm[next + next_len] != '_')
				next_len++;
			bool harmless_kind =
			    in_list(norm + prev_start, prev_len, harmless_key_kinds,
				    sizeof(harmless_key_kinds) / sizeof(*harmless_key_kinds));
			bool attribute = next_len > 0 &&
					 in_list(norm + next, next_len, key_attributes,
						 sizeof(key_attributes) / sizeof(*key_attributes));
			if (!harmless_kind && !attribute)
				return true;
		}
		if (wlen > 0) {
			prev_start = start;
			prev_len = wlen;
		}
		start = i + 1;
	}
	return false;
}

/* NORM is KEY normalised; whether its words name a secret. */
static int key_names_a_secret(char *norm, size_t n, const char *key, size_t len)
{
	/* A tokenizer is not a token; blank the word out so "token" does not match in
	 * it, while a secret word elsewhere in the key still does. */
	for (char *t = strstr(norm, "tokeniz"); t; t = strstr(t, "tokeniz"))
		memset(t, '#', 7);
	for (size_t i = 0; i < sizeof(secret_keys) / sizeof(*secret_keys); i++)
		if (strcmp(norm, secret_keys[i]) == 0)
			return 1;
	for (size_t i = 0; i < sizeof(secret_suffixes) / sizeof(*secret_suffixes); i++)
		if (ends_with(norm, n, secret_suffixes[i]))
			return 1;
	/* An environment-style name (upper case) ending in _KEY: API_KEY, STRIPE_KEY. */
	bool upper = true;
	for (size_t i = 0; i < len && upper; i++)
		upper = !islower((unsigned char)key[i]);
	if (upper && ends_with(norm, n, "_key"))
		return 1;
	for (size_t i = 0; i < sizeof(secret_words) / sizeof(*secret_words); i++)
		if (strstr(norm, secret_words[i]))
			return 1;
	return names_a_key(norm, n);
}

int redact_key_is_sensitive(const char *key, size_t len)
{
	char norm[2 * KEY_MAX + 1];
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
		unsigned char c = (unsigned char)key[i];
		/* camelCase words are words too: AccountKey is account_key */
		if (isupper(c) && i > 0 &&
		    (islower((unsigned char)key[i - 1]) || isdigit((unsigned char)key[i - 1])))
			norm[n++] = '_';
		char l = (char)tolower(c);
		norm[n++] = l == '-' || l == '.' ? '_' : l;
	}
	norm[n] = '\0';
	if (!key_names_a_secret(norm, n, key, len))
		return 0;
	/* Checked last: most keys name no secret at all. */
	for (size_t i = 0; i < sizeof(harmless_suffixes) / sizeof(*harmless_suffixes); i++)
		if (ends_with(norm, n, harmless_suffixes[i]))
			return 0;
	return 1;
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

/* Not `= {0}`: that zeroes all MAX_SPANS slots, for every word of a shell string. */
static void spans_clear(struct spans *sp)
{
	sp->n = 0;
	sp->overflow = false;
}

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

static void find_header_at(const char *arg, size_t from, size_t len, struct spans *sp);

/* KEY=VALUE pairs: --password=X (value to the end) or a=1&token=X (to a separator). */
static void find_pairs(const char *arg, size_t len, struct spans *sp)
{
	for (size_t eq = 0; eq < len; eq++) {
		if (arg[eq] != '=')
			continue;
		size_t k = eq;
		while (k > 0 && is_key_char(arg[k - 1]))
			k--;
		if (k == eq)
			continue;
		if (!redact_key_is_sensitive(arg + k, eq - k)) {
			/* --header=Authorization: Bearer X */
			find_header_at(arg, eq + 1, len, sp);
			continue;
		}
		size_t end = eq + 1;
		if (k <= 2 && arg[0] == '-') {
			end = len; /* the whole rest of --flag=value is the value */
		} else if (k == 0) {
			/* NAME=value: to the end; an environment assignment (upper case)
			 * in a shell string ends at a space: `DB_PWD=x mysql db` */
			bool env_name = true;
			for (size_t c = 0; c < eq && env_name; c++)
				env_name = isupper((unsigned char)arg[c]) ||
					   isdigit((unsigned char)arg[c]) || arg[c] == '_';
			end = len;
			if (env_name) { /* to a space outside quotes: X="a b" next */
				char quote = 0;
				for (end = eq + 1;
				     end < len && (quote || !isspace((unsigned char)arg[end]));
				     end++)
					if (quote ? arg[end] == quote
						  : (arg[end] == '"' || arg[end] == '\''))
						quote = quote ? 0 : arg[end];
			}
		} else {
			while (end < len && !is_pair_separator(arg[end]))
				end++;
		}
		add_span(sp, eq + 1, end);
		eq = end;
	}
}

/* JSON and Python literals: {"password": "x"}, {'token': 'x'}, {"pin": 1234}, and
 * assignments to a quoted name: os.environ['HF_TOKEN'] = 'x'. */
static void find_quoted_keys(const char *arg, size_t len, struct spans *sp)
{
	for (size_t i = 0; i < len; i++) {
		char q = arg[i];
		if (q != '"' && q != '\'')
			continue;
		size_t k = i + 1, e = k;
		while (e < len && arg[e] != q && is_key_char(arg[e]))
			e++;
		if (e >= len || arg[e] != q || e == k)
			continue; /* not a plain quoted name: look again from its next byte */
		size_t c = e + 1;
		if (c < len && arg[c] == ']')
			c++; /* os.environ['HF_TOKEN'] = 'x', ENV["API_KEY"]="x" */
		while (c < len && isspace((unsigned char)arg[c]))
			c++;
		bool assigned = c < len && arg[c] == '=' && (c + 1 >= len || arg[c + 1] != '=');
		if (c >= len || (arg[c] != ':' && !assigned) ||
		    !redact_key_is_sensitive(arg + k, e - k)) {
			i = e - 1; /* the closing quote may open the next string */
			continue;
		}
		size_t v = c + 1;
		while (v < len && isspace((unsigned char)arg[v]))
			v++;
		size_t end = v;
		if (v < len && (arg[v] == '"' || arg[v] == '\'')) {
			char vq = arg[v++];
			for (end = v; end < len && arg[end] != vq; end++)
				if (arg[end] == '\\' && end + 1 < len)
					end++;
		} else {
			while (end < len && arg[end] != ',' && arg[end] != '}' &&
			       !isspace((unsigned char)arg[end]))
				end++;
		}
		if (end > v)
			add_span(sp, v, end);
		i = end;
	}
}

/* Webhook addresses whose path is the credential: what follows is the secret. */
static const char *const webhook_paths[] = {"hooks.slack.com/services/", "/api/webhooks/",
					    "/webhookb2/"};

/* A URL's address after the scheme, from `from` to where the word ends. */
static void find_webhook_secret(const char *arg, size_t from, size_t len, struct spans *sp)
{
	size_t end = from;

	while (end < len && !isspace((unsigned char)arg[end]) && arg[end] != '\'' &&
	       arg[end] != '"')
		end++;
	for (size_t k = 0; k < sizeof(webhook_paths) / sizeof(*webhook_paths); k++) {
		size_t n = strlen(webhook_paths[k]);
		const char *hook = memmem(arg + from, end - from, webhook_paths[k], n);
		if (hook && (size_t)(hook - arg) + n < end)
			add_span(sp, (size_t)(hook - arg) + n, end);
	}
}

/* scheme://user:secret@host and https://token@host, and webhook paths */
static void find_url_credentials(const char *arg, size_t len, struct spans *sp)
{
	const char *p = arg;

	/* Within len: a word of a shell string is not NUL-terminated where it ends. */
	while ((p = memmem(p, len - (size_t)(p - arg), "://", 3)) != NULL) {
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
		find_webhook_secret(arg, auth_start, len, sp);
		p += 3;
	}
}

/* "Authorization: Bearer X", "Cookie: a=b", openssl "pass:X", from offset `from`. */
static void find_header_at(const char *arg, size_t from, size_t len, struct spans *sp)
{
	size_t i = from;

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

static bool starts_with(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && strncmp(s, prefix, n) == 0;
}

static bool is_token_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.' || c == '+' ||
	       c == '/' || c == '=';
}

/* Tokens recognisable by their shape wherever they stand: GitHub, GitLab,
 * Slack, Stripe, Vault, Google, Hugging Face, AWS key ids, JWTs. */
struct token_shape {
	const char *prefix;
	unsigned char exact; /* the token's whole length, or 0: 16 or more */
	bool jwt;	     /* header.payload.signature: two dots */
};
static const struct token_shape token_shapes[] = {
    {"ghp_", 0, false},	    {"gho_", 0, false},	    {"ghu_", 0, false},
    {"ghs_", 0, false},	    {"ghr_", 0, false},	    {"github_pat_", 0, false},
    {"xoxb-", 0, false},    {"xoxp-", 0, false},    {"xoxa-", 0, false},
    {"xoxr-", 0, false},    {"xoxs-", 0, false},    {"xapp-", 0, false},
    {"glpat-", 0, false},   {"sk_live_", 0, false}, {"rk_live_", 0, false},
    {"sk_test_", 0, false}, {"rk_test_", 0, false}, {"hvs.", 0, false},
    {"hvb.", 0, false},	    {"hvr.", 0, false},	    {"AIza", 39, false},
    {"hf_", 37, false},	    {"pypi-AgE", 0, false}, {"AKIA", 0, false},
    {"ASIA", 0, false},	    {"eyJ", 0, true},
};
static bool shape_fits(const struct token_shape *t, const char *tok, size_t n)
{
	if (t->exact) {
		if (n != t->exact)
			return false;
		for (size_t j = strlen(t->prefix); j < n; j++)
			if (!isalnum((unsigned char)tok[j]) && tok[j] != '_' && tok[j] != '-')
				return false; /* a file name such as hf_model.bin is no token */
		return true;
	}
	size_t dots = 0;
	for (size_t j = 0; j < n; j++)
		dots += tok[j] == '.';
	/* Long enough to be a token, not a word that happens to start so. */
	return n >= 16 && (!t->jwt || dots >= 2);
}

static void find_token_shapes(const char *arg, size_t len, struct spans *sp)
{
	static uint32_t starting_with[256]; /* bit k: token_shapes[k] starts with the byte */
	static bool known;
	const size_t nshapes = sizeof(token_shapes) / sizeof(*token_shapes);
	_Static_assert(sizeof(token_shapes) / sizeof(*token_shapes) <= 32, "one bit per shape");

	if (!known) {
		for (size_t k = 0; k < nshapes; k++)
			starting_with[(unsigned char)token_shapes[k].prefix[0]] |= 1u << k;
		known = true;
	}
	for (size_t i = 0; i < len; i++) {
		uint32_t candidates = starting_with[(unsigned char)arg[i]];
		if (!candidates)
			continue;
		if (i > 0 && is_token_char(arg[i - 1]) && arg[i - 1] != '=' && arg[i - 1] != '/')
			continue; /* only at the start of a token */
		for (; candidates; candidates &= candidates - 1) {
			const struct token_shape *t = &token_shapes[__builtin_ctz(candidates)];
			/* The second byte first: words start with these letters too. */
			if (i + 1 >= len || arg[i + 1] != t->prefix[1] ||
			    !starts_with(arg + i, len - i, t->prefix))
				continue;
			size_t end = i;
			while (end < len && is_token_char(arg[end]))
				end++;
			if (shape_fits(t, arg + i, end - i)) {
				add_span(sp, i, end);
				i = end;
				break;
			}
		}
	}
	const char *pem = memmem(arg, len, "PRIVATE KEY-----", 16);
	if (pem) /* the key itself, header and all */
		add_span(sp, 0, len);
}

/* Every rule that finds a secret inside one argument (or word). */
static void find_secrets(const char *arg, size_t len, struct spans *sp)
{
	find_pairs(arg, len, sp);
	find_quoted_keys(arg, len, sp);
	find_url_credentials(arg, len, sp);
	find_header_at(arg, 0, len, sp);
	find_token_shapes(arg, len, sp);
}

/* Oracle's tools log in with USER/SECRET[@DB] (`sqlplus scott/x@orcl`, `expdp userid=scott/x`). */
static void find_oracle_login(const char *tool, const char *arg, size_t len, struct spans *sp)
{
	static const char *const tools[] = {"sqlplus", "sqlldr", "expdp", "impdp",
					    "exp",     "imp",	 "rman",  "dgmgrl"};
	bool oracle = false;

	if (!memchr(arg, '/', len))
		return;
	for (size_t i = 0; i < sizeof(tools) / sizeof(*tools) && !oracle; i++)
		oracle = tool[0] == tools[i][0] && !strcmp(tool, tools[i]);
	if (!oracle)
		return;
	size_t u = len > 7 && !strncasecmp(arg, "userid=", 7) ? 7 : 0, i = u;
	while (i < len &&
	       (isalnum((unsigned char)arg[i]) || arg[i] == '_' || arg[i] == '$' || arg[i] == '#'))
		i++;
	if (i == u || i >= len || arg[i] != '/')
		return; /* /nolog, @script.sql, "/ as sysdba": no secret */
	size_t end = ++i;
	while (end < len && arg[end] != '@' && !isspace((unsigned char)arg[end]))
		end++;
	if (end > i)
		add_span(sp, i, end);
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
		/* First bytes first: every argument of every exec comes through here. */
		if (r->glued != glued || arg[0] != r->flag[0] || tool[0] != r->tool[0] ||
		    tool[1] != r->tool[1] || strcmp(tool, r->tool) != 0)
			continue;
		size_t fl = strlen(r->flag);
		if (glued ? strncmp(arg, r->flag, fl) == 0 && arg[fl] != '\0'
			  : strcmp(arg, r->flag) == 0)
			return r;
	}
	return NULL;
}

/*
 * A tool whose own rules say where its secret is. Such a name further along a
 * command line starts that tool's arguments: wrappers (`sudo -u app mysql -pX`,
 * `env A=1`, `timeout 10`, `srun`, `docker exec c`) and shell keywords (`then`,
 * `do`, `{`, `time`, `exec`) stand before the command itself.
 */
static bool is_rule_tool(const char *name)
{
	/* First bytes first: every argument of every exec comes through here. */
	if ((name[0] == 'g' && !strcmp(name, "git")) ||
	    (name[0] == 'h' && !strcmp(name, "htpasswd")) ||
	    (name[0] == 's' && !strcmp(name, "sqlplus")))
		return true;
	for (size_t i = 0; i < sizeof(tool_rules) / sizeof(*tool_rules); i++)
		if (name[0] == tool_rules[i].tool[0] && name[0] &&
		    name[1] == tool_rules[i].tool[1] && !strcmp(name, tool_rules[i].tool))
			return true;
	return false;
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

/* `aws configure set aws_secret_access_key X`, `git config user.password X`. */
static bool after_secret_name(const char *tool, const char *prev2, const char *prev)
{
	if (!prev || prev[0] == '-' || !((prev2 && !strcmp(prev2, "set")) || !strcmp(tool, "git")))
		return false;
	for (const char *c = prev; *c; c++)
		if (!is_key_char(*c))
			return false; /* a setting's name, not a URL or a sentence */
	return redact_key_is_sensitive(prev, strlen(prev));
}

/*
 * A command that stores secrets (`gh secret set`, `kubectl create secret`,
 * `fly secrets set`, `az keyvault secret set`, `vault kv put`, `vault write`)
 * is given values that are secrets whatever their names: NAME=VALUE words,
 * --from-literal=NAME=VALUE, --body/--value VALUE. Reading one (`kubectl get
 * secret`) names no verb and is left alone.
 */
struct secret_store {
	bool opened; /* a `secret`, `secrets` or `kv` word, or vault itself */
	bool verb;   /* a word that writes: set, create, put, add, ... */
};

static bool is_value_flag(const char *word, size_t len)
{
	static const char *const flags[] = {"--body", "-b", "--value", "--from-literal", "--data"};

	return in_list(word, len, flags, sizeof(flags) / sizeof(*flags));
}

static void secret_store_see(struct secret_store *st, const char *word, size_t len)
{
	static const char *const verbs[] = {"set",   "create", "put",	"add",
					    "patch", "update", "write", "edit"};

	/* Lengths first: every argument of every exec comes through here. */
	if ((len == 6 || len == 7) && !memcmp(word, "secret", 6) && (len == 6 || word[6] == 's'))
		st->opened = true;
	else if (len == 2 && word[0] == 'k' && word[1] == 'v')
		st->opened = true;
	else if (len >= 5 && !memcmp(word + len - 5, "vault", 5) &&
		 (len == 5 || word[len - 6] == '/'))
		st->opened = true;
	else if (len >= 3 && len <= 6 && in_list(word, len, verbs, sizeof(verbs) / sizeof(*verbs)))
		st->verb = true;
}

/* Where the secret in ARG starts under a secret store's command, or -1. */
static long secret_store_value(const struct secret_store *st, const char *prev, const char *arg,
			       size_t len)
{
	if (!st->opened || !st->verb)
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

static bool is_shell_separator(char c)
{
	return c == ';' || c == '|' || c == '&' || c == '(' || c == ')' || c == '\n' || c == '`';
}

static void find_shell_words(const char *arg, size_t len, struct spans *sp, int depth);

/*
 * A quoted shell string inside a shell string (`bash -c 'sh -c "mysql -pX"'`,
 * `ssh h 'sudo -u app sh -c "..."'`): the inner shell sees the word with its
 * quotes removed and its escapes undone, so that is what its words are read
 * from; what they hide is mapped back onto the quoted word.
 */
static void find_nested_words(const char *word, size_t len, struct spans *sp, int depth)
{
	char inner[TRACER_ARGV_MAX];
	uint16_t at[TRACER_ARGV_MAX]; /* inner[k] is word[at[k]] */
	size_t n = 0;
	char quote = 0;
	bool nested = false;

	if (depth >= NEST_MAX || len > sizeof(inner))
		return;
	size_t q = 0;
	while (q < len && word[q] != '\'' && word[q] != '"' && word[q] != '\\')
		q++;
	if (q == len)
		return; /* unquoted: it ended at the first space, so it holds no command */
	for (size_t i = 0; i < len; i++) {
		char c = word[i];
		if (!quote && c == '$' && i + 1 < len && word[i + 1] == '\'') {
			quote = '$'; /* $'...': bash's quotes with C escapes */
			i++;
			continue;
		}
		if (c == '\\' && quote != '\'' && i + 1 < len &&
		    (!quote || quote == '$' || strchr("\"\\$`", word[i + 1]))) {
			c = word[++i]; /* inside double quotes only these are escapes */
			if (quote == '$' && (c == 'n' || c == 't'))
				c = c == 'n' ? '\n' : '\t';
		} else if (quote ? c == quote || (quote == '$' && c == '\'')
				 : (c == '\'' || c == '"')) {
			quote = quote ? 0 : c;
			continue;
		}
		nested |= isspace((unsigned char)c) || is_shell_separator(c);
		inner[n] = c;
		at[n++] = (uint16_t)i;
	}
	if (!nested)
		return; /* one word: the caller's rules have seen it all */
	struct spans found;
	spans_clear(&found);
	find_shell_words(inner, n, &found, depth + 1);
	for (unsigned k = 0; k < found.n; k++) {
		size_t s = found.s[k].start, e = found.s[k].end;
		if (e > s)
			add_span(sp, at[s], (size_t)at[e - 1] + 1);
	}
	if (found.overflow)
		add_span(sp, 0, len);
}

/*
 * A shell string (`bash -c '...'`, ProxyCommand=...): each word gets the rules
 * an argument gets, with its own command's tool and the word before it.
 */
static void find_shell_words(const char *arg, size_t len, struct spans *sp, int depth)
{
	char tool[64] = "", prev[KEY_MAX + 1] = "", prev2[KEY_MAX + 1] = "", word[KEY_MAX + 1];
	bool at_command = true;
	int after_secrets_set = -1; /* words since `secrets set`: NAME, then VALUE */
	struct secret_store store = {false, false};
	size_t i = 0;

	while (i < len) {
		/* A newline ends a command, like ';': it is no mere space. */
		while (i < len && isspace((unsigned char)arg[i]) && arg[i] != '\n')
			i++;
		if (i < len && is_shell_separator(arg[i])) {
			at_command = true;
			after_secrets_set = -1;
			store = (struct secret_store){false, false};
			prev[0] = prev2[0] = '\0';
			i++;
			continue;
		}
		size_t start = i;
		char quote = 0;
		while (i < len && (quote || (!isspace((unsigned char)arg[i]) &&
					     !is_shell_separator(arg[i])))) {
			if (arg[i] == '\\' && quote != '\'' && i + 1 < len) {
				i += 2; /* \" does not end a quote, \; does not end a word */
				continue;
			}
			if (quote ? arg[i] == quote : (arg[i] == '\'' || arg[i] == '"'))
				quote = quote ? 0 : arg[i];
			i++;
		}
		size_t ws = start, we = i;
		if (we - ws >= 2 && (arg[ws] == '\'' || arg[ws] == '"') && arg[we - 1] == arg[ws]) {
			ws++; /* 'secret': the quotes are the word's, not the secret's */
			we--;
		}
		if (we == ws) { /* '': an empty value still stands in its place */
			memcpy(prev2, prev, strlen(prev) + 1);
			memcpy(prev, "''", 3);
			continue;
		}
		size_t n = we - ws < KEY_MAX ? we - ws : KEY_MAX;
		memcpy(word, arg + ws, n);
		word[n] = '\0';
		const char *eq = at_command ? strchr(word, '=') : NULL;
		if (eq && (word[0] == '-' || strncasecmp(word, "proxycommand=", 13) == 0)) {
			/* ssh -o ProxyCommand=CMD, sbatch --wrap="CMD": the command starts
			 * inside the word */
			snprintf(tool, sizeof(tool), "%s", path_basename(eq + 1));
			at_command = false;
		} else if ((at_command && !strchr(word, '=')) ||
			   is_rule_tool(path_basename(word))) {
			snprintf(tool, sizeof(tool), "%s", path_basename(word));
			at_command = false;
		}
		const struct tool_rule *glued = tool_rule_for(tool, word, true);
		long stored = secret_store_value(&store, prev[0] ? prev : NULL, word, n);
		if (stored >= 0 && ws + (size_t)stored < we)
			add_span(sp, ws + (size_t)stored, we);
		else if (detached_rule(tool, prev[0] ? prev : NULL) ||
			 after_secret_name(tool, prev2[0] ? prev2 : NULL, prev[0] ? prev : NULL) ||
			 after_secrets_set == 1)
			add_span(sp, ws, we);
		else if (glued)
			add_span(sp, ws + strlen(glued->flag), we);
		else {
			struct spans inner, nested;
			spans_clear(&inner);
			spans_clear(&nested);
			find_secrets(arg + ws, we - ws, &inner);
			find_oracle_login(tool, arg + ws, we - ws, &inner);
			for (unsigned k = 0; k < inner.n; k++)
				if (inner.s[k].end >
				    inner.s[k].start) /* a word's empty value: no secret */
					add_span(sp, ws + inner.s[k].start, ws + inner.s[k].end);
			find_nested_words(arg + start, i - start, &nested, depth);
			for (unsigned k = 0; k < nested.n; k++) /* quotes and all */
				add_span(sp, start + nested.s[k].start, start + nested.s[k].end);
			if (inner.overflow || nested.overflow)
				add_span(sp, start, i);
		}
		secret_store_see(&store, word, n);
		if (!strcmp(prev, "secrets") && !strcmp(word, "set"))
			after_secrets_set = 0;
		else if (after_secrets_set >= 0)
			after_secrets_set++;
		memcpy(prev2, prev, strlen(prev) + 1);
		memcpy(prev, word, n + 1);
	}
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

/* user:secret keeps the user (arg up to colon) only if no other rule sees a secret in it. */
static const char *user_part_end(const char *arg, const char *colon)
{
	struct spans sp;
	spans_clear(&sp);

	if (!colon)
		return NULL;
	find_secrets(arg, (size_t)(colon - arg), &sp);
	return sp.n || sp.overflow ? NULL : colon;
}

static size_t redact_one(const char *tool, const char *prev2, const char *prev, const char *arg,
			 char *out, size_t cap, unsigned *count)
{
	size_t len = strlen(arg);
	const struct tool_rule *r = detached_rule(tool, prev);
	struct spans sp;
	spans_clear(&sp);

	if (!r && after_secret_name(tool, prev2, prev))
		r = &detached_secret;
	if (r) {
		const char *colon =
		    user_part_end(arg, r->user_sep ? strchr(arg, r->user_sep) : NULL);
		(*count)++;
		return colon ? put(out, cap, arg, (size_t)(colon - arg) + 1, REDACTED)
			     : put(out, cap, "", 0, REDACTED);
	}
	r = tool_rule_for(tool, arg, true);
	if (r) {
		const char *colon = user_part_end(
		    arg, r->user_sep ? strchr(arg + strlen(r->flag), r->user_sep) : NULL);
		(*count)++;
		return put(out, cap, arg, colon ? (size_t)(colon - arg) + 1 : strlen(r->flag),
			   REDACTED);
	}
	/* --user=alice:X for a tool whose --user takes a secret */
	const char *eq = arg[0] == '-' ? strchr(arg, '=') : NULL;
	if (eq) {
		char flag[64];
		size_t fl = (size_t)(eq - arg);
		if (fl < sizeof(flag)) {
			memcpy(flag, arg, fl);
			flag[fl] = '\0';
			r = tool_rule_for(tool, flag, false);
		}
		if (r) {
			const char *colon =
			    user_part_end(arg, r->user_sep ? strchr(eq + 1, r->user_sep) : NULL);
			(*count)++;
			return put(out, cap, arg, (size_t)((colon ? colon : eq) - arg) + 1,
				   REDACTED);
		}
	}
	/* Words of a shell string get the word rules; the whole argument, the rest. */
	if (strpbrk(arg, " \t\n;|&"))
		find_shell_words(arg, len, &sp, 0);
	find_secrets(arg, len, &sp);
	find_oracle_login(tool, arg, len, &sp);
	if (sp.overflow) {
		(*count)++;
		return put(out, cap, "", 0, REDACTED);
	}
	*count += sp.n;
	return write_redacted(arg, len, &sp, out, cap);
}

/*
 * Secrets known by their place, not a flag: `htpasswd -b FILE USER PASSWORD`
 * (behind `sudo` too), `mc alias set NAME URL KEY SECRET` (or `mc config
 * host add ...`) and `nextflow secrets set NAME VALUE` (also in the argv of
 * the java its launcher execs). The argument's index, or 0.
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

unsigned redact_argv(char *const *argv, unsigned argc, char *out, size_t out_size, char **out_argv)
{
	unsigned count = 0;
	size_t used = 0;
	const char *tool = argc ? path_basename(argv[0]) : "";
	unsigned positional = positional_secret(argv, argc);
	struct secret_store store = {false, false};

	for (unsigned i = 0; i < argc; i++) {
		if (i && is_rule_tool(path_basename(argv[i])))
			tool = path_basename(argv[i]); /* sudo -u app mysql -pX */
		const char *prev = i ? argv[i - 1] : NULL;
		const char *prev2 = i > 1 ? argv[i - 2] : NULL;
		size_t len = strlen(argv[i]);
		long stored = i ? secret_store_value(&store, prev, argv[i], len) : -1;
		size_t n;
		if (i && i == positional)
			n = (count++, put(out + used, out_size - used, "", 0, REDACTED));
		else if (stored >= 0 && (size_t)stored < len)
			n = (count++,
			     put(out + used, out_size - used, argv[i], (size_t)stored, REDACTED));
		else
			n = redact_one(tool, prev2, prev, argv[i], out + used, out_size - used,
				       &count);
		secret_store_see(&store, argv[i], len);
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
