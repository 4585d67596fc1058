/*
 * Bounded string copies for the per-event paths. snprintf(dst, n, "%s", src)
 * does the same job through the whole printf machinery (~500 instructions a
 * call, a dozen calls per process in an exec storm); this is a strnlen and a
 * memcpy.
 */
#ifndef TRACER_STRUTIL_H
#define TRACER_STRUTIL_H

#include <stddef.h>

/*
 * Copies src into dst (size bytes), truncating, always NUL-terminated when
 * size > 0; a NULL src copies "". Returns the length copied.
 */
size_t copy_string(char *dst, size_t size, const char *src);

#endif
