/*
 * What the CLI prints for people is text. The database holds what processes
 * chose to put in their argv, names and paths, and on a shared host that can
 * be another user's terminal control sequences: clearing the screen, moving
 * the cursor to forge lines of a report, OSC 52 to write the reader's
 * clipboard. A stream from termsafe_open() lets our own colour codes through
 * (`top` clears the screen past it) and turns every other control byte
 * (C0 but newline, tab and CSV's CR LF; DEL, C1, malformed UTF-8) into '?',
 * one for one, so columns stay aligned.
 */
#ifndef TRACER_CLI_TERMSAFE_H
#define TRACER_CLI_TERMSAFE_H

#include <stddef.h>
#include <stdio.h>

/* A stream writing the filtered bytes to fd (one per process); NULL if one cannot be made. */
FILE *termsafe_open(int fd);

/*
 * The filter itself, for tests: filters n bytes of in into out (room for n
 * bytes) and returns how many it wrote; state carries a sequence split
 * between calls (zero it first; end with a call of n = 0 to release it).
 */
struct termsafe_state {
	char held[8]; /* an escape sequence or a UTF-8 lead byte, undecided */
	size_t n_held;
	int continuation; /* UTF-8 continuation bytes still expected */
};
size_t termsafe_filter(struct termsafe_state *st, const char *in, size_t n, char *out);

#endif
