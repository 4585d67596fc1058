/* Frames from the collector socket: any bytes must decode to an error or a
 * valid frame, never crash, leak or read out of bounds. */
#include <stddef.h>
#include <stdint.h>

#include "common/frame.h"

static struct frame_arena arena = {.allocator = {.alloc = NULL}};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Tracer__Frame *f = NULL;
	char why[256];

	if (!arena.allocator.alloc)
		frame_arena_init(&arena);
	if (frame_decode(&arena, data, size, &f, why, sizeof(why)) == FRAME_OK) {
		/* A valid frame re-encodes. */
		uint8_t *out = NULL;
		size_t len = 0;
		if (frame_encode(f, &out, &len) == 0)
			__builtin_free(out);
		frame_arena_reset(&arena);
	}
	return 0;
}
