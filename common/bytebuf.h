/* A growable byte buffer for building frames and request bodies. */
#ifndef TRACER_BYTEBUF_H
#define TRACER_BYTEBUF_H

#include <stddef.h>
#include <stdint.h>

struct bytebuf {
	uint8_t *data;
	size_t len;
	size_t cap;
};

/* Makes room for n more bytes; returns where they go, or NULL (ENOMEM). */
uint8_t *bytebuf_reserve(struct bytebuf *b, size_t n);
int bytebuf_append(struct bytebuf *b, const void *data, size_t n);
int bytebuf_append_varint(struct bytebuf *b, uint64_t v);
void bytebuf_reset(struct bytebuf *b);
void bytebuf_free(struct bytebuf *b);

#endif
