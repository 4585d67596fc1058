#include "cli/render/format.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include <jansson.h>

int64_t format_parse_duration(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	double unit = !*end || !strcmp(end, "s") ? 1
		      : !strcmp(end, "m")	 ? 60
		      : !strcmp(end, "h")	 ? 3600
		      : !strcmp(end, "d")	 ? 86400
						 : 0;
	return v > 0 && unit > 0 ? (int64_t)(v * unit * 1e9) : 0;
}

void format_duration(int64_t ns, char *out, size_t size)
{
	double s = (double)ns / 1e9;

	if (ns < 0) {
		snprintf(out, size, "-");
	} else if (s < 1e-3) {
		snprintf(out, size, "%.0fus", s * 1e6);
	} else if (s < 1) {
		snprintf(out, size, "%.0fms", s * 1e3);
	} else if (s < 60) {
		snprintf(out, size, "%.2fs", s);
	} else if (s < 3600) {
		int m = (int)(s / 60);
		snprintf(out, size, "%dm%02ds", m, (int)(s - m * 60));
	} else {
		int h = (int)(s / 3600);
		snprintf(out, size, "%dh%02dm", h, (int)((s - h * 3600) / 60));
	}
}

void format_bytes(uint64_t bytes, char *out, size_t size)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)bytes;
	unsigned u = 0;

	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, size, "%llu B", (unsigned long long)bytes);
	else
		snprintf(out, size, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
}

static bool times_in_utc;

void format_use_utc(bool utc)
{
	times_in_utc = utc;
}

void format_time(int64_t epoch_ns, char *out, size_t size)
{
	time_t secs = (time_t)(epoch_ns / 1000000000LL);
	struct tm tm;

	if (times_in_utc) {
		gmtime_r(&secs, &tm);
		strftime(out, size, "%Y-%m-%d %H:%M:%S UTC", &tm);
		return;
	}
	/* The reader's own clock, its zone named: what `date` shows them. */
	localtime_r(&secs, &tm);
	strftime(out, size, "%Y-%m-%d %H:%M:%S %Z", &tm);
}

void format_command(const char *argv_json, const char *fallback, char *out, size_t size)
{
	json_t *arr = argv_json ? json_loads(argv_json, 0, NULL) : NULL;
	size_t o = 0;

	out[0] = '\0';
	if (!json_is_array(arr) || json_array_size(arr) == 0) {
		snprintf(out, size, "%s", fallback ? fallback : "?");
		json_decref(arr);
		return;
	}
	for (size_t i = 0; i < json_array_size(arr) && o + 1 < size; i++) {
		const char *a = json_string_value(json_array_get(arr, i));
		bool quote = a && (strchr(a, ' ') || a[0] == '\0');
		int n = snprintf(out + o, size - o, quote ? "%s'%s'" : "%s%s", i ? " " : "",
				 a ? a : "");
		if (n < 0)
			break;
		o += (size_t)n < size - o ? (size_t)n : size - o - 1;
	}
	json_decref(arr);
	/* One line per process: newlines and tabs in scripts become visible escapes. */
	for (char *c = out; *c; c++)
		if (*c == '\n' || *c == '\t' || *c == '\r')
			*c = ' ';
}

/* Decimals that show three significant digits of a (0 < a < 0.01), at most 8 (a
 * table's 10 columns; less than $0.000000005 is $0.00000000). */
static int small_amount_decimals(double a)
{
	int d = 2;

	while (a < 1 && d < 8) {
		a *= 10;
		d++;
	}
	return d;
}

void format_amount(double v, char *out, size_t size)
{
	double a = v < 0 ? -v : v;

	if (a == 0)
		snprintf(out, size, "0");
	else if (a >= 1)
		snprintf(out, size, "%.2f", v);
	else if (a >= 0.01)
		snprintf(out, size, "%.4f", v);
	else /* small runs: three significant digits, in decimals, never 4.88e-05 */
		snprintf(out, size, "%.*f", small_amount_decimals(a), v);
}

