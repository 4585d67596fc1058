/*
 * When to try again: exponential backoff with full jitter (a random delay
 * between 0 and min(cap, base x 2^attempt)), or what the sink asked for in
 * Retry-After. And which answers are worth retrying at all.
 */
#ifndef TRACER_SHIPPER_RETRY_H
#define TRACER_SHIPPER_RETRY_H

#include <stdbool.h>

struct backoff {
	long base_ms, cap_ms;
	unsigned attempt;
	unsigned seed;
};

void backoff_init(struct backoff *b, long base_ms, long cap_ms, unsigned seed);
/* The delay before the next attempt (retry_after_ms >= 0 wins, capped at an hour). */
long backoff_next(struct backoff *b, long retry_after_ms);
void backoff_reset(struct backoff *b);
/* Network errors (status 0), 5xx, 408 and 429 are retried; other 4xx are final. */
bool status_retryable(long status);

#endif
