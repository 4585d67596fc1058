#include "common/log.h"

#include "common/timeutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *log_program = "tracer";
static enum log_level log_level = LOG_LVL_INFO;
static const char *const level_names[] = {"error", "warn", "info", "debug"};

void log_init(const char *program)
{
	log_program = program;
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

void log_msg(enum log_level level, const char *fmt, ...)
{
	struct timespec ts;
	struct utc_time t;
	va_list ap;

	if (level > log_level)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	utc_from_unix(ts.tv_sec, &t); /* not gmtime_r: see utc_from_unix */
	fprintf(stderr, "%04lld-%02d-%02dT%02d:%02d:%02d.%03ldZ %s[%d] %s: ", (long long)t.year,
		t.month, t.day, t.hour, t.minute, t.second, ts.tv_nsec / 1000000, log_program,
		(int)getpid(), level_names[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
