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

/* Bytes v takes as a protobuf varint (1 to 10). */
static inline size_t varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >>= 7)
		n++;
	return n;
}

/* Writes v as a protobuf varint at p (room for varint_size(v)); returns its end. */
static inline uint8_t *varint_put(uint8_t *p, uint64_t v)
{
	while (v > 0x7f) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

#endif
