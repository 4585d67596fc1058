#include "shipper/http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

struct http_client {
	CURL *curl; /* reused: keep-alive to the sink */
	struct http_options o;
};

struct sink_buf {
	struct http_result *r;
	size_t len;
};

static size_t on_body(char *ptr, size_t size, size_t n, void *user)
{
	struct sink_buf *b = user;
	size_t bytes = size * n, room = sizeof(b->r->body) - 1 - b->len;
	size_t take = bytes < room ? bytes : room;

	memcpy(b->r->body + b->len, ptr, take);
	b->len += take;
	b->r->body[b->len] = '\0';
	return bytes; /* read it all; keep the start */
}

long http_retry_after_ms(const char *header_line, size_t len)
{
	char value[128];

	if (len <= 12 || strncasecmp(header_line, "Retry-After:", 12) != 0)
		return -1;
	size_t v = len - 12 < sizeof(value) - 1 ? len - 12 : sizeof(value) - 1;
	memcpy(value, header_line + 12, v);
	value[v] = '\0';
	char *s = value;
	while (*s == ' ' || *s == '\t')
		s++;
	s[strcspn(s, "\r\n")] = '\0';
	char *end;
	errno = 0;
	long secs = strtol(s, &end, 10);
	if (end != s && *end == '\0' && secs >= 0 && errno == 0)
		return secs <= 86400 ? secs * 1000 : 86400L * 1000; /* a day at most */
	time_t when = curl_getdate(s, NULL);
	if (when <= 0)
		return -1;
	time_t now = time(NULL);
	if (when <= now)
		return 0;
	return when - now <= 86400 ? (long)(when - now) * 1000 : 86400L * 1000;
}

/* Retry-After: delay-seconds or an HTTP date. */
static size_t on_header(char *line, size_t size, size_t n, void *user)
{
	struct http_result *r = user;
	size_t len = size * n;
	long ms = http_retry_after_ms(line, len);

	if (ms >= 0)
		r->retry_after_ms = ms;
	return len;
}

struct http_client *http_new(const struct http_options *o)
{
	struct http_client *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->curl = curl_easy_init();
	if (!c->curl) {
		free(c);
		return NULL;
	}
	c->o = *o;
	return c;
}

void http_free(struct http_client *c)
{
	if (!c)
		return;
	curl_easy_cleanup(c->curl);
	free(c);
}

void http_post(struct http_client *c, const char *url, const char *const *headers, const void *body,
	       size_t len, struct http_result *out)
{
	CURL *h = c->curl;
	struct curl_slist *list = NULL;
	struct sink_buf buf = {.r = out};
	char auth[512];

	memset(out, 0, sizeof(*out));
	out->retry_after_ms = -1;
	curl_easy_reset(h);
	for (const char *const *p = headers; p && *p; p++)
		list = curl_slist_append(list, *p);
	if (c->o.bearer) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", c->o.bearer);
		list = curl_slist_append(list, auth);
	}
	list = curl_slist_append(list, "Expect:"); /* no 100-continue round trip */
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->o.timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->o.connect_timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->o.ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, c->o.ca_file);
	if (c->o.user) {
		curl_easy_setopt(h, CURLOPT_USERNAME, c->o.user);
		curl_easy_setopt(h, CURLOPT_PASSWORD, c->o.password ? c->o.password : "");
	}
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &buf);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, out);
	CURLcode rc = curl_easy_perform(h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->status);
	else
		snprintf(out->error, sizeof(out->error), "%s", curl_easy_strerror(rc));
	curl_slist_free_all(list);
}
