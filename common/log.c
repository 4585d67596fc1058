#include "common/log.h"

#include "common/timeutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *log_program = "tracer";
static enum log_level log_level = LOG_LVL_INFO;
static const char *const level_names[] = {"error", "warn", "info", "debug"};

/* Syslog priorities (sd-daemon(3)'s "<N>" prefixes) by level. */
static const int journal_priority[] = {3, 4, 6, 7};
static int to_journal;

/*
 * systemd sets JOURNAL_STREAM (our own environment, not a watched process's)
 * to the device and inode of the stream it connected to stderr; when stderr
 * is still that stream, lines carry a priority prefix for `journalctl -p`
 * and no timestamp of their own (the journal stamps each line).
 */
static int stderr_is_journal(void)
{
	const char *stream = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!stream || sscanf(stream, "%llu:%llu", &dev, &ino) != 2 ||
	    fstat(STDERR_FILENO, &st) != 0)
		return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_init(const char *program)
{
	log_program = program;
	to_journal = stderr_is_journal();
}

int log_set_level_name(const char *name)
{
	for (unsigned i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcmp(name, level_names[i]) == 0) {
			log_level = (enum log_level)i;
			return 0;
		}
	}
	return -1;
}

void log_set_level(enum log_level level)
{
	log_level = level;
}

enum log_level log_get_level(void)
{
	return log_level;
}

/*
 * Messages carry names and argv that processes chose (a run's, a tool's), and
 * the self-hosted daemons write to the user's terminal: control bytes (a
 * newline too, which would forge a log line) become '?', as do the C1 controls
 * U+0080..U+009F.
 */
static void make_one_line_of_text(char *text)
{
	for (unsigned char *c = (unsigned char *)text; *c; c++) {
		if ((*c < 0x20 && *c != '\t') || *c == 0x7f)
			*c = '?';
		else if (*c == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f)
			c[0] = c[1] = '?';
	}
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	char text[8192];
	struct timespec ts;
	struct utc_time t;
	va_list ap;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	make_one_line_of_text(text);
	if (to_journal) {
		fprintf(stderr, "<%d>%s: %s\n", journal_priority[level], level_names[level], text);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	utc_from_unix(ts.tv_sec, &t); /* not gmtime_r: see utc_from_unix */
	fprintf(stderr, "%04lld-%02d-%02dT%02d:%02d:%02d.%03ldZ %s[%d] %s: ", (long long)t.year,
		t.month, t.day, t.hour, t.minute, t.second, ts.tv_nsec / 1000000, log_program,
		(int)getpid(), level_names[level]);
	fprintf(stderr, "%s\n", text);
}
