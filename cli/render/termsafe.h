/*
 * What the CLI prints for people is text. The database holds what processes
 * chose to put in their argv, names and paths, and on a shared host that can
 * be another user's terminal control sequences: clearing the screen, moving
 * the cursor to forge lines of a report, OSC 52 to write the reader's
 * clipboard. A stream from termsafe_open() turns every control byte (C0 but
 * newline, tab and CSV's CR LF; ESC, DEL, C1, malformed UTF-8) into '?', one
 * for one, so columns stay aligned. Our own colours are written as
 * TERMSAFE_MARK and a letter, which no UTF-8 text can hold, and leave it as
 * their escape sequences (`top` clears the screen past the stream).
 */
#ifndef TRACER_CLI_TERMSAFE_H
#define TRACER_CLI_TERMSAFE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define TERMSAFE_MARK "\xff"
#define TERMSAFE_RESET TERMSAFE_MARK "0"
#define TERMSAFE_RED TERMSAFE_MARK "r"
#define TERMSAFE_YELLOW TERMSAFE_MARK "y"
#define TERMSAFE_CYAN TERMSAFE_MARK "c"

/* A stream writing the filtered bytes to fd (stdout or stderr, once each); NULL if none. */
FILE *termsafe_open(int fd);
/* Whether stdout is such a stream, so colour marks become colours (else: no colour). */
bool termsafe_stdout(void);

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
