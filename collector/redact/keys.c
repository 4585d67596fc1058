/*
 * Does a name say credential? An option (--db-pass, -storepass, /password:),
 * a variable (MYSQL_PWD, GITHUB_PAT), a setting (user.password), a code
 * string's name (Entrez.api_key): lower-cased, '-' and '.' read as '_', a
 * camelCase boundary as '_' (AccountKey is account_key), then read word by
 * word. Its value decides only for the ambiguous words (pass, key, auth, sig):
 * `make PASS=2`, `sort --key=1,1`, `--key runs/a.bam` keep theirs.
 */
#include <ctype.h>
#include <string.h>

#include "collector/redact/internal.h"

/* Substrings that mark secrets wherever they stand, glued or not (DBPASSWORD). */
static const char *const secret_words[] = {
    "password",	  "passwd",   "passphrase", "passcode",		"secret",     "token",
    "apikey",	  "api_key",  "accesskey",  "access_key",	"privatekey", "private_key",
    "credential", "auth_key", "authkey",    "session_key",	"signature",  "extraheader",
    "storepass",  "keypass",  "bearer",	    "x_amz_credential", "secretkey",  "clientkey",
};
/* Words that are secrets when they stand alone: --src-creds, DB_PWD, x_auth. */
static const char *const secret_whole_words[] = {
    "pw", "psk", "cred", "creds", "cookie", "authorization", "oauth", "authtoken", "otp", "totp",
};
/* Words that name a secret or something else: `--pass 2`, `--key=1,1`, `--auth basic`,
 * `--pwd /tmp` (a directory). */
static const char *const ambiguous_words[] = {"pass", "key", "auth", "sig", "pwd"};
/* The last word names where a secret is, how it is given or its limits, not the secret. */
static const char *const harmless_last_words[] = {
    "file",    "files",	   "path",     "paths",	  "stdin",  "env",	 "cmd",	     "command",
    "prompt",  "dir",	   "length",   "len",	  "type",   "url",	 "uri",	     "id",
    "ids",     "name",	   "names",    "arn",	  "fd",	    "method",	 "mode",     "format",
    "jar",     "store",	   "helper",   "manager", "policy", "count",	 "size",     "bits",
    "limit",   "timeout",  "ttl",      "expiry",  "min",    "max",	 "rounds",   "algorithm",
    "version", "location", "endpoint", "server",  "host",   "port",	 "user",     "username",
    "realm",   "scope",	   "scopes",   "issuer",  "region", "threshold", "provider", "backend",
    "column",  "field",
};
/* Words anywhere that make the name a count: --tokens-per-sample, --max-token-length. */
static const char *const counting_words[] = {"tokens", "max",	"min",	  "num",
					     "per",    "limit", "length", "count"};
/* First words of a switch that takes no value: --ask-pass, --no-password. */
static const char *const switch_words[] = {"ask",     "no",    "prompt", "require", "enable",
					   "disable", "allow", "with",	 "skip"};
/* Glued endings that name where the secret is: --keyfile, --passfile, PWFILE. */
static const char *const harmless_glued_endings[] = {"file", "path", "dir", "fd"};

/* What kind of key the word before `key` names when the key is not a secret:
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

#define N(list) (sizeof(list) / sizeof(*(list)))

bool in_list(const char *word, size_t len, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(list[i]) == len && memcmp(word, list[i], len) == 0)
			return true;
	return false;
}

bool is_key_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

/* Words before `token` that make it a tokenizer's symbol, not a credential:
 * --eos-token "</s>", --pad-token-id, --image-token "<image>". */
static const char *const symbol_kinds[] = {"eos", "bos",   "pad",     "unk",   "sep",
					   "cls", "mask",  "special", "start", "stop",
					   "end", "image", "audio",   "video", "split"};

/* A name split into words: norm is lower case with '_' between words. */
struct name {
	char norm[2 * KEY_MAX + 1];
	size_t n;
	bool upper; /* an environment-style name: API_KEY */
};

/* eos_token: blank the word out, as "tokeniz" is, so that only another word can
 * make the name a secret. */
