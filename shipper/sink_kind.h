/* What a kind of sink provides, and what the kinds share (sink_io.c). */
#ifndef TRACER_SHIPPER_SINK_KIND_H
#define TRACER_SHIPPER_SINK_KIND_H

#include "shipper/sink.h"

struct sink_ops {
	const char *name;
	/* Does this kind serve the URL (by its scheme)? */
	bool (*accepts)(const char *url);
	/* Reads the URL into s->state: 0, or -1 with the reason in err. */
	int (*open)(struct sink *s, const char *url, char *err, size_t err_size);
	/* Creates what the sink needs before the first batch; NULL: nothing. */
	void (*prepare)(struct sink *s, struct outbox_reader *o, struct send_result *out);
	void (*send)(struct sink *s, const struct batch *b, const char *host,
		     struct send_result *out);
	/* Frees s->state; NULL: nothing to free. */
	void (*close)(struct sink *s);
};

extern const struct sink_ops clickhouse_sink;
extern const struct sink_ops http_sink;

/* sink_io.c: appends to the batch's text; false if memory ran out. */
bool lines_append(struct sink *s, const char *text, size_t len);
/* POSTs body (gzip-compressed) and says how it went. */
void sink_post(struct sink *s, const char *url, const char *const *headers, const char *body,
	       size_t len, struct send_result *out);

#endif
