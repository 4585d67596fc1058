/*
 * Right-sizing against values worked out by hand from docs/cost.md's rule:
 * memory = peak x (1 + headroom) rounded up to 64 MiB, CPUs = ceil(peak cores
 * x (1 + headroom)) or 1 for single-core work, verdicts from used / given,
 * and the cheapest instance that fits (GPU and burstable types left out).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli/cost/prices.h"
#include "cli/cost/rightsize.h"

static double num(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

static const char *str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static void test_memory_and_cpus_from_peaks(void **state)
{
	struct host_capacity host = {.cpus = 8, .memory_gib = 32};
	/* 1000 MiB peak in a 4 GiB cgroup, 2.5 cores of 8. */
	json_t *s = json_pack("{s:f, s:f, s:f}", "peak_rss_kb", 1000.0 * 1024, "peak_cores", 2.5,
			      "memory_limit_kb", 4.0 * 1024 * 1024);

	rightsize_step(s, 0.2, &host);
	/* 1000 MiB x 1.2 = 1200 MiB -> 1216 MiB (19 x 64) = 1.1875 GiB. */
	assert_float_equal(num(s, "memory_recommended_gib"), 1.1875, 1e-12);
	assert_float_equal(num(s, "memory_given_gib"), 4.0, 1e-12);
	assert_string_equal(str(s, "memory_given_from"), "cgroup limit");
	assert_string_equal(str(s, "memory_verdict"), "over-provisioned");
	/* 2.5 x 1.2 = 3 CPUs of the host's 8. */
	assert_int_equal(json_integer_value(json_object_get(s, "cpus_recommended")), 3);
	assert_float_equal(num(s, "cpus_given"), 8.0, 1e-12);
	assert_string_equal(str(s, "cpu_verdict"), "over-provisioned");
	json_decref(s);
}

static void test_single_core_and_near_the_limit(void **state)
{
	struct host_capacity host = {.cpus = 2, .memory_gib = 4};
	/* 3.8 GiB of the host's 4 (no limit), one core at most. */
	json_t *s = json_pack("{s:f, s:f}", "peak_rss_kb", 3.8 * 1024 * 1024, "peak_cores", 1.02);

	rightsize_step(s, 0.2, &host);
	assert_string_equal(str(s, "memory_given_from"), "host");
	assert_string_equal(str(s, "memory_verdict"), "under-provisioned");
	assert_int_equal(json_integer_value(json_object_get(s, "cpus_recommended")), 1);
	/* 1 of 2 CPUs recommended is under 0.67 of what it has. */
	assert_string_equal(str(s, "cpu_verdict"), "over-provisioned");
	json_decref(s);
}

static void test_network_wait_keeps_its_cpus(void **state)
{
	struct host_capacity host = {.cpus = 8, .memory_gib = 32};

	/* 0.3 cores of 8 for 100 s: shrunk to one CPU when it waited on nothing we
	 * measure; kept at 8 when 40 s of it was blocked on the network (0.4 >= 0.3). */
	for (int i = 0; i < 2; i++) {
		json_t *s =
		    json_pack("{s:f, s:f, s:f, s:f}", "peak_rss_kb", 100.0 * 1024, "peak_cores",
			      0.3, "wall_ns", 100e9, "net_wait_ns", i ? 40e9 : 0.0);

		rightsize_step(s, 0.2, &host);
		assert_int_equal(json_integer_value(json_object_get(s, "cpus_recommended")),
				 i ? 8 : 1);
		assert_string_equal(str(s, "cpu_verdict"),
				    i ? "network-bound" : "over-provisioned");
		/* Its memory is sized as ever: waiting does not change its peak. */
		assert_string_equal(str(s, "memory_verdict"), "over-provisioned");
		json_decref(s);
	}
}

