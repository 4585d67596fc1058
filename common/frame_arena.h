/*
 * A bump allocator for decoding frames. protobuf-c allocates every message,
 * string and array of a frame separately; the aggregator decodes a frame,
 * applies it and throws it away, so one arena reset replaces thousands of
 * malloc/free pairs (a tenth of the aggregator's CPU in an exec storm).
 */
#ifndef TRACER_FRAME_ARENA_H
#define TRACER_FRAME_ARENA_H

#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

/* What the arena keeps between frames; larger frames get chunks of their own. */
#define FRAME_ARENA_KEEP_MAX (1u << 20)

struct arena_chunk;

struct frame_arena {
	ProtobufCAllocator allocator; /* hand &allocator to protobuf-c */
	struct arena_chunk *chunks;   /* newest first */
	size_t want;		      /* size of the chunk to keep: last frame's need, capped */
};

void frame_arena_init(struct frame_arena *a);
/* Frees everything allocated since the last reset; keeps one chunk for the next frame. */
void frame_arena_reset(struct frame_arena *a);
void frame_arena_destroy(struct frame_arena *a);

#endif
