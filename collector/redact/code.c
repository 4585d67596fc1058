/*
 * Code strings (python -c, Rscript -e, node --eval, perl -e, and any
 * argument): a quoted literal given to a name that says credential, with the
 * name quoted ({"password": "x"}, os.environ['HF_TOKEN'] = 'x') or not
 * (Entrez.api_key = 'x', Sys.setenv(GITHUB_PAT = "x"), token <- "x",
 * $ENV{API_TOKEN}='x', {apiKey: 'x'}, auth=('user', 'x')), the arguments of a
 * login call (login("u", "x"), new PDO($dsn, "u", "x")), SQL's PASSWORD 'x'
 * and IDENTIFIED BY 'x', and expect's send "x" after a password prompt.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "collector/redact/internal.h"

/* JSON and Python literals: {"password": "x"}, {'token': 'x'}, {"pin": 1234}, and
 * assignments to a quoted name: os.environ['HF_TOKEN'] = 'x'. */
static size_t skip_space_back(const char *a, size_t i)
{
	while (i > 0 && isspace((unsigned char)a[i - 1]))
		i--;
	return i;
}

void find_quoted_keys(const char *arg, size_t len, struct spans *sp)
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
		size_t b = skip_space_back(arg, i);
		bool compared = b >= 2 && arg[b - 1] == '=' && strchr("=!<>", arg[b - 2]);
		if (c >= len || (arg[c] != ':' && !assigned) || compared ||
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

static bool is_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '$' || c == '@';
}

/*
 * Back from a literal opening at q: across the elements before it in a tuple
 * or list, to the bracket that opens it. The bracket's offset, or q if the
 * literal is in none; *first says whether no element came before it.
 */
static size_t tuple_start(const char *a, size_t q, bool *first)
{
	size_t i = skip_space_back(a, q);

	*first = true;
	while (i > 0 && a[i - 1] == ',') {
		*first = false;
		i = skip_space_back(a, i - 1);
		if (i > 0 && (a[i - 1] == '\'' || a[i - 1] == '"')) {
			char quote = a[i - 1];
			const char *open = i > 1 ? memrchr(a, quote, i - 1) : NULL;
			if (!open)
				return q;
			i = (size_t)(open - a);
		} else {
			while (i > 0 && is_name_char(a[i - 1]))
				i--;
		}
		i = skip_space_back(a, i);
	}
	return i > 0 && (a[i - 1] == '(' || a[i - 1] == '[') ? i - 1 : q;
}

/* The name a literal opening at q is given to: its start and length, or 0. */
static size_t assigned_name(const char *a, size_t q, size_t *name_start)
{
	size_t i = skip_space_back(a, q);

	if (i == 0)
		return 0;
	/* NAME = 'x', NAME: 'x', NAME := 'x', NAME <- 'x', NAME => 'x'; not == or != */
	if (a[i - 1] == '=' || a[i - 1] == ':') {
		i--;
		if (i > 0 && (a[i - 1] == ':' || a[i - 1] == '=' || a[i - 1] == '!' ||
			      a[i - 1] == '<' || a[i - 1] == '>'))
			return 0;
	} else if (a[i - 1] == '-' && i > 1 && a[i - 2] == '<') {
		i -= 2;
	} else if (a[i - 1] == '>' && i > 1 && a[i - 2] == '=') {
		i -= 2;
	} else {
		return 0;
	}
	i = skip_space_back(a, i);
	while (i > 0 && (a[i - 1] == ']' || a[i - 1] == '}'))
		i--; /* $ENV{NAME}, but not ENV['NAME']: find_quoted_keys has those */
	size_t end = i;
	while (i > 0 && is_name_char(a[i - 1]))
		i--;
	*name_start = i;
	return end - i;
}

/* SQL: PASSWORD 'x' (ALTER USER, CREATE ROLE), IDENTIFIED BY 'x' (MySQL, Oracle). */
static bool after_sql_password(const char *a, size_t q)
{
	size_t i = skip_space_back(a, q), end = i;

	if (i == q)
		return false; /* no space: not a keyword before a literal */
	while (i > 0 && isalpha((unsigned char)a[i - 1]))
		i--;
	if (end - i == 8 && !strncasecmp(a + i, "password", 8))
		return true;
	if (end - i != 2 || strncasecmp(a + i, "by", 2) != 0)
		return false;
	size_t j = skip_space_back(a, i);
	return j < i && j >= 10 && !strncasecmp(a + j - 10, "identified", 10);
}

/* login("user", "x"), new PDO($dsn, "u", "x"), HTTPBasicAuth('u', 'x'), SQL's
 * PASSWORD('x'): calls
 * whose arguments after the first literal are credentials. */
static bool is_login_call(const char *a, size_t open)
{
	static const char *const calls[] = {"login",
					    "auth",
					    "authenticate",
					    "signin",
					    "sign_in",
					    "pdo",
					    "httpbasicauth",
					    "basicauth",
					    "basic_auth",
					    "set_password",
					    "setpassword",
					    "credentials",
					    "usernamepasswordcredentials",
					    "password"};
	char name[32];
	size_t end = open, i = open, n = 0;

	while (i > 0 && (isalnum((unsigned char)a[i - 1]) || a[i - 1] == '_'))
		i--;
	if (end - i == 0 || end - i >= sizeof(name))
		return false;
	for (size_t k = i; k < end; k++)
		name[n++] = (char)tolower((unsigned char)a[k]);
	return in_list(name, n, calls, sizeof(calls) / sizeof(*calls));
}

/* expect's `send "x"` after a password prompt: expect "password:"; send "x\r". */
static bool sent_at_a_prompt(const char *a, size_t q)
{
	size_t i = skip_space_back(a, q);

	if (i < 4 || strncmp(a + i - 4, "send", 4) != 0 || (i > 4 && is_key_char(a[i - 5])))
		return false;
	return memmem(a, i, "assword", 7) || memmem(a, i, "assphrase", 9) || memmem(a, i, "PIN", 3);
}

/* Whether the literal a[q+1, end) is a secret by what it is given to. */
static bool literal_is_secret(const char *a, size_t len, size_t q, size_t end)
{
	bool first;
	size_t at = tuple_start(a, q, &first), name = 0;
	size_t after = end + 1;

	while (after < len && isspace((unsigned char)a[after]))
		after++;
	bool more = after < len && a[after] == ',';
	if (at != q && a[at] == '(' && is_login_call(a, at))
		return !first || !more; /* the user, first of several, stays */
	/* auth=('user', 'x'): likewise */
	if (at != q && first && more)
		return false;
	size_t nlen = assigned_name(a, at, &name);
	return (nlen && key_hides_value(a + name, nlen, a + q + 1, end - q - 1)) ||
	       after_sql_password(a, q) || sent_at_a_prompt(a, q);
}

void find_code_assignments(const char *a, size_t len, struct spans *sp)
{
	for (size_t i = 0; i < len; i++) {
		char q = a[i];
		if (q != '"' && q != '\'')
			continue;
		size_t end = i + 1;
		while (end < len && a[end] != q)
			end += a[end] == '\\' && end + 1 < len ? 2 : 1;
		if (end >= len)
			return; /* unterminated: no more literals */
		if (end > i + 1 && literal_is_secret(a, len, i, end))
			add_span(sp, i + 1, end);
		i = end;
	}
}