static void test_oom_killed_step_gets_more_than_its_limit(void **state)
{
	struct host_capacity host = {.cpus = 8, .memory_gib = 32};

	/* Killed at its 64 MiB limit having shown 44 MiB: it needed more than 64. As
	 * advice whether it ran a minute or was killed in 1.4 s: run again, it fails again. */
	for (int i = 0; i < 2; i++) {
		json_t *s = json_pack("{s:f, s:f, s:f, s:i, s:f}", "peak_rss_kb", 44.0 * 1024,
				      "peak_cores", 1.0, "memory_limit_kb", 64.0 * 1024,
				      "oom_killed", 1, "wall_ns", i ? 1.4e9 : 60e9);

		rightsize_step(s, 0.2, &host);
		assert_string_equal(str(s, "memory_verdict"), "under-provisioned");
		/* 64 MiB x 1.2 = 76.8 MiB -> 128 MiB (2 x 64 MiB). */
		assert_float_equal(num(s, "memory_recommended_gib"), 0.125, 1e-12);
		assert_true(num(s, "memory_recommended_gib") * 1024 > 64);
		assert_null(json_object_get(s, "too_short"));
		json_decref(s);
	}
}

static void test_cpus_never_above_the_host_and_short_steps(void **state)
{
	struct host_capacity host = {.cpus = 2, .memory_gib = 4};
	/* 1.9 cores x 1.2 = 2.28 -> 3, but the host has 2. */
	json_t *s = json_pack("{s:f, s:f, s:f}", "peak_rss_kb", 100.0 * 1024, "peak_cores", 1.9,
			      "wall_ns", 2e6);

	rightsize_step(s, 0.2, &host);
	assert_int_equal(json_integer_value(json_object_get(s, "cpus_recommended")), 2);
	assert_string_equal(str(s, "cpu_verdict"), "under-provisioned");
	/* 2 ms in all: too short to be worth advice. */
	assert_true(json_is_true(json_object_get(s, "too_short")));
	json_decref(s);
}

static void test_cheapest_instance_that_fits(void **state)
{
	struct price rows[] = {
	    {"aws", "us-east-1", "small", "on-demand", "general", 0.05, 2, 1, "x86_64"},
	    {"aws", "us-east-1", "big", "on-demand", "general", 0.40, 16, 4, "x86_64"},
	    {"aws", "us-east-1", "mid", "on-demand", "memory", 0.20, 8, 2, "x86_64"},
	    {"aws", "us-east-1", "gpu", "on-demand", "gpu", 0.10, 64, 8, "x86_64"},
	    {"aws", "us-east-1", "burst", "on-demand", "burstable", 0.01, 8, 2, "x86_64"},
	    {"aws", "us-east-1", "mid-spot", "spot", "memory", 0.06, 8, 2, "x86_64"},
	    {"aws", "eu-west-1", "cheap-eu", "on-demand", "general", 0.01, 8, 2, "x86_64"},
	    /* Cheaper, but for other binaries: only ever an option. */
	    {"aws", "us-east-1", "mid-arm", "on-demand", "memory", 0.15, 8, 2, "arm64"},
	    {"aws", "us-east-1", "mid-arm-spot", "spot", "memory", 0.03, 8, 2, "arm64"},
	};
	struct price_table t = {.rows = rows, .n = sizeof(rows) / sizeof(rows[0])};
	struct rightsize_totals tot = {0};
	/* Recommended 2 CPUs and 6 GiB; 2 hours of wall time; $0.50/h now. */
	json_t *s = json_pack("{s:f, s:i, s:f}", "memory_recommended_gib", 6.0, "cpus_recommended",
			      2, "wall_ns", 7.2e12);

	rightsize_price(s, &t, "us-east-1", "x86_64", 0.50, &tot);
	json_t *inst = json_object_get(s, "instance");
	assert_non_null(inst);
	assert_string_equal(str(inst, "type"), "mid");
	assert_float_equal(num(s, "usd_now"), 1.00, 1e-9);
	assert_float_equal(num(s, "usd_recommended"), 0.40, 1e-9);
	assert_float_equal(num(s, "usd_saving"), 0.60, 1e-9);
	assert_string_equal(str(json_object_get(s, "spot"), "type"), "mid-spot");
	assert_float_equal(num(json_object_get(s, "spot"), "usd"), 0.12, 1e-9);
	assert_float_equal(tot.usd_now, 1.00, 1e-9);
	assert_float_equal(tot.usd_recommended, 0.40, 1e-9);
	json_t *other = json_object_get(s, "other_arch");
	assert_non_null(other);
	assert_string_equal(str(other, "type"), "mid-arm");
	assert_string_equal(str(other, "arch"), "arm64");

	/* Nothing fits 32 CPUs: no instance, nothing added to the totals. */
	json_t *huge = json_pack("{s:f, s:i, s:f}", "memory_recommended_gib", 1.0,
				 "cpus_recommended", 32, "wall_ns", 3.6e12);
	rightsize_price(huge, &t, "us-east-1", "x86_64", 0.50, &tot);
	assert_null(json_object_get(huge, "instance"));
	assert_float_equal(tot.usd_now, 1.00, 1e-9);
	json_decref(huge);
	json_decref(s);
}

