/*
 * Idle periods from host samples and step spans, against periods worked out
 * by hand for each case: a hole in the samples, a busy sample, a run active,
 * an unknown CPU, the minimum length, and overlapping or unfinished steps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "cli/cost/idle.h"

#define S 1000000000LL /* one second in ns */

static struct host_tick tick(int64_t ts_s, double cpu, bool run)
{
	return (struct host_tick){.ts_epoch_ns = ts_s * S,
				  .interval_ns = 10 * S,
				  .has_cpu = true,
				  .cpu_busy_pct = cpu,
				  .run_active = run};
}

static void assert_period(const struct idle_periods *p, size_t i, int64_t from_s, int64_t to_s)
{
	assert_true(i < p->n);
	assert_int_equal(p->items[i].from_epoch_ns, from_s * S);
	assert_int_equal(p->items[i].to_epoch_ns, to_s * S);
}

static void test_host_idle_ends_at_busy_run_or_hole(void **state)
{
	struct host_tick t[] = {
	    tick(110, 1, false),  tick(120, 2, false), tick(130, 3, false), /* 100..130 idle */
	    tick(140, 50, false),					    /* busy */
	    tick(150, 1, false),  tick(160, 1, false),			    /* 140..160 */
	    tick(170, 1, true),						    /* a run */
	    tick(180, 1, false),  tick(190, 1, false),			    /* 170..190 */
	    tick(230, 1, false),  tick(240, 1, false), /* after a hole: 220..240 */
	};
	struct idle_periods p = {0};

	assert_int_equal(idle_host_periods(t, sizeof(t) / sizeof(t[0]), 5.0, 15 * S, &p), 0);
	assert_int_equal(p.n, 4);
	assert_period(&p, 0, 100, 130);
	assert_period(&p, 1, 140, 160);
	assert_period(&p, 2, 170, 190);
	assert_period(&p, 3, 220, 240);
	assert_null(p.items[0].run_name);
	assert_true(idle_total_seconds(&p) > 89.999 && idle_total_seconds(&p) < 90.001);
	free(p.items);
}

static void test_host_idle_needs_known_cpu_and_min_length(void **state)
{
	struct host_tick t[] = {tick(110, 1, false), tick(120, 1, false), tick(130, 1, false),
				tick(140, 1, false)};
	struct idle_periods p = {0};

	t[2].has_cpu = false; /* unknown CPU is not idle: 100..120 and 130..140 */
	assert_int_equal(idle_host_periods(t, 4, 5.0, 20 * S, &p), 0);
	assert_int_equal(p.n, 1); /* 130..140 is 10 s, under the minimum */
	assert_period(&p, 0, 100, 120);
	free(p.items);
	p = (struct idle_periods){0};
	/* At the threshold is not under it. */
	assert_int_equal(idle_host_periods(t, 2, 1.0, 0, &p), 0);
	assert_int_equal(p.n, 0);
	free(p.items);
}

static void test_gaps_between_and_after_steps(void **state)
{
	/* Run 1 from 0 to 100 s: steps 10..20, 15..40 (overlapping), 60..70; gaps 0..10,
	 * 40..60, 70..100. Run 2 from 200 to 300 s with a step still running from 250:
	 * gap 200..250 only. */
	struct run_step_span s[] = {
	    {1, "a", 0, 100 * S, 10 * S, false, 20 * S},
	    {1, "a", 0, 100 * S, 15 * S, false, 40 * S},
	    {1, "a", 0, 100 * S, 60 * S, false, 70 * S},
	    {2, "b", 200 * S, 300 * S, 250 * S, true, 0},
	};
	struct idle_periods p = {0};

	assert_int_equal(idle_run_gaps(s, 4, 10 * S, &p), 0);
	assert_int_equal(p.n, 4);
	assert_period(&p, 0, 0, 10);
	assert_period(&p, 1, 40, 60);
	assert_period(&p, 2, 70, 100);
	assert_period(&p, 3, 200, 250);
	assert_string_equal(p.items[2].run_name, "a");
	assert_string_equal(p.items[3].run_name, "b");
	free(p.items);
	p = (struct idle_periods){0};
	/* A minimum of 25 s keeps only the 30 s and 50 s gaps. */
	assert_int_equal(idle_run_gaps(s, 4, 25 * S, &p), 0);
	assert_int_equal(p.n, 2);
	assert_period(&p, 0, 70, 100);
	assert_period(&p, 1, 200, 250);
	free(p.items);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_host_idle_ends_at_busy_run_or_hole),
	    cmocka_unit_test(test_host_idle_needs_known_cpu_and_min_length),
	    cmocka_unit_test(test_gaps_between_and_after_steps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
