/* Small pure helpers: CPU time scaling, argv/path reassembly, UTF-8, run markers, UTC dates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "aggregator/ingest/cputime.h"
#include "aggregator/ingest/runmark.h"
#include "collector/convert/convert.h"
#include "common/jsonutil.h"
#include "common/strutil.h"
#include "common/timeutil.h"

static void test_copy_string(void **state)
{
	char buf[6];

	memset(buf, 'x', sizeof(buf));
	assert_int_equal(copy_string(buf, sizeof(buf), "abc"), 3);
	assert_string_equal(buf, "abc");
	/* Exactly full, then one too long: truncated, always terminated. */
	assert_int_equal(copy_string(buf, sizeof(buf), "abcde"), 5);
	assert_string_equal(buf, "abcde");
	assert_int_equal(copy_string(buf, sizeof(buf), "abcdefgh"), 5);
	assert_string_equal(buf, "abcde");
	assert_int_equal(copy_string(buf, sizeof(buf), NULL), 0);
	assert_string_equal(buf, "");
	assert_int_equal(copy_string(buf, 1, "abc"), 0);
	assert_string_equal(buf, "");
	buf[0] = 'q';
	assert_int_equal(copy_string(buf, 0, "abc"), 0); /* writes nothing */
	assert_int_equal(buf[0], 'q');
	/* Overlapping source (a suffix of the destination) is allowed. */
	copy_string(buf, sizeof(buf), "hello");
	copy_string(buf, sizeof(buf), buf + 2);
	assert_string_equal(buf, "llo");
}

static void test_cputime_adjust(void **state)
{
	uint64_t u, s;

	/* Ticks said 3:1, the scheduler measured 1000 ns exactly. */
	cputime_adjust(300, 100, 1000, &u, &s);
	assert_int_equal(u + s, 1000);
	assert_int_equal(s, 250);
	cputime_adjust(0, 0, 500, &u, &s);
	assert_int_equal(u, 500);
	assert_int_equal(s, 0);
	cputime_adjust(0, 40, 500, &u, &s);
	assert_int_equal(s, 500);
	/* Large values must not overflow. */
	cputime_adjust(UINT64_MAX / 2, UINT64_MAX / 2, UINT64_MAX / 2, &u, &s);
	assert_int_equal(u + s, UINT64_MAX / 2);
}

static void test_split_argv(void **state)
{
	char blob[] = "ls\0-la\0/tmp\0partial";
	char *argv[8];

	/* The kernel cut the blob mid-argument: that argument is dropped, not split. */
	assert_int_equal(split_argv(blob, sizeof(blob) - 1, argv, 8), 3);
	assert_string_equal(argv[2], "/tmp");
	char whole[] = "a\0b\0";
	assert_int_equal(split_argv(whole, sizeof(whole) - 1, argv, 8), 2);
}

static void test_join_path(void **state)
{
	char out[64];
	const char leaf_first[] = "c\0b\0a";

	join_path_components(leaf_first, sizeof(leaf_first), 0, out, sizeof(out));
	assert_string_equal(out, "/a/b/c");
	join_path_components("", 0, 0, out, sizeof(out));
	assert_string_equal(out, "/");
	join_path_components(leaf_first, sizeof(leaf_first), 1, out, sizeof(out));
	assert_string_equal(out, ".../a/b/c");
}

static void test_utf8(void **state)
{
	char *s = utf8_sanitize("ok\xff\xc3\xa9", 5);

	assert_string_equal(s, "ok\xef\xbf\xbd\xc3\xa9");
	free(s);
	/* All ASCII (DEL included), empty, a NUL inside, bad bytes first and last. */
	const char *in[] = {"/usr/bin/true \x7f~", "", "a\0b", "\x80x", "x\xc3"};
	size_t len[] = {16, 0, 3, 2, 2};
	const char *want[] = {"/usr/bin/true \x7f~", "", "a\xef\xbf\xbd\x62", "\xef\xbf\xbdx",
			      "x\xef\xbf\xbd"};
	for (size_t i = 0; i < sizeof(in) / sizeof(*in); i++) {
		s = utf8_sanitize(in[i], len[i]);
		assert_string_equal(s, want[i]);
		free(s);
	}
	char *items[] = {"a\xfe", "b"};
	char *json = json_string_array(items, 2);
	assert_string_equal(json, "[\"a\xef\xbf\xbd\",\"b\"]");
	free(json);
}

