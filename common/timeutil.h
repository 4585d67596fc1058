/* Clocks. Kernel events carry CLOCK_BOOTTIME; storage uses Unix epoch ns. */
#ifndef TRACER_TIMEUTIL_H
#define TRACER_TIMEUTIL_H

#include <stdint.h>

#define NSEC_PER_SEC 1000000000ULL
#define NSEC_PER_MSEC 1000000ULL

uint64_t now_boottime_ns(void);
uint64_t now_realtime_ns(void);
uint64_t now_monotonic_ns(void);
/* realtime - boottime, sampled back to back (the smallest of a few tries). */
int64_t realtime_offset_ns(void);
void sleep_ns(uint64_t ns);

/* A Unix time's calendar fields in UTC (proleptic Gregorian). */
struct utc_time {
	int64_t year;
	int month;  /* 1..12 */
	int day;    /* 1..31 */
	int hour;   /* 0..23 */
	int minute; /* 0..59 */
	int second; /* 0..59 */
};
/* Pure arithmetic, unlike gmtime_r: glibc's first gmtime_r reads /etc/localtime,
 * which the collector's syscall allow-list refuses once it is on. */
void utc_from_unix(int64_t unix_seconds, struct utc_time *out);

#endif
