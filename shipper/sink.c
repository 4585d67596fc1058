#include "shipper/sink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shipper/gzip.h"
#include "shipper/retry.h"

struct sink *sink_open(const char *url, const struct http_options *o, char *err, size_t err_size)
{
	struct sink *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	snprintf(s->url, sizeof(s->url), "%s", url);
	if (!strncmp(url, "clickhouse://", 13)) {
		char hostport[256] = "", db[128] = "";
		const char *rest = url + 13;
		bool secure = strstr(rest, "?secure=1") != NULL;
		if (sscanf(rest, "%255[^/]/%127[A-Za-z0-9_]", hostport, db) != 2) {
			snprintf(
			    err, err_size,
			    "%s: expected clickhouse://HOST:PORT/DATABASE (letters, digits, _)",
			    url);
			free(s);
			return NULL;
		}
		snprintf(s->name, sizeof(s->name), "clickhouse");
		snprintf(s->base, sizeof(s->base), "%s://%s/", secure ? "https" : "http", hostport);
		snprintf(s->database, sizeof(s->database), "%s", db);
	} else if (!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8)) {
		snprintf(s->name, sizeof(s->name), "http");
	} else {
		snprintf(err, err_size,
			 "%s: the sink is clickhouse://HOST:PORT/DB or http(s)://URL", url);
		free(s);
		return NULL;
	}
	s->http = http_new(o);
	if (!s->http) {
		snprintf(err, err_size, "cannot start libcurl");
		free(s);
		return NULL;
	}
	return s;
}

void sink_free(struct sink *s)
{
	if (!s)
		return;
	http_free(s->http);
	free(s->lines);
	free(s);
}

bool lines_append(struct sink *s, const char *text, size_t len)
{
	if (s->lines_len + len + 1 > s->lines_cap) {
		size_t cap = (s->lines_cap ? s->lines_cap : 65536);
		while (cap < s->lines_len + len + 1)
			cap *= 2;
		char *bigger = realloc(s->lines, cap);
		if (!bigger)
			return false;
		s->lines = bigger;
		s->lines_cap = cap;
	}
	memcpy(s->lines + s->lines_len, text, len);
	s->lines_len += len;
	s->lines[s->lines_len] = '\0';
	return true;
}

void sink_post(struct sink *s, const char *url, const char *const *headers, const char *body,
	       size_t len, struct send_result *out)
{
	struct http_result r;
	size_t zlen = 0;
	unsigned char *z = gzip_compress(body, len, &zlen);

	memset(out, 0, sizeof(*out));
	if (!z) {
		out->outcome = SEND_RETRY;
		out->retry_after_ms = -1;
		snprintf(out->answer, sizeof(out->answer), "compression failed");
		return;
	}
	const char *with_gzip[16];
	size_t n = 0;
	for (const char *const *h = headers; h && *h && n < 14; h++)
		with_gzip[n++] = *h;
	with_gzip[n++] = "Content-Encoding: gzip";
	with_gzip[n] = NULL;
	http_post(s->http, url, with_gzip, z, zlen, &r);
	free(z);
	out->status = r.status;
	out->retry_after_ms = r.retry_after_ms;
	if (r.status >= 200 && r.status < 300) {
		out->outcome = SEND_OK;
	} else {
		out->outcome = status_retryable(r.status) ? SEND_RETRY : SEND_REJECTED;
		snprintf(out->answer, sizeof(out->answer), "%s", r.status ? r.body : r.error);
	}
}

void sink_prepare(struct sink *s, struct outbox_reader *o, struct send_result *out)
{
	memset(out, 0, sizeof(*out));
	out->outcome = SEND_OK;
	if (!strcmp(s->name, "clickhouse") && !s->prepared)
		clickhouse_prepare(s, o, out);
}

void sink_send(struct sink *s, const struct batch *b, const char *host, struct send_result *out)
{
	s->lines_len = 0;
	if (!strcmp(s->name, "clickhouse"))
		clickhouse_send(s, b, host, out);
	else
		generic_send(s, b, host, out);
}
