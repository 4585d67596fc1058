/* Frames from the collector socket: any bytes must decode to an error or a
 * valid frame, never crash, leak or read out of bounds. */
#include <stddef.h>
#include <stdint.h>

#include "common/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Tracer__Frame *f = NULL;
	char why[256];

	if (frame_decode(data, size, &f, why, sizeof(why)) == FRAME_OK) {
		/* A valid frame re-encodes. */
		uint8_t *out = NULL;
		size_t len = 0;
		if (frame_encode(f, &out, &len) == 0)
			__builtin_free(out);
		frame_free(f);
	}
	return 0;
}
