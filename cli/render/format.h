/* Units humans read: 1m32s, 512 MiB. */
#ifndef TRACER_FORMAT_H
#define TRACER_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

void format_duration(int64_t ns, char *out, size_t size);
/* The other way, for options: "24h", "90m", "2d", "3600s", "600" (seconds) -> ns; 0 if
 * unreadable or not positive. */
int64_t format_parse_duration(const char *s);
void format_bytes(uint64_t bytes, char *out, size_t size);
/*
 * s in exactly width terminal columns: padded with spaces, or cut with "…" as
 * its last column when longer (UTF-8 counted by characters).
 */
void format_column(const char *s, int width, char *out, size_t size);
/* The width of the terminal fd writes to, in columns; 0 if it is not one. */
int format_terminal_columns(int fd);
/*
 * text line by line, each cut to width columns with "…" (a terminal's width; <= 0: as is),
 * except a line that starts with FORMAT_WHOLE_LINE: wrapped as print_wrapped does, the
 * marker dropped (a command to type, a path: cut, it would be useless).
 */
#define FORMAT_WHOLE_LINE "\001"
void print_fitted(FILE *out, const char *text, int width);
/*
 * text line by line, a line wider than width columns wrapped at its last
 * space that fits, the rest indented two columns under the line's own
 * indentation (colour codes take no columns; width <= 0: as is).
 */
void print_wrapped(FILE *out, const char *text, int width);
/*
 * Calls fn(ctx) with stdout gathered, then prints what it printed with
 * print_wrapped to columns; returns fn's result (it runs as is if stdout
 * cannot be gathered).
 */
int print_wrapped_call(int (*fn)(void *ctx), void *ctx, int columns);
/* A money or GiB-hour amount with the digits that matter: 12.35, 0.0123, 0.000123. */
void format_amount(double v, char *out, size_t size);
/* "2026-11-22 14:45:00 CET": local time, or UTC after format_use_utc(true) (--utc). */
void format_time(int64_t epoch_ns, char *out, size_t size);
void format_use_utc(bool utc);
/* Joins a JSON argv array for display, quoting words with spaces. */
void format_command(const char *argv_json, const char *fallback, char *out, size_t size);

/* "process" or "processes", "step" or "steps": the noun for a count of n. */
static inline const char *plural(long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

#endif
