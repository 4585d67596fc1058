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

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

void utc_from_unix(int64_t unix_seconds, struct utc_time *out)
{
	const int64_t days_per_era = 146097; /* 400 Gregorian years */
	int64_t days = floor_div(unix_seconds, 86400);
	int64_t secs_of_day = unix_seconds - days * 86400;

	out->hour = (int)(secs_of_day / 3600);
	out->minute = (int)(secs_of_day / 60 % 60);
	out->second = (int)(secs_of_day % 60);

	/* Count from 0000-03-01, so that the leap day ends each year. */
	int64_t from_march_0 = days + 719468;
	int64_t era = floor_div(from_march_0, days_per_era);
	int64_t day_of_era = from_march_0 - era * days_per_era; /* 0..146096 */
	int64_t year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 -
			       day_of_era / (days_per_era - 1)) /
			      365; /* 0..399 */
	int64_t day_of_year =
	    day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
	int64_t month_from_march = (5 * day_of_year + 2) / 153; /* 0..11 */

	out->day = (int)(day_of_year - (153 * month_from_march + 2) / 5 + 1);
	out->month = (int)(month_from_march < 10 ? month_from_march + 3 : month_from_march - 9);
	out->year = year_of_era + era * 400 + (out->month <= 2);
}
