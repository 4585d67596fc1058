/*
 * A verb's failure, said twice: one line on stderr for people, and, when the
 * command line asked for JSON (--json, --format json), one error object on
 * stdout for programs, so a pipe into a JSON parser never reads nothing.
 */
#ifndef TRACER_CLIERROR_H
#define TRACER_CLIERROR_H

#include <stdbool.h>

/* From the command line, before the verb runs: does it want JSON? */
void cli_error_want_json(bool wanted);
bool cli_error_json_wanted(void);
/* "tracer VERB: MESSAGE" on stderr; the first message of a run is kept. */
void cli_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* stdout got a document: an error object would make it two. */
void cli_error_output_written(void);
/*
 * At the verb's end: for a non-zero rc, JSON wanted and nothing written,
 * prints {"error", "verb", "exit_code"} on stdout. Returns rc.
 */
int cli_error_finish(const char *verb, int rc);

#endif
