/*
 * Frame codec: the only code that turns bytes from another process into
 * structured data on the aggregator side. Everything is bounded and checked
 * here so the rest of the aggregator can trust what it gets.
 */
#ifndef TRACER_FRAME_H
#define TRACER_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "common/frame_arena.h"
#include "tracer.pb-c.h"

#define FRAME_MAX_BYTES (8u << 20)
#define FRAME_MAX_EVENTS 100000u
#define FRAME_MAX_PATH 8192u
#define FRAME_MAX_COMM 64u
#define FRAME_MAX_ENERGY_ZONES 64u /* intel-rapl:N; the collector reads N < 8 */
#define FRAME_MAX_ENERGY_NAME 31u  /* powercap zone names: package-0, psys */
#define FRAME_MAX_ARGS 8192u
#define FRAME_MAX_ARGV_BYTES 65536u
#define FRAME_ID_LEN 16u
#define FRAME_MAX_FILES 4096u /* file slots per process */
/* Boot-clock times stay below 2^62 ns (146 years up) and the wall-clock offset
 * within +-2^62, so their sum, a wall-clock time, cannot overflow. */
#define FRAME_MAX_CLOCK_NS (UINT64_C(1) << 62)

enum frame_error {
	FRAME_OK = 0,
	FRAME_TOO_BIG,
	FRAME_UNDECODABLE,
	FRAME_BAD_VERSION,
	FRAME_BAD_HEADER,
	FRAME_BAD_EVENT,
};

const char *frame_error_name(enum frame_error err);

/* Packs f into a malloc'd buffer. 0, or -1 on allocation failure. */
int frame_encode(const Tracer__Frame *f, uint8_t **out, size_t *len);
/*
 * The bytes that set oldest_seq when appended to a packed frame (protobuf keeps
 * the last value of a scalar field): the collector stamps it at each (re)send.
 * Returns their length (at most FRAME_OLDEST_SEQ_TAIL).
 */
#define FRAME_OLDEST_SEQ_TAIL 11
size_t frame_oldest_seq_tail(uint64_t oldest_seq, uint8_t out[FRAME_OLDEST_SEQ_TAIL]);

/*
 * Unpacks and validates len bytes into arena. On FRAME_OK, *out holds the
 * frame until frame_arena_reset(arena). Otherwise why describes the first
 * problem found (and the arena has been reset).
 */
enum frame_error frame_decode(struct frame_arena *arena, const uint8_t *buf, size_t len,
			      Tracer__Frame **out, char *why, size_t why_size);

#endif
