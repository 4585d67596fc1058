/*
 * Rows for other programs (docs/export.md): `--format tsv|csv|json` of show,
 * runs, signals and cost. Columns are fixed per verb and documented; a value
 * that is itself a list or an object (argv) is written as compact JSON.
 */
#ifndef TRACER_CLI_EXPORT_H
#define TRACER_CLI_EXPORT_H

#include <stdio.h>

#include <jansson.h>

enum export_format {
	EXPORT_NONE, /* the verb's own text (or --json document) */
	EXPORT_TSV,  /* a header line, then tab-separated rows; a field with a tab, quote or line
		      * end quoted as in CSV (pandas and R read it back) */
	EXPORT_CSV,  /* RFC 4180: fields with , " CR or LF quoted, quotes doubled */
	EXPORT_JSON, /* an array of objects with the same columns */
};

/* "tsv", "csv", "json" (NULL: none). -1 with the reason printed for anything else. */
int export_format_parse(const char *verb, const char *text, enum export_format *out);

/* Writes rows (an array of objects) with exactly these columns, in this order
 * (a column missing from a row is empty, or null in JSON). */
void export_rows(FILE *out, enum export_format f, const char *const *columns, json_t *rows);

#endif
