/* Every rule that finds a secret inside one argument or word, whatever its
 * command: NAME=VALUE pairs, code literals, URLs, headers, token formats. */
#include <string.h>

#include "collector/redact/internal.h"

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
