/*
 * Log lines under systemd: a "<N>" syslog priority prefix exactly when stderr
 * is the stream JOURNAL_STREAM names (sd-daemon(3)), the usual timestamped
 * line otherwise. Ground truth: the bytes written to the file behind stderr.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/log.h"

/* Logs one line per level with stderr on a fresh file; returns what was written. */
static void log_levels_to_file(const char *journal_stream, char *out, size_t n)
{
	char path[] = "/tmp/tracer-test-log-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	struct stat st;
	fstat(fd, &st);
	char value[64];
	if (journal_stream && !strcmp(journal_stream, "match"))
		snprintf(value, sizeof(value), "%llu:%llu", (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino);
	else if (journal_stream)
		snprintf(value, sizeof(value), "%s", journal_stream);
	if (journal_stream)
		setenv("JOURNAL_STREAM", value, 1);
	else
		unsetenv("JOURNAL_STREAM");
	log_init("test");
	log_set_level(LOG_LVL_DEBUG);
	log_error("e %d", 1);
	log_warn("w");
	log_warn("run '%s' failed", "x\033[2J\ny\033]52;c;aGk=\007\xc2\x9b\x7fz\tq");
	log_info("i");
	log_debug("d");
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	ssize_t got = pread(fd, out, n - 1, 0);
	out[got > 0 ? got : 0] = '\0';
	close(fd);
	unlink(path);
	unsetenv("JOURNAL_STREAM");
}

static void test_priorities_under_journald(void **state)
{
	char out[1024];
	(void)state;
	log_levels_to_file("match", out, sizeof(out));
	/* What a process chose as its name reaches the line as text, on one line. */
	assert_string_equal(out, "<3>error: e 1\n<4>warn: w\n"
				 "<4>warn: run 'x?[2J?y?]52;c;aGk=????z\tq' failed\n"
				 "<6>info: i\n<7>debug: d\n");
}

static void test_plain_lines_elsewhere(void **state)
{
	char out[1024];
	(void)state;
	log_levels_to_file(NULL, out, sizeof(out));
	assert_null(strchr(out, '<'));
	assert_non_null(strstr(out, "Z test["));
	assert_non_null(strstr(out, "] error: e 1\n"));
	/* A stream that is not stderr (say, inherited by a child whose stderr was
	 * redirected): no prefixes. */
	log_levels_to_file("1:2", out, sizeof(out));
	assert_null(strchr(out, '<'));
	log_levels_to_file("garbage", out, sizeof(out));
	assert_null(strchr(out, '<'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_priorities_under_journald),
	    cmocka_unit_test(test_plain_lines_elsewhere),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
