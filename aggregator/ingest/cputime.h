/*
 * CPU time as getrusage() reports it. The kernel samples the user/system
 * split on ticks but knows the total runtime exactly; getrusage scales the
 * split to the exact total (kernel/sched/cputime.c cputime_adjust). We do
 * the same so our numbers agree with getrusage and GNU time.
 */
#ifndef TRACER_CPUTIME_H
#define TRACER_CPUTIME_H

#include <stdint.h>

void cputime_adjust(uint64_t utime, uint64_t stime, uint64_t rtime, uint64_t *user_out,
		    uint64_t *sys_out);

#endif
