#include "common/timeutil.h"

#include <time.h>

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t now_boottime_ns(void)
{
	return clock_ns(CLOCK_BOOTTIME);
}

uint64_t now_realtime_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

uint64_t now_monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

int64_t realtime_offset_ns(void)
{
	int64_t best = 0;
	uint64_t best_gap = UINT64_MAX;

	/* Bracket the realtime read with two boottime reads; keep the tightest. */
	for (int i = 0; i < 3; i++) {
		uint64_t b0 = now_boottime_ns();
		uint64_t r = now_realtime_ns();
		uint64_t b1 = now_boottime_ns();

		if (b1 - b0 < best_gap) {
			best_gap = b1 - b0;
			best = (int64_t)r - (int64_t)(b0 + (b1 - b0) / 2);
		}
	}
	return best;
}

void sleep_ns(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / NSEC_PER_SEC),
			      .tv_nsec = (long)(ns % NSEC_PER_SEC)};

	while (nanosleep(&ts, &ts) != 0)
		;
}
