/* Where a run's or step's time went, in numbers and in a sentence (tracer explain). */
#ifndef TRACER_CLI_EXPLAIN_H
#define TRACER_CLI_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/*
 * From a row with cpu_ns, iowait_ns, runq_ns, reclaim_ns, sleep_ns, its
 * character (compute, io, contended, memory, network, waiting) and the
 * numbers each sentence quotes, adds "shares" (of the measured time) and
 * "explanation". The sentence names the row by name_for_text, name or key.
 */
void explain_time(json_t *s);
/* A run's "character" from its time parts, by the rule its steps have (common/character.c). */
void explain_run_character(json_t *run);

/*
 * What an exit status means, in words: "not found (127: the shell could not
 * find the command)", "killed by signal 9 (Killed)". Writes into out.
 */
void explain_exit(bool has_signal, int code, char *out, size_t size);

/*
 * The same for a processes row (its signal, exit_code, oom_killed,
 * killed_by_pid and killed_by_comm, any of them absent): adds who chose or
 * sent the killing signal where that is known. Writes into out.
 */
void explain_process_end(const json_t *p, char *out, size_t size);

/* Two more columns for a query of the runs row with id ?1: its processes with no end
 * (still running, or lost), whose use is in none of its totals. */
#define RUN_UNFINISHED_COLUMNS                                                                     \
	" (SELECT count(*) FROM processes p WHERE p.run_id = ?1 AND p.state = 'running')"          \
	" AS running_processes,"                                                                   \
	" (SELECT count(*) FROM processes p WHERE p.run_id = ?1 AND p.state = 'lost')"             \
	" AS lost_processes"

#endif