static void blank_symbol_tokens(struct name *nm)
{
	char *s = nm->norm;
	size_t prev = 0, prev_len = 0, start = 0;

	for (size_t i = 0; i <= nm->n; i++) {
		if (i < nm->n && s[i] != '_')
			continue;
		size_t len = i - start;
		if ((len == 5 || (len == 6 && s[start + 5] == 's')) &&
		    !memcmp(s + start, "token", 5) && prev_len &&
		    in_list(s + prev, prev_len, symbol_kinds,
			    sizeof(symbol_kinds) / sizeof(*symbol_kinds)))
			memset(s + start, '#', len);
		if (len) {
			prev = start;
			prev_len = len;
		}
		start = i + 1;
	}
}

/* 0, or -1 for a name too long to tell (sensitive: when in doubt, redact). */
static int name_normalise(struct name *nm, const char *key, size_t len)
{
	nm->n = 0;
	nm->upper = true;
	while (len && (*key == '-' || *key == '/')) {
		key++;
		len--;
	}
	if (len > KEY_MAX)
		return -1;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)key[i];
		nm->upper &= !islower(c);
		/* camelCase words are words too: AccountKey is account_key */
		if (isupper(c) && i > 0 &&
		    (islower((unsigned char)key[i - 1]) || isdigit((unsigned char)key[i - 1])))
			nm->norm[nm->n++] = '_';
		char l = (char)tolower(c);
		nm->norm[nm->n++] = l == '-' || l == '.' || l == ' ' ? '_' : l;
	}
	nm->norm[nm->n] = '\0';
	/* A tokenizer is not a token; blank the word out so "token" does not match in
	 * it, while a secret word elsewhere in the key still does. */
	for (char *t = strstr(nm->norm, "tokeniz"); t; t = strstr(t, "tokeniz"))
		memset(t, '#', 7);
	blank_symbol_tokens(nm);
	return 0;
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
			bool harmless_kind = in_list(norm + prev_start, prev_len,
						     harmless_key_kinds, N(harmless_key_kinds));
			bool attribute = next_len > 0 && in_list(norm + next, next_len,
								 key_attributes, N(key_attributes));
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

/* The words of the name, for the word rules: what they say. */
struct words_say {
	bool secret, ambiguous, counting, harmless_last, switch_first;
};

static void read_words(const struct name *nm, struct words_say *w)
{
	const char *s = nm->norm;
	size_t start = 0, last_start = 0, last_len = 0;
	bool first = true;

	for (size_t i = 0; i <= nm->n; i++) {
		if (i < nm->n && s[i] != '_')
			continue;
		size_t len = i - start;
		if (len) {
			const char *word = s + start;
			w->secret |= in_list(word, len, secret_whole_words, N(secret_whole_words));
			/* --sort-key, --public-key: a key of a kind that is no secret */
			bool kind_before = len == 3 && !memcmp(word, "key", 3) && !first &&
					   in_list(s + last_start, last_len, harmless_key_kinds,
						   N(harmless_key_kinds));
			w->ambiguous |=
			    !kind_before && in_list(word, len, ambiguous_words, N(ambiguous_words));
			w->counting |= in_list(word, len, counting_words, N(counting_words));
			if (first)
				w->switch_first = in_list(word, len, switch_words, N(switch_words));
			first = false;
			last_start = start;
			last_len = len;
		}
		start = i + 1;
	}
	w->harmless_last = last_len && in_list(s + last_start, last_len, harmless_last_words,
					       N(harmless_last_words));
	if (last_len == 3 && !memcmp(s + last_start, "pat", 3) && last_start > 0)
		w->secret = true; /* GITHUB_PAT, R's token variable */
}

/* honour_switch: whether a switch's first word (--no-password) makes the name
 * plain; a switch given a value that is no setting is judged without it. */
static enum key_class classify_name(const struct name *nm, bool honour_switch)
{
	struct words_say w = {false, false, false, false, false};
	bool strong = false;

