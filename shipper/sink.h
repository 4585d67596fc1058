/*
 * Where batches go: ClickHouse over HTTP, or a generic HTTP(S) endpoint.
 * sink.c picks the kind from the URL and calls it through its sink_ops
 * (sink_kind.h); the kinds share sink_io.c and never call back into sink.c.
 */
#ifndef TRACER_SHIPPER_SINK_H
#define TRACER_SHIPPER_SINK_H

#include <stdbool.h>
#include <stddef.h>

#include "shipper/http.h"
#include "shipper/outbox_reader.h"

enum send_outcome { SEND_OK, SEND_RETRY, SEND_REJECTED };

struct send_result {
	enum send_outcome outcome;
	long status;
	long retry_after_ms;
	char answer[2048];
};

struct sink_ops;

struct sink {
	const struct sink_ops *ops; /* the kind of sink (sink_kind.h) */
	char name[16];		    /* clickhouse, http */
	char url[512];
	struct http_client *http;
	char *lines; /* the last batch as sent (for dead letters) */
	size_t lines_len, lines_cap;
	void *state; /* the kind's own */
};

/* clickhouse://HOST:PORT/DATABASE[?secure=1] or http(s)://... */
struct sink *sink_open(const char *url, const struct http_options *o, char *err, size_t err_size);
void sink_free(struct sink *s);
/* Creates what the sink needs (ClickHouse: database and tables). */
void sink_prepare(struct sink *s, struct outbox_reader *o, struct send_result *out);
void sink_send(struct sink *s, const struct batch *b, const char *host, struct send_result *out);

#endif
