/*
 * The cost split against sums worked out by hand, and cost-center rules
 * (user before group before the longest cgroup prefix).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cli/cost/costsplit.h"

static const struct cost_bucket *bucket(const struct cost_tally *t, const char *key)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->items[i].key, key))
			return &t->items[i];
	fail_msg("no bucket %s", key);
	return NULL;
}

static void test_split_adds_up_to_the_host_cost(void **state)
{
	struct cost_tally t = {0};
	struct cost_totals tot;

	/* $3.60/h for 1000 s is $1.00; capacity 2 CPUs (2000 CPU-s) and 4 GiB (4000 GiB-s). */
	assert_true(cost_tally_add(&t, "align", 300, 600));
	assert_true(cost_tally_add(&t, "align", 200, 400)); /* 500 CPU-s, 1000 GiB-s */
	assert_true(cost_tally_add(&t, "sort", 1200, 0));
	cost_split(&t, 3.6, 1000, 2, 4.0, 0.5, &tot);
	assert_int_equal(t.n, 2);
	/* align: 0.5 * 500/2000 + 0.5 * 1000/4000 = 0.25; sort: 0.5 * 1200/2000 = 0.30. */
	assert_float_equal(tot.total_usd, 1.00, 1e-12);
	assert_float_equal(bucket(&t, "align")->usd, 0.25, 1e-12);
	assert_float_equal(bucket(&t, "sort")->usd, 0.30, 1e-12);
	assert_float_equal(bucket(&t, "sort")->share, 0.30, 1e-12);
	assert_int_equal(bucket(&t, "align")->processes, 2);
	assert_float_equal(tot.work_usd, 0.55, 1e-12);
	assert_float_equal(tot.idle_usd, 0.45, 1e-12);
	assert_float_equal(tot.work_usd + tot.idle_usd, tot.total_usd, 1e-12);

	/* All by CPU: sort alone is 1200/2000 of it. */
	cost_split(&t, 3.6, 1000, 2, 4.0, 1.0, &tot);
	assert_float_equal(bucket(&t, "sort")->usd, 0.60, 1e-12);
	assert_float_equal(bucket(&t, "align")->usd, 0.25, 1e-12);
	cost_tally_free(&t);
}

static void test_cost_center_rules(void **state)
{
	struct cost_centers c = {0};

	assert_true(cost_centers_add(&c, "users", "alice", "lab-a"));
	assert_true(cost_centers_add(&c, "groups", "genomics", "lab-g"));
	assert_true(cost_centers_add(&c, "cgroups", "/slurm", "hpc"));
	assert_true(cost_centers_add(&c, "cgroups", "/slurm/uid_1000", "hpc-1000"));
	assert_false(cost_centers_add(&c, "teams", "x", "y"));
	assert_string_equal(cost_center_of(&c, "alice", "genomics", "/slurm/uid_1000/job"),
			    "lab-a");
	assert_string_equal(cost_center_of(&c, "bob", "genomics", "/slurm/uid_1000/job"), "lab-g");
	assert_string_equal(cost_center_of(&c, "bob", "staff", "/slurm/uid_1000/job"), "hpc-1000");
	assert_string_equal(cost_center_of(&c, "bob", "staff", "/slurm/uid_2000"), "hpc");
	assert_string_equal(cost_center_of(&c, "bob", "staff", "/user.slice"), "(unassigned)");
	cost_centers_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_split_adds_up_to_the_host_cost),
	    cmocka_unit_test(test_cost_center_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
