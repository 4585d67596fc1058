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

#endif