/* jansson's own dump of a json_array: what json_string_array must produce byte for byte. */
static char *array_dumped_by_jansson(char *const *items, size_t n)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++)
		assert_int_equal(json_array_append_new(arr, json_string_lossy(items[i])), 0);
	char *text = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	return text;
}

static void test_string_array_matches_jansson(void **state)
{
	static char long_arg[5000];
	memset(long_arg, 'x', sizeof(long_arg) - 1);
	long_arg[100] = '"';
	long_arg[200] = '\n';
	char *cases[][6] = {
	    {"samtools", "sort", "-o", "out.bam"},
	    {"", "a\"b", "back\\slash", "tab\there", "\x01\x1f\x7f"},
	    {"caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "bad\xff", "\xc3", "\xed\xa0\x80"},
	    {long_arg, "\"\"\"\"", long_arg},
	    {"/"},
	};
	size_t counts[] = {4, 5, 6, 3, 1};
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		char *want = array_dumped_by_jansson(cases[c], counts[c]);
		char *got = json_string_array(cases[c], counts[c]);
		assert_non_null(got);
		assert_string_equal(got, want);
		free(got);
		free(want);
	}
	/* Random arguments, mostly plain ASCII with every byte value mixed in. */
	unsigned seed = 12345;
	for (int round = 0; round < 2000; round++) {
		static char store[4][40];
		char *items[4];
		for (int i = 0; i < 4; i++) {
			int len = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 39;
			for (int k = 0; k < len; k++) {
				unsigned r = (seed = seed * 1103515245u + 12345u) >> 16;
				store[i][k] = (char)(r % 8 ? 0x20 + r % 0x60 : 1 + r % 255);
			}
			store[i][len] = '\0';
			items[i] = store[i];
		}
		char *want = array_dumped_by_jansson(items, 4);
		char *got = json_string_array(items, 4);
		assert_non_null(got);
		assert_string_equal(got, want);
		free(got);
		free(want);
	}
	char *none = json_string_array(NULL, 0);
	assert_string_equal(none, "[]");
	free(none);
}

/* counters_from_kernel, packed and decoded as the aggregator decodes it. */
static Tracer__Counters *counters_round_trip(const struct tracer_counters *in, bool groups_on)
{
	Tracer__Counters c;
	uint8_t buf[512];

	convert_set_groups((struct convert_groups){groups_on, groups_on, groups_on, groups_on});
	counters_from_kernel(in, &c, 0);
	size_t n = tracer__counters__pack(&c, buf);
	convert_set_groups((struct convert_groups){true, true, true, true});
	Tracer__Counters *out = tracer__counters__unpack(NULL, n, buf);
	assert_non_null(out);
	return out;
}

/*
 * Every kernel counter reads back as it was, zeros included, though zeros are
 * not sent; each optional group says it was on even when all its counters
 * are 0, and says nothing when it was off.
 */
