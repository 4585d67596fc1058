/* Where a run's or step's time went, in numbers and in a sentence (tracer explain). */
#ifndef TRACER_CLI_EXPLAIN_H
#define TRACER_CLI_EXPLAIN_H

#include <jansson.h>

/*
 * From a row with cpu_ns, iowait_ns, runq_ns, reclaim_ns, sleep_ns, its
 * character (compute, io, contended, memory, network, waiting) and the
 * numbers each sentence quotes, adds "shares" (of the measured time) and
 * "explanation". The sentence names the row by name_for_text, name or key.
 */
void explain_time(json_t *s);

#endif
