/*
 * The generic sink: one POST per batch, JSON lines (gzip), each line
 * {"host", "kind", "key", "version", "record"}. The Idempotency-Key header
 * (host and outbox id range) names the batch: a replay carries the same key,
 * and (host, kind, key, version) identifies each record.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "shipper/sink_kind.h"

static void generic_send(struct sink *s, const struct batch *b, const char *host,
			 struct send_result *out)
{
	char idem[200];

	for (size_t i = 0; i < b->n; i++) {
		const struct record *r = &b->r[i];
		json_t *line = json_pack("{s:s, s:s, s:s, s:I}", "host", host, "kind", r->kind,
					 "key", r->key, "version", (json_int_t)r->id);
		char *head = line ? json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
		json_decref(line);
		if (!head) {
			memset(out, 0, sizeof(*out));
			out->outcome = SEND_RETRY;
			out->retry_after_ms = -1;
			snprintf(out->answer, sizeof(out->answer), "out of memory");
			return;
		}
		/* {"host":...,"version":N} -> {"host":...,"version":N,"record":<payload>} */
		bool ok = lines_append(s, head, strlen(head) - 1) &&
			  lines_append(s, ",\"record\":", 10) &&
			  lines_append(s, r->payload, r->payload_len) && lines_append(s, "}\n", 2);
		free(head);
		if (!ok) {
			memset(out, 0, sizeof(*out));
			out->outcome = SEND_RETRY;
			out->retry_after_ms = -1;
			snprintf(out->answer, sizeof(out->answer), "out of memory");
			return;
		}
	}
	snprintf(idem, sizeof(idem), "Idempotency-Key: tracer-%s-%lld-%lld", host,
		 (long long)b->first_id, (long long)b->last_id);
	const char *headers[] = {"Content-Type: application/x-ndjson", idem, NULL};
	sink_post(s, s->url, headers, s->lines, s->lines_len, out);
}

static bool http_accepts(const char *url)
{
	return !strncmp(url, "http://", 7) || !strncmp(url, "https://", 8);
}

static int http_open(struct sink *s, const char *url, char *err, size_t err_size)
{
	return 0; /* the URL is all it needs (s->url) */
}

const struct sink_ops http_sink = {
    .name = "http",
    .accepts = http_accepts,
    .open = http_open,
    .send = generic_send,
};