/* Binaries built for arm64: x86_64 types are the option, never the advice. */
static void test_instance_advice_keeps_the_architecture(void **state)
{
	struct price rows[] = {
	    {"aws", "us-east-1", "x86-mid", "on-demand", "memory", 0.10, 8, 2, "x86_64"},
	    {"aws", "us-east-1", "arm-mid", "on-demand", "memory", 0.20, 8, 2, "arm64"},
	};
	struct price_table t = {.rows = rows, .n = 2};
	struct rightsize_totals tot = {0};
	json_t *s = json_pack("{s:f, s:i, s:f}", "memory_recommended_gib", 6.0, "cpus_recommended",
			      2, "wall_ns", 3.6e12);

	(void)state;
	rightsize_price(s, &t, "us-east-1", "arm64", 0.50, &tot);
	assert_string_equal(str(json_object_get(s, "instance"), "type"), "arm-mid");
	assert_string_equal(str(json_object_get(s, "other_arch"), "type"), "x86-mid");
	/* An unknown architecture (a run recorded before v11): any type. */
	json_t *any = json_pack("{s:f, s:i, s:f}", "memory_recommended_gib", 6.0,
				"cpus_recommended", 2, "wall_ns", 3.6e12);
	rightsize_price(any, &t, "us-east-1", NULL, 0.50, &tot);
	assert_string_equal(str(json_object_get(any, "instance"), "type"), "x86-mid");
	assert_null(json_object_get(any, "other_arch"));
	json_decref(any);
	json_decref(s);
}

static void test_architecture_names(void **state)
{
	(void)state;
	assert_string_equal(prices_arch("aarch64"), "arm64");
	assert_string_equal(prices_arch("x86_64"), "x86_64");
	assert_null(prices_arch("riscv64"));
	assert_string_equal(prices_aws_type_arch("c7g.large"), "arm64");
	assert_string_equal(prices_aws_type_arch("m6gd.xlarge"), "arm64");
	assert_string_equal(prices_aws_type_arch("im4gn.large"), "arm64");
	assert_string_equal(prices_aws_type_arch("a1.large"), "arm64");
	assert_string_equal(prices_aws_type_arch("g5g.xlarge"), "arm64");
	assert_string_equal(prices_aws_type_arch("g4dn.xlarge"), "x86_64");
	assert_string_equal(prices_aws_type_arch("m5.large"), "x86_64");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_memory_and_cpus_from_peaks),
	    cmocka_unit_test(test_single_core_and_near_the_limit),
	    cmocka_unit_test(test_oom_killed_step_gets_more_than_its_limit),
	    cmocka_unit_test(test_network_wait_keeps_its_cpus),
	    cmocka_unit_test(test_cpus_never_above_the_host_and_short_steps),
	    cmocka_unit_test(test_cheapest_instance_that_fits),
	    cmocka_unit_test(test_instance_advice_keeps_the_architecture),
	    cmocka_unit_test(test_architecture_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
