#include "cli/render/export.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/render/clierror.h"

int export_format_parse(const char *verb, const char *text, enum export_format *out)
{
	*out = EXPORT_NONE;
	if (!text)
		return 0;
	if (!strcmp(text, "tsv"))
		*out = EXPORT_TSV;
	else if (!strcmp(text, "csv"))
		*out = EXPORT_CSV;
	else if (!strcmp(text, "json"))
		*out = EXPORT_JSON;
	else {
		cli_error(verb, "--format is tsv, csv or json, got '%s'", text);
		return -1;
	}
	return 0;
}

/* A value as text: strings as they are, numbers in full, lists and objects as JSON. */
static char *value_text(json_t *v)
{
	char buf[64];

	if (!v || json_is_null(v))
		return strdup("");
	if (json_is_string(v))
		return strdup(json_string_value(v));
	if (json_is_integer(v)) {
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return strdup(buf);
	}
	if (json_is_real(v)) {
		snprintf(buf, sizeof(buf), "%.15g", json_real_value(v));
		return strdup(buf);
	}
	if (json_is_boolean(v))
		return strdup(json_is_true(v) ? "1" : "0");
	return json_dumps(v, JSON_COMPACT);
}

/* A field of a CSV or TSV file as pandas' read_csv and R's read.csv/read.delim read it:
 * a field with one of quoting (the separator, a quote, a line end) is quoted, its quotes
 * doubled; backslashes stay as they are. */
static void put_quoted(FILE *out, const char *s, const char *quoting)
{
	if (!strpbrk(s, quoting)) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void put_field(FILE *out, enum export_format f, const char *s, bool first)
{
	if (!first)
		fputc(f == EXPORT_TSV ? '\t' : ',', out);
	put_quoted(out, s, f == EXPORT_TSV ? "\t\"\r\n" : ",\"\r\n");
}

void export_rows(FILE *out, enum export_format f, const char *const *columns, json_t *rows)
{
	size_t i;
	json_t *row;

	cli_error_output_written();
	if (f == EXPORT_JSON) {
		json_t *doc = json_array();
		json_array_foreach(rows, i, row)
		{
			json_t *o = json_object();
			for (const char *const *c = columns; *c; c++) {
				json_t *v = json_object_get(row, *c);
				json_object_set(o, *c, v ? v : json_null());
			}
			json_array_append_new(doc, o);
		}
		json_dumpf(doc, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		fputc('\n', out);
		json_decref(doc);
		return;
	}
	for (const char *const *c = columns; *c; c++)
		put_field(out, f, *c, c == columns);
	fputs(f == EXPORT_CSV ? "\r\n" : "\n", out);
	json_array_foreach(rows, i, row)
	{
		for (const char *const *c = columns; *c; c++) {
			char *text = value_text(json_object_get(row, *c));
			put_field(out, f, text ? text : "", c == columns);
			free(text);
		}
		fputs(f == EXPORT_CSV ? "\r\n" : "\n", out);
	}
}