void format_column(const char *s, int width, char *out, size_t size)
{
	int chars = 0;
	size_t o = 0;

	for (const char *p = s; *p; p++)
		chars += (*p & 0xC0) != 0x80;
	bool cut = chars > width;
	int keep = cut ? width - 1 : chars, seen = 0;
	for (const char *p = s; *p && o + 4 < size; p++) {
		if ((*p & 0xC0) != 0x80 && seen++ == keep)
			break;
		out[o++] = *p;
	}
	if (cut && o + 4 < size) {
		memcpy(out + o, "\xe2\x80\xa6", 3); /* … */
		o += 3;
	}
	for (int pad = width - (cut ? width : chars); pad > 0 && o + 1 < size; pad--)
		out[o++] = ' ';
	out[o] = '\0';
}

static const char *print_wrapped_line(FILE *out, const char *line, int width);

void print_fitted(FILE *out, const char *text, int width)
{
	char line[4096], cut[4096 * 3];

	while (*text) {
		if (*text == FORMAT_WHOLE_LINE[0]) {
			text = width > 8 ? print_wrapped_line(out, text + 1, width) : text + 1;
			continue;
		}
		size_t n = strcspn(text, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1),
			 text);
		int chars = 0;
		for (const char *p = line; *p; p++)
			chars += (*p & 0xC0) != 0x80;
		if (width > 0 && chars > width) {
			format_column(line, width, cut, sizeof(cut));
			fprintf(out, "%s\n", cut);
		} else {
			fprintf(out, "%s\n", line);
		}
		text += n;
		if (*text == '\n')
			text++;
	}
}

/* Bytes of the colour code (ESC [ ... letter) at p, 0 if none. */
static size_t escape_length(const char *p)
{
	size_t n = 2;

	if (p[0] != '\033' || p[1] != '[')
		return 0;
	while (p[n] && !((p[n] >= 'A' && p[n] <= 'Z') || (p[n] >= 'a' && p[n] <= 'z')))
		n++;
	return p[n] ? n + 1 : n;
}

/* Prints the first line of text (up to '\n' or the end) wrapped; returns where it ended. */
static const char *print_wrapped_line(FILE *out, const char *line, int width)
{
	size_t len = strcspn(line, "\n");
	int indent = 0;

	while (indent < (int)len && line[indent] == ' ')
		indent++;
	int hang = indent + 2 <= width / 3 ? indent + 2 : width / 3;
	const char *p = line, *end = line + len;
	int prefix = 0; /* columns of indentation already printed on this row */
	while (p < end) {
		int col = prefix;
		const char *q = p, *cut = NULL;
		while (q < end) {
			size_t esc = escape_length(q);
			if (esc) {
				q += esc;
				continue;
			}
			if (*q == ' ' && q > p && q[-1] != ' ')
				cut = q; /* after a word, not inside the indentation */
			if ((*q & 0xC0) != 0x80 && col++ == width)
				break;
			q++;
		}
		if (q >= end) {
			fwrite(p, 1, (size_t)(end - p), out);
			break;
		}
		/* Past the width: at the last space that fits, else mid-word. */
		const char *stop = cut && cut > p ? cut : q;
		fwrite(p, 1, (size_t)(stop - p), out);
		fprintf(out, "\n%*s", hang, "");
		prefix = hang;
		p = stop;
		while (p < end && *p == ' ')
			p++;
	}
	fputc('\n', out);
	return *end ? end + 1 : end;
}

void print_wrapped(FILE *out, const char *text, int width)
{
	if (width <= 8) {
		fputs(text, out);
		return;
	}
	while (*text)
		text = print_wrapped_line(out, text, width);
}

int print_wrapped_call(int (*fn)(void *ctx), void *ctx, int columns)
{
	char *text = NULL;
	size_t len = 0;
	FILE *terminal = stdout, *gathered = open_memstream(&text, &len);

	if (!gathered)
		return fn(ctx);
	stdout = gathered;
	int rc = fn(ctx);
	fflush(gathered);
	stdout = terminal;
	fclose(gathered);
	if (text)
		print_wrapped(terminal, text, columns);
	free(text);
	fflush(terminal);
	return rc;
}

int format_terminal_columns(int fd)
{
	struct winsize ws;

	return ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 0;
}