static void test_counters_read_back(void **state)
{
	struct tracer_counters in;
	uint64_t *field = (uint64_t *)&in;

	(void)state;
	for (size_t i = 0; i < sizeof(in) / sizeof(*field); i++)
		field[i] = i % 3 ? 1000 + i : 0;
	Tracer__Counters *out = counters_round_trip(&in, true);
#define SAME(name) assert_int_equal(out->name, in.name)
	SAME(utime_ns);
	SAME(stime_ns);
	SAME(runtime_ns);
	SAME(vol_ctxsw);
	SAME(invol_ctxsw);
	SAME(min_faults);
	SAME(maj_faults);
	SAME(rchar);
	SAME(wchar);
	SAME(syscr);
	SAME(syscw);
	SAME(read_bytes);
	SAME(write_bytes);
	SAME(cancelled_write_bytes);
	SAME(peak_rss_kb);
	SAME(signal_maxrss_kb);
	SAME(runq_ns);
	SAME(iowait_ns);
	SAME(reclaim_ns);
	SAME(net_tx_bytes);
	SAME(net_rx_bytes);
	SAME(sys_failed);
#undef SAME
	assert_int_equal(out->sys_file, in.sys[TRACER_SYS_FILE]);
	assert_int_equal(out->sys_net, in.sys[TRACER_SYS_NET]);
	assert_int_equal(out->sys_mem, in.sys[TRACER_SYS_MEM]);
	assert_int_equal(out->sys_proc, in.sys[TRACER_SYS_PROC]);
	assert_int_equal(out->sys_other, in.sys[TRACER_SYS_OTHER]);
	tracer__counters__free_unpacked(out, NULL);

	memset(&in, 0, sizeof(in));
	out = counters_round_trip(&in, true);
	assert_true(out->has_iowait_ns && out->has_reclaim_ns && out->has_net_tx_bytes &&
		    out->has_sys_file);
	assert_int_equal(out->runtime_ns + out->rchar + out->iowait_ns + out->sys_file, 0);
	tracer__counters__free_unpacked(out, NULL);
	in.iowait_ns = in.reclaim_ns = in.net_tx_bytes = in.sys[TRACER_SYS_FILE] = 5;
	out = counters_round_trip(&in, false);
	assert_false(out->has_iowait_ns || out->has_reclaim_ns || out->has_net_tx_bytes ||
		     out->has_net_rx_bytes || out->has_sys_file || out->has_sys_failed);
	tracer__counters__free_unpacked(out, NULL);
}

static void test_runmark(void **state)
{
	struct runmark m;
	char *argv[] = {"tracer",   "run", "--pipeline", "rnaseq", "--db=/x.db",
			"--run=r7", "--",  "nextflow",	 "run",	   "main.nf"};
	char *other[] = {"tracer", "show"};

	assert_true(runmark_parse("/usr/local/bin/tracer", argv, 10, &m));
	assert_string_equal(m.pipeline, "rnaseq");
	assert_string_equal(m.run, "r7");
	assert_string_equal(m.command, "nextflow");
	assert_false(runmark_parse("/usr/local/bin/tracer", other, 2, &m));
	assert_false(runmark_parse("/usr/bin/not-tracer", argv, 10, &m));
	assert_true(runmark_is_tracer_daemon("/opt/x/tracer-collector"));
	assert_false(runmark_is_tracer_daemon("/usr/bin/bash"));
}

/* Ground truth: glibc's gmtime_r, at the edges where calendars go wrong (epoch, leap
 * days, century years, 2038, times before 1970) and at a day's worth of odd steps
 * through 1900..2500. */
static void check_against_gmtime(int64_t secs)
{
	time_t t = (time_t)secs;
	struct tm want;
	struct utc_time got;

	assert_non_null(gmtime_r(&t, &want));
	utc_from_unix(secs, &got);
	if (got.year != want.tm_year + 1900 || got.month != want.tm_mon + 1 ||
	    got.day != want.tm_mday || got.hour != want.tm_hour || got.minute != want.tm_min ||
	    got.second != want.tm_sec)
		fail_msg("%lld: got %lld-%d-%d %d:%d:%d", (long long)secs, (long long)got.year,
			 got.month, got.day, got.hour, got.minute, got.second);
}

static void test_utc_from_unix(void **state)
{
	(void)state;
	const int64_t edges[] = {0,	     -1,	  86399,      86400,	   951782400,
				 951868799,  951868800,	  4107542399, 4107542400,  2147483647,
				 2147483648, -2208988800, 1795606610, -62135596800};

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		check_against_gmtime(edges[i]);
	for (int64_t s = -2208988800; s < 16725225600; s += 7919 * 3 + 86400 * 11)
		check_against_gmtime(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cputime_adjust),
	    cmocka_unit_test(test_split_argv),
	    cmocka_unit_test(test_join_path),
	    cmocka_unit_test(test_utf8),
	    cmocka_unit_test(test_string_array_matches_jansson),
	    cmocka_unit_test(test_counters_read_back),
	    cmocka_unit_test(test_runmark),
	    cmocka_unit_test(test_copy_string),
	    cmocka_unit_test(test_utc_from_unix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
