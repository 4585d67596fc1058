/* Where batches go: ClickHouse over HTTP, or a generic HTTP(S) endpoint. */
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

struct sink {
	char name[16]; /* clickhouse, http */
	char url[512];
	struct http_client *http;
	char *lines; /* the last batch as JSON lines (for dead letters) */
	size_t lines_len, lines_cap;
	/* ClickHouse */
	char base[512], database[128];
	bool prepared;
	sqlite3 *schema_db; /* the local database: column names and types */
};

/* clickhouse://HOST:PORT/DATABASE[?secure=1] or http(s)://... */
struct sink *sink_open(const char *url, const struct http_options *o, char *err, size_t err_size);
void sink_free(struct sink *s);
/* Creates what the sink needs (ClickHouse: database and tables). */
void sink_prepare(struct sink *s, struct outbox_reader *o, struct send_result *out);
void sink_send(struct sink *s, const struct batch *b, const char *host, struct send_result *out);

/* Shared by the sinks. */
bool lines_append(struct sink *s, const char *text, size_t len);
void sink_post(struct sink *s, const char *url, const char *const *headers, const char *body,
	       size_t len, struct send_result *out);

void clickhouse_prepare(struct sink *s, struct outbox_reader *o, struct send_result *out);
void clickhouse_send(struct sink *s, const struct batch *b, const char *host,
		     struct send_result *out);
void generic_send(struct sink *s, const struct batch *b, const char *host, struct send_result *out);

#endif
