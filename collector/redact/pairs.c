/*
 * Secrets named inside one argument: NAME=VALUE (--password=X, a=1&token=X,
 * user=a,password=X), headers (Authorization: X), Windows-style /password:X,
 * user:secret@host without a scheme (impacket's DOMAIN/user:X@10.0.0.1) and
 * Oracle's user/secret logins.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "collector/redact/internal.h"

static bool is_pair_separator(char c)
{
	return c == ',' || c == '&' || c == ';' || c == '?' || c == ' ';
}

/* NAME=value: to the end; an environment assignment (upper case) in a shell
 * string ends at a space outside quotes: `DB_PWD=x mysql db`, X="a b" next. */
static size_t assignment_end(const char *arg, size_t eq, size_t len)
{
	for (size_t c = 0; c < eq; c++)
		if (!isupper((unsigned char)arg[c]) && !isdigit((unsigned char)arg[c]) &&
		    arg[c] != '_')
			return len;
	char quote = 0;
	size_t end = eq + 1;
	for (; end < len && (quote || !isspace((unsigned char)arg[end])); end++)
		if (quote ? arg[end] == quote : (arg[end] == '"' || arg[end] == '\''))
			quote = quote ? 0 : arg[end];
	return end;
}

/* A value that is code: a tuple, a list, a closed literal, a call with a closing ')'.
 * A tuple or list holds a literal for code.c to find; one without is a value. */
static bool is_code_value(const char *arg, size_t v, size_t len)
{
	if (arg[v] == '(' || arg[v] == '[')
		return memchr(arg + v, '\'', len - v) || memchr(arg + v, '"', len - v);
	if (arg[v] == '\'' || arg[v] == '"')
		return memchr(arg + v + 1, arg[v], len - v - 1) != NULL;
	size_t i = v;
	while (i < len && (isalnum((unsigned char)arg[i]) || arg[i] == '_' || arg[i] == '.'))
		i++;
	return i - v >= 2 && i < len && arg[i] == '(' && memchr(arg + i, ')', len - i) &&
	       isalpha((unsigned char)arg[v]);
}

void find_pairs(const char *arg, size_t len, struct spans *sp)
{
	for (size_t eq = 0; eq < len; eq++) {
		if (arg[eq] != '=')
			continue;
		size_t k = eq;
		while (k > 0 && is_key_char(arg[k - 1]))
			k--;
		if (k == eq)
			continue;
		size_t end = eq + 1;
		if (k <= 2 && arg[0] == '-')
			end = len; /* the whole rest of --flag=value is the value */
		else if (k == 0)
			end = assignment_end(arg, eq, len);
		else
			while (end < len && !is_pair_separator(arg[end]))
				end++;
		size_t v = eq + 1;
		if (v < len && arg[v] == '=')
			v++; /* httpie's api_key==X */
		/* auth=('u', 'x'), password='x', auth=HTTPBasicAuth('u', 'x'): code.c
		 * reads code's literals */
		/* An option (--password=) is given a value, never code. */
		if (v < len && k > 0 && arg[k - 1] != '-' && arg[k] != '-' &&
		    is_code_value(arg, v, len))
			continue;
		if (!key_hides_value(arg + k, eq - k, arg + v, end > v ? end - v : 0)) {
			/* --header=Authorization: Bearer X */
			find_header_at(arg, eq + 1, len, sp);
			continue;
		}
		add_span(sp, eq + 1, end);
		eq = end;
	}
}

/* "Authorization: Bearer X", "Cookie: a=b", openssl "pass:X", from offset `from`. */
void find_header_at(const char *arg, size_t from, size_t len, struct spans *sp)
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
	size_t v = i + 1;
	while (v < len && isspace((unsigned char)arg[v]))
		v++;
	if (key_hides_value(arg + name, i - name, arg + v, len - v))
		add_span(sp, v, len);
}

/* /password:X, /pass:X, -password:X (Windows tools, xfreerdp's /gp: is a rule). */
void find_windows_option(const char *arg, size_t len, struct spans *sp)
{
	if (len < 4 || (arg[0] != '/' && arg[0] != '-'))
		return;
	size_t i = 1;
	while (i < len && (isalnum((unsigned char)arg[i]) || arg[i] == '-' || arg[i] == '_'))
		i++;
	if (i == 1 || i >= len || arg[i] != ':')
		return;
	if (key_hides_value(arg + 1, i - 1, arg + i + 1, len - i - 1))
		add_span(sp, i + 1, len);
}

/* USER:SECRET@HOST with no scheme before it. Not an image digest (name:tag@sha256:...)
 * nor scp's user@host:path (its colon comes after the '@'). */
void find_user_at_host(const char *arg, size_t len, struct spans *sp)
{
	const char *at = memchr(arg, '@', len);

	if (!at || memmem(arg, len, "://", 3))
		return;
	size_t a = (size_t)(at - arg);
	size_t start = a;
	while (start > 0 && !isspace((unsigned char)arg[start - 1]) && arg[start - 1] != '\'' &&
	       arg[start - 1] != '"' && arg[start - 1] != '=')
		start--;
	const char *colon = memchr(arg + start, ':', a - start);
	if (!colon || colon == arg + start || (size_t)(colon - arg) + 1 >= a || colon[1] == ':' ||
	    colon[1] == '/')
		return; /* conda's channel::pkg@1.9, rsync's host:/path@x */
	const char *host = at + 1;
	size_t hlen = len - a - 1;
	if (hlen == 0 || !isalnum((unsigned char)host[0]) ||
	    (hlen >= 3 && !strncmp(host, "sha", 3)))
		return;
	for (const char *c = arg + start; c < colon; c++)
		if (!is_key_char(*c) && *c != '/' && *c != '\\')
			return; /* DOMAIN/user or DOMAIN\user, nothing else */
	add_span(sp, (size_t)(colon - arg) + 1, a);
}

/* Oracle's tools log in with USER/SECRET[@DB] (`sqlplus scott/x@orcl`, `expdp userid=scott/x`). */
void find_oracle_login(const char *tool, const char *arg, size_t len, struct spans *sp)
{
	static const char *const tools[] = {"sqlplus", "sqlldr", "expdp",  "impdp", "exp",
					    "imp",     "rman",	 "dgmgrl", "sql"}; /* sql: SQLcl */
	bool oracle = false;

	if (!strchr("seird", tool[0]) || !tool[0] || !memchr(arg, '/', len))
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
