/*
 * Where a step's time went: the shares of the measured time and the sentence
 * for each character, against numbers worked out by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cli/render/explain.h"
#include "cli/render/jsonfield.h"

#define S 1000000000LL

static json_t *step(const char *character, int64_t cpu, int64_t io, int64_t runq, int64_t sleep)
{
	return json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I}", "name", "align",
			 "character", character, "cpu_ns", (json_int_t)cpu, "iowait_ns",
			 (json_int_t)io, "runq_ns", (json_int_t)runq, "reclaim_ns", (json_int_t)0,
			 "sleep_ns", (json_int_t)sleep, "avg_cores", 1.5, "read_bytes",
			 (json_int_t)(3 << 20), "write_bytes", (json_int_t)0);
}

static void test_io_bound_step(void **state)
{
	json_t *s = step("io", 2 * S, 6 * S, 0, 2 * S);

	explain_time(s);
	json_t *shares = json_object_get(s, "shares");
	assert_float_equal(jnum(shares, "io_wait"), 0.6, 1e-12);
	assert_float_equal(jnum(shares, "cpu"), 0.2, 1e-12);
	assert_float_equal(jnum(shares, "sleep"), 0.2, 1e-12);
	assert_non_null(
	    strstr(jstr(s, "explanation"), "align spent 60% of its time waiting on disk"));
	assert_non_null(strstr(jstr(s, "explanation"), "read 3.0 MiB"));
	json_decref(s);
}

static void test_contended_and_compute_steps(void **state)
{
	/* Runnable 4 s, of which 1 s waiting for a CPU: 25%. */
	json_t *s = step("contended", 3 * S, 0, 1 * S, 0);

	explain_time(s);
	assert_non_null(strstr(jstr(s, "explanation"), "waited for one 25% of the time"));
	json_decref(s);
	s = step("compute", 9 * S, 0, 0, 1 * S);
	explain_time(s);
	assert_non_null(strstr(jstr(s, "explanation"), "compute-bound: 90% of its time on a CPU"));
	json_decref(s);
}

static void test_network_bound_step(void **state)
{
	/* 1 s CPU, 7 s blocked on the network (6 receiving, 1 connecting), 2 s asleep. */
	json_t *s = step("network", 1 * S, 0, 0, 2 * S);

	json_object_set_new(s, "net_wait_ns", json_integer(7 * S));
	json_object_set_new(s, "net_wait_recv_ns", json_integer(6 * S));
	json_object_set_new(s, "net_wait_connect_ns", json_integer(1 * S));
	json_object_set_new(s, "net_rx_bytes", json_integer(5 << 20));
	explain_time(s);
	json_t *shares = json_object_get(s, "shares");
	assert_float_equal(jnum(shares, "network_wait"), 0.7, 1e-12);
	assert_float_equal(jnum(shares, "sleep"), 0.2, 1e-12);
	assert_non_null(strstr(jstr(s, "explanation"),
			       "align was network-bound: blocked on the network 70% of its time "
			       "(mostly receiving), moving 5.0 MiB"));
	json_decref(s);
}

static void test_nothing_measured(void **state)
{
	json_t *s = step("compute", 0, 0, 0, 0);

	explain_time(s);
	assert_string_equal(jstr(s, "explanation"), "no time measured");
	assert_null(json_object_get(s, "shares"));
	json_decref(s);
}

static void test_exit_meanings(void **state)
{
	char out[200];

	explain_exit(false, 127, out, sizeof(out));
	assert_non_null(strstr(out, "exit code 127: the command was not found"));
	explain_exit(false, 141, out, sizeof(out));
	assert_non_null(strstr(out, "killed by a signal (128 + signal) 13 (SIGPIPE: Broken pipe)"));
	explain_exit(true, 9, out, sizeof(out));
	assert_non_null(strstr(out, "killed by signal 9 (SIGKILL: Killed)"));
	explain_exit(true, 11, out, sizeof(out));
	assert_non_null(strstr(out, "killed by signal 11 (SIGSEGV: Segmentation fault)"));
	explain_exit(false, 2, out, sizeof(out));
	assert_non_null(strstr(out, "missing input"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exit_meanings),
	    cmocka_unit_test(test_io_bound_step),
	    cmocka_unit_test(test_network_bound_step),
	    cmocka_unit_test(test_contended_and_compute_steps),
	    cmocka_unit_test(test_nothing_measured),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
