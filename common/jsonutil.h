/* JSON helpers over jansson. */
#ifndef TRACER_JSONUTIL_H
#define TRACER_JSONUTIL_H

#include <stddef.h>

#include <jansson.h>

/*
 * argv may hold any bytes; JSON needs UTF-8. Invalid sequences become U+FFFD.
 * Returns a malloc'd string, or NULL on allocation failure.
 */
char *utf8_sanitize(const char *s, size_t len);
/* A JSON array of strings, as malloc'd compact text. */
char *json_string_array(char *const *items, size_t n);
/* A JSON string value that never fails on bad UTF-8. */
json_t *json_string_lossy(const char *s);

#endif