	for (size_t i = 0; i < N(secret_words) && !strong; i++)
		strong = strstr(nm->norm, secret_words[i]) != NULL;
	read_words(nm, &w);
	strong |= w.secret || names_a_key(nm->norm, nm->n);
	/* Environment-style names ending so: API_KEY, STRIPE_KEY, DBPASS, MYSQLPWD. */
	if (nm->upper && (ends_with(nm->norm, nm->n, "_key") || ends_with(nm->norm, nm->n, "pwd") ||
			  ends_with(nm->norm, nm->n, "_pass") || ends_with(nm->norm, nm->n, "pw")))
		strong = true;
	if (!strong && !w.ambiguous)
		return KEY_PLAIN;
	if (w.harmless_last || w.counting || (honour_switch && w.switch_first))
		return KEY_PLAIN;
	for (size_t i = 0; i < N(harmless_glued_endings); i++)
		if (ends_with(nm->norm, nm->n, harmless_glued_endings[i]))
			return KEY_PLAIN;
	return strong ? KEY_SECRET : KEY_AMBIGUOUS;
}

static enum key_class classify(const struct name *nm)
{
	return classify_name(nm, true);
}

/* --disable-password=X, --no-auth=X: a credential name made a switch by its first
 * word, as it would be judged without that word. */
static enum key_class switch_classify(const char *key, size_t len)
{
	struct name nm;

	if (name_normalise(&nm, key, len) != 0)
		return KEY_SECRET;
	if (nm.n == 0 || classify_name(&nm, true) != KEY_PLAIN)
		return KEY_PLAIN;
	return classify_name(&nm, false);
}

enum key_class key_classify(const char *key, size_t len)
{
	struct name nm;

	if (name_normalise(&nm, key, len) != 0)
		return KEY_SECRET;
	if (nm.n == 0)
		return KEY_PLAIN;
	return classify(&nm);
}

int redact_key_is_sensitive(const char *key, size_t len)
{
	return key_classify(key, len) != KEY_PLAIN;
}

/* /etc/x.pw, ~/.vnc/passwd, ./k: where a secret is, for any name. Only the
 * characters of paths: a value with others (a colon, a quote) may be a secret. */
static bool value_is_path(const char *v, size_t len)
{
	if (len < 2)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)v[i]) && !strchr("/._-~+@%", v[i]))
			return false;
	if (v[0] == '~' || (v[0] == '.' && (v[1] == '/' || v[1] == '.')))
		return v[1] == '/' || (len > 2 && v[2] == '/');
	return v[0] == '/' && memchr(v + 1, '/', len - 1) != NULL;
}

/* A value that is not a secret for an ambiguous name: a path, a file name, a
 * small number, a sort key (1,1 or 2.3), a shell variable not yet expanded. */
static bool value_is_reference(const char *v, size_t len)
{
	size_t digits = 0, specials = 0, letters = 0;

	if (len == 0)
		return false;
	if ((len == 1 && v[0] == '.') || (len == 2 && v[0] == '.' && v[1] == '.'))
		return true; /* --pwd . */
	if (v[0] == '/' || v[0] == '~' || (len > 1 && v[0] == '.' && (v[1] == '/' || v[1] == '.')))
		return true;
	if (v[0] == '$' && len > 1 && (isalpha((unsigned char)v[1]) || v[1] == '{' || v[1] == '_'))
		return true;
	for (size_t i = 0; i < len; i++) {
		digits += isdigit((unsigned char)v[i]) != 0;
		specials += v[i] == ',' || v[i] == '.' || v[i] == ':';
		letters += isalpha((unsigned char)v[i]) != 0;
	}
	if (digits == len && len <= 4)
		return true;
	/* 1,1 2.3 2,2n: sort's key fields, with their modifier letters */
	if (isdigit((unsigned char)v[0]) && digits + specials + letters == len && specials &&
	    len <= 12)
		return true;
	/* name.ext: a letter before the dot, a short extension with a letter */
	const char *dot = memrchr(v, '.', len);
	if (!dot || dot == v || len - (size_t)(dot - v) - 1 == 0 || len - (size_t)(dot - v) - 1 > 5)
		return false;
	bool letter = false;
	for (const char *c = dot + 1; c < v + len; c++) {
		if (!isalnum((unsigned char)*c))
			return false;
		letter |= isalpha((unsigned char)*c) != 0;
	}
	return letter && isalpha((unsigned char)dot[-1]);
}

