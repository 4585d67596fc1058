/*
 * URLs: credentials in the userinfo (scheme://user:X@host, https://X@host)
 * and addresses whose path is the credential (Slack, Discord and Teams
 * webhooks, Telegram's bot tokens). Signature and token
 * query parameters (?X-Amz-Signature=, sig=, token=) are NAME=VALUE pairs:
 * pairs.c finds them.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "collector/redact/internal.h"

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

/* Telegram's bot API: https://api.telegram.org/bot<id>:<token>/method. */
static void find_bot_token(const char *arg, size_t from, size_t len, struct spans *sp)
{
	const char *bot = memmem(arg + from, len - from, "/bot", 4);

	if (!bot)
		return;
	size_t i = (size_t)(bot - arg) + 4, digits = i;
	while (i < len && isdigit((unsigned char)arg[i]))
		i++;
	if (i == digits || i >= len || arg[i] != ':')
		return;
	size_t end = ++i;
	while (end < len &&
	       (isalnum((unsigned char)arg[end]) || arg[end] == '_' || arg[end] == '-'))
		end++;
	if (end - i >= 30)
		add_span(sp, i, end);
}

/* scheme://user:secret@host and https://token@host, and webhook paths */
void find_url_credentials(const char *arg, size_t len, struct spans *sp)
{
	const char *p = arg;

	if (!memchr(arg, ':', len))
		return; /* most arguments: not worth memmem's set-up */

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
		find_bot_token(arg, auth_start, len, sp);
		p += 3;
	}
}
