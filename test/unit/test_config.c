/* Collector configuration: good files apply, a bad line is named and changes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "collector/setup/config.h"

static char path[64];

static void write_config(const char *text)
{
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/tracer-config-test-%d.conf", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_defaults(void **state)
{
	struct collector_config c;

	collector_config_defaults(&c);
	for (int g = 0; g < PROBE_GROUPS; g++)
		assert_int_equal(c.enabled[g], g != PROBE_SYSCALLS);
	assert_int_equal(c.sample_ms, 1000);
	assert_string_equal(c.file_exclude[0], "/proc/");
	assert_true(c.exclude_shared_libs);
}

static void test_good_file(void **state)
{
	struct collector_config c;
	char err[256];

	collector_config_defaults(&c);
	write_config("# comment\n[collector]\nsample_interval_ms = 250\nring_mb = 32\n\n"
		     "[probes]\nfiles = off\nsyscalls = yes\n\n[files]\n"
		     "exclude_prefixes = /proc/, /scratch/tmp/\nexclude_shared_libraries = no\n"
		     "[shipper]\nsink = clickhouse://x\n");
	assert_int_equal(collector_config_load(&c, path, err, sizeof(err)), 0);
	assert_int_equal(c.sample_ms, 250);
	assert_int_equal(c.ring_mb, 32);
	assert_false(c.enabled[PROBE_FILES]);
	assert_true(c.enabled[PROBE_SYSCALLS]);
	assert_true(c.enabled[PROBE_OOM]);
	assert_int_equal(c.n_file_exclude, 2);
	assert_string_equal(c.file_exclude[1], "/scratch/tmp/");
	assert_false(c.exclude_shared_libs);
	unlink(path);
}

/* Keys spelt as the command-line options; the shipped file itself loads. */
static void test_option_spellings_and_shipped_file(void **state)
{
	struct collector_config c;
	char err[256];

	collector_config_defaults(&c);
	write_config("[collector]\nsample-ms = 300\nflush-ms = 50\nqueue-mb = 8\n[files]\n"
		     "exclude-shared-libraries = no\n");
	assert_int_equal(collector_config_load(&c, path, err, sizeof(err)), 0);
	assert_int_equal(c.sample_ms, 300);
	assert_int_equal(c.flush_ms, 50);
	assert_int_equal(c.queue_mb, 8);
	assert_false(c.exclude_shared_libs);
	unlink(path);
	collector_config_defaults(&c);
	assert_int_equal(collector_config_load(&c, "deploy/etc/collector.conf", err, sizeof(err)),
			 0);
	assert_int_equal(c.sample_ms, 1000);
	assert_int_equal(c.flush_ms, 200);
}

static void test_bad_lines_are_named(void **state)
{
	struct collector_config c;
	char err[256];
	const char *cases[][2] = {
	    {"[probes]\nfiles = maybe\n", ":2: [probes] files = maybe: expected on or off"},
	    {"[probes]\nprocess = off\n", "cannot be turned off"},
	    {"[probes]\nnope = on\n", "unknown probe group"},
	    {"[collector]\nring_mb = 3\n", "power of two"},
	    {"[collector]\nflush_ms = 10x\n", "expected 1..10000"},
	    {"[collector]\ncolour = blue\n", "unknown setting"},
	    {"[files]\nexclude_prefixes = /a-prefix-longer-than-thirty-two-bytes/\n", "at most 16"},
	    {"this is not ini\n", ":1:"},
	    {"flush_ms = 5\n", ":1: flush_ms = 5: a setting outside any section"},
	    {"[probe]\nfiles = off\n", ":2: [probe] files = off: unknown section"},
	    {"[Collector]\nflush_ms = 5\n", "unknown section"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		collector_config_defaults(&c);
		write_config(cases[i][0]);
		assert_int_equal(collector_config_load(&c, path, err, sizeof(err)), -1);
		if (!strstr(err, cases[i][1]) || !strstr(err, path))
			fail_msg("case %zu: error '%s' lacks '%s' or the path", i, err,
				 cases[i][1]);
		/* Nothing half-applied. */
		assert_true(c.enabled[PROBE_FILES]);
		assert_int_equal(c.ring_mb, 16);
	}
	unlink(path);
	assert_int_equal(collector_config_load(&c, "/nonexistent/tracer.conf", err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "cannot read"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_good_file),
	    cmocka_unit_test(test_option_spellings_and_shipped_file),
	    cmocka_unit_test(test_bad_lines_are_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
