#include "common/bytebuf.h"

#include <stdlib.h>
#include <string.h>

uint8_t *bytebuf_reserve(struct bytebuf *b, size_t n)
{
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap - b->len < n)
			cap *= 2;
		uint8_t *p = realloc(b->data, cap);
		if (!p)
			return NULL;
		b->data = p;
		b->cap = cap;
	}
	return b->data + b->len;
}

int bytebuf_append(struct bytebuf *b, const void *data, size_t n)
{
	uint8_t *p = bytebuf_reserve(b, n);

	if (!p)
		return -1;
	if (n)
		memcpy(p, data, n);
	b->len += n;
	return 0;
}

int bytebuf_append_varint(struct bytebuf *b, uint64_t v)
{
	uint8_t tmp[10];

	return bytebuf_append(b, tmp, (size_t)(varint_put(tmp, v) - tmp));
}

void bytebuf_reset(struct bytebuf *b)
{
	b->len = 0;
}

void bytebuf_free(struct bytebuf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
