/* Reading a field of a JSON row (cli_rows_json): missing reads as 0 or "". */
#ifndef TRACER_CLI_JSONFIELD_H
#define TRACER_CLI_JSONFIELD_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

/* An integer; a flag (true/false in JSON, docs/export.md) reads as 1 or 0. */
static inline int64_t jint(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_boolean(v) ? json_is_true(v) : json_integer_value(v);
}

/* Integer or real. */
static inline double jnum(const json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

/* Present and not null. */
static inline bool jhas(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return v && !json_is_null(v);
}

static inline const char *jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* A flag of a row: true for JSON true or a non-zero integer. */
static inline bool cli_flag(const json_t *row, const char *key)
{
	const json_t *v = json_object_get(row, key);

	return json_is_true(v) || (json_is_integer(v) && json_integer_value(v) != 0);
}

#endif
