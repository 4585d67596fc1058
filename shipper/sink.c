/* Picks the kind of sink from the URL and calls it through its sink_ops. */
#include "shipper/sink_kind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct sink_ops *const kinds[] = {&clickhouse_sink, &http_sink};

struct sink *sink_open(const char *url, const struct http_options *o, char *err, size_t err_size)
{
	const struct sink_ops *ops = NULL;
	struct sink *s;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]) && !ops; i++)
		if (kinds[i]->accepts(url))
			ops = kinds[i];
	if (!ops) {
		snprintf(err, err_size,
			 "%s: the sink is clickhouse://HOST:PORT/DB or http(s)://URL", url);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	s->ops = ops;
	snprintf(s->name, sizeof(s->name), "%s", ops->name);
	snprintf(s->url, sizeof(s->url), "%s", url);
	if (ops->open(s, url, err, err_size) != 0) {
		sink_free(s);
		return NULL;
	}
	s->http = http_new(o);
	if (!s->http) {
		snprintf(err, err_size, "cannot start libcurl");
		sink_free(s);
		return NULL;
	}
	return s;
}

void sink_free(struct sink *s)
{
	if (!s)
		return;
	if (s->ops->close)
		s->ops->close(s);
	http_free(s->http);
	free(s->lines);
	free(s);
}

void sink_prepare(struct sink *s, struct outbox_reader *o, struct send_result *out)
{
	memset(out, 0, sizeof(*out));
	out->outcome = SEND_OK;
	if (s->ops->prepare)
		s->ops->prepare(s, o, out);
}

void sink_send(struct sink *s, const struct batch *b, const char *host, struct send_result *out)
{
	s->lines_len = 0;
	s->ops->send(s, b, host, out);
}