/* password=on (qemu's -vnc), --auth=false, -pass stdin, --password -: a switch's
 * setting or where the secret comes from, not a secret. */
static bool value_is_switch(const char *v, size_t len)
{
	static const char *const settings[] = {"on", "off",  "true", "false", "yes",
					       "no", "none", "null", "stdin", "-"};

	return len <= 5 && in_list(v, len, settings, N(settings));
}

/* 0.1, 512, -3: a number. */
static bool value_is_number(const char *v, size_t len)
{
	size_t i = len && v[0] == '-' ? 1 : 0, dots = 0, digits = 0;

	for (; i < len; i++) {
		if (v[i] == '.')
			dots++;
		else if (isdigit((unsigned char)v[i]))
			digits++;
		else
			return false;
	}
	return digits && dots <= 1;
}

/* --token-dropout, --token-budget: a name that is a secret by "token" alone,
 * whose number is a size or a rate (a token is never a number). */
static bool only_token_says_secret(const char *key, size_t klen)
{
	struct name nm;

	if (name_normalise(&nm, key, klen) != 0 || !strstr(nm.norm, "token"))
		return false;
	for (char *t = strstr(nm.norm, "token"); t; t = strstr(t, "token"))
		memset(t, '#', 5);
	return classify(&nm) == KEY_PLAIN;
}

/* code-server --auth password, --auth basic: how to authenticate, for an ambiguous name. */
static bool value_is_auth_mode(const char *v, size_t len)
{
	static const char *const modes[] = {
	    "basic", "digest",	 "bearer",	  "token", "password", "oauth",	  "oauth2",
	    "ldap",  "kerberos", "negotiate",	  "ntlm",  "any",      "anyauth", "sasl",
	    "plain", "md5",	 "scram-sha-256", "jwt",   "cert",     "tls",	  "x509",
	    "iam",   "gss",	 "trust",	  "peer",  "ident"};

	return len <= 13 && in_list(v, len, modes, N(modes));
}

/* y, n, 0, 1: what else a switch is set to. */
static bool value_is_switch_setting(const char *v, size_t len)
{
	static const char *const settings[] = {"y", "n", "0", "1", "always", "never", "auto"};

	return value_is_switch(v, len) || in_list(v, len, settings, N(settings));
}

bool key_hides_value(const char *key, size_t klen, const char *value, size_t vlen)
{
	if (value_is_switch(value, vlen))
		return false;
	enum key_class class = key_classify(key, klen);

	/* A switch takes a setting; anything else given to one that names a credential
	 * is judged as that credential's value (when in doubt we redact). */
	if (class == KEY_PLAIN && !value_is_switch_setting(value, vlen))
		class = switch_classify(key, klen);
	switch (class) {
	case KEY_SECRET:
		if (value_is_number(value, vlen) && (vlen <= 4 || memchr(value, '.', vlen)) &&
		    only_token_says_secret(key, klen))
			return false;
		return !value_is_path(value, vlen);
	case KEY_AMBIGUOUS:
		return !value_is_reference(value, vlen) && !value_is_auth_mode(value, vlen);
	default:
		return false;
	}
}

bool key_keeps_user(const char *key, size_t len)
{
	struct name nm;

	return name_normalise(&nm, key, len) == 0 && strstr(nm.norm, "cred") != NULL;
}

bool key_reads_secret_stdin(const char *word, size_t len)
{
	struct name nm;

	if (len < 6 || name_normalise(&nm, word, len) != 0 || !ends_with(nm.norm, nm.n, "stdin"))
		return false;
	size_t n = nm.n - 5;
	while (n && nm.norm[n - 1] == '_')
		n--;
	nm.norm[n] = '\0';
	nm.n = n;
	return n && classify(&nm) != KEY_PLAIN;
}
