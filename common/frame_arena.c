#include "common/frame_arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/poison.h"

#define ARENA_ALIGN alignof(max_align_t)
#define ARENA_MIN_CHUNK (64u << 10)

struct arena_chunk {
	struct arena_chunk *next;
	size_t size, used;
	alignas(max_align_t) unsigned char data[];
};

static void *arena_alloc(void *data, size_t n)
{
	struct frame_arena *a = data;
	struct arena_chunk *c = a->chunks;

	if (n == 0)
		n = 1;
	if (n > SIZE_MAX / 2)
		return NULL;
	n = (n + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
	if (!c || c->size - c->used < n) {
		size_t size = a->want > ARENA_MIN_CHUNK ? a->want : ARENA_MIN_CHUNK;
		if (size < n)
			size = n;
		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = a->chunks;
		a->chunks = c;
		POISON(c->data, size);
	}
	void *p = c->data + c->used;
	c->used += n;
	UNPOISON(p, n);
	return p;
}

/* Individual frees are no-ops: the whole frame goes at once. */
static void arena_free(void *data, void *p)
{
	(void)data;
	(void)p;
}

void frame_arena_init(struct frame_arena *a)
{
	a->allocator.alloc = arena_alloc;
	a->allocator.free = arena_free;
	a->allocator.allocator_data = a;
	a->chunks = NULL;
	a->want = 0;
}

void frame_arena_reset(struct frame_arena *a)
{
	size_t total = 0;

	for (struct arena_chunk *c = a->chunks; c; c = c->next)
		total += c->used;
	if (total > a->want)
		a->want = total < FRAME_ARENA_KEEP_MAX ? total : FRAME_ARENA_KEEP_MAX;
	/* Keep the newest chunk if it is big enough for a frame like this one (and not huge). */
	struct arena_chunk *keep = a->chunks;
	if (keep && (keep->size < a->want || keep->size > FRAME_ARENA_KEEP_MAX))
		keep = NULL;
	for (struct arena_chunk *c = a->chunks; c;) {
		struct arena_chunk *next = c->next;
		if (c != keep)
			free(c);
		c = next;
	}
	a->chunks = keep;
	if (keep) {
		keep->next = NULL;
		keep->used = 0;
		POISON(keep->data, keep->size);
	}
}

void frame_arena_destroy(struct frame_arena *a)
{
	a->want = 0;
	for (struct arena_chunk *c = a->chunks; c;) {
		struct arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->chunks = NULL;
}
