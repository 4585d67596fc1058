#include "shipper/retry.h"

#include <stdlib.h>

void backoff_init(struct backoff *b, long base_ms, long cap_ms, unsigned seed)
{
	b->base_ms = base_ms;
	b->cap_ms = cap_ms;
	b->attempt = 0;
	b->seed = seed;
}

long backoff_next(struct backoff *b, long retry_after_ms)
{
	long ceiling = b->base_ms;

	for (unsigned i = 0; i < b->attempt && ceiling < b->cap_ms; i++)
		ceiling *= 2;
	if (ceiling > b->cap_ms)
		ceiling = b->cap_ms;
	b->attempt++;
	if (retry_after_ms >= 0)
		return retry_after_ms < 3600000 ? retry_after_ms : 3600000;
	return (long)(rand_r(&b->seed) % (unsigned)(ceiling + 1));
}

void backoff_reset(struct backoff *b)
{
	b->attempt = 0;
}

bool status_retryable(long status)
{
	return status == 0 || status >= 500 || status == 408 || status == 429;
}
