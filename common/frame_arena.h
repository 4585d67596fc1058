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

/*
 * The most the arena keeps between frames; larger frames get chunks of their
 * own. An exec storm's 200 ms frame decodes to about 1 MiB (1.5 KB a process).
 */
#define FRAME_ARENA_KEEP_MAX (8u << 20)

struct arena_chunk;

struct frame_arena {
	ProtobufCAllocator allocator; /* hand &allocator to protobuf-c */
	struct arena_chunk *chunks;   /* newest first */
	size_t want;		      /* size of the chunk to keep: recent frames' need, capped */
	size_t chunks_allocated;      /* mallocs so far */
};

void frame_arena_init(struct frame_arena *a);
/* Frees everything allocated since the last reset; keeps one chunk for the next frame. */
void frame_arena_reset(struct frame_arena *a);
void frame_arena_destroy(struct frame_arena *a);

#endif
