/* What every kind of sink shares: the batch's text and the POST that sends it. */
#include "shipper/sink_kind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shipper/gzip.h"
#include "shipper/retry.h"

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
		/* What the sink said: a query's result (bounded). */
		snprintf(out->answer, sizeof(out->answer), "%s", r.body);
	} else {
		out->outcome = status_retryable(r.status) ? SEND_RETRY : SEND_REJECTED;
		snprintf(out->answer, sizeof(out->answer), "%s", r.status ? r.body : r.error);
	}
}
