/*
 * Process entries' slabs: every entry given is zeroed and distinct, and after
 * a burst the slabs go back to the allocator but for a few kept empty.
 * Under ASan a read of an entry given back fails (the slab poisons it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aggregator/model/proctable.h"

#define BURST 5000

static int all_zero(const struct proc *p)
{
	struct proc copy = *p;
	static const struct proc zero;

	copy.links.slab = NULL;
	return !memcmp(&copy, &zero, sizeof(copy));
}

static void test_burst_then_release(void **state)
{
	struct proc_slabs s = {0};
	struct proc **got = calloc(BURST, sizeof(*got));
	(void)state;

	assert_non_null(got);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < BURST; i++) {
			got[i] = proc_slab_get(&s);
			assert_non_null(got[i]);
			assert_true(all_zero(got[i]));
			/* Dirty it so that the next round sees whether it was zeroed. */
			memset(&got[i]->row, 0xab, sizeof(got[i]->row));
			got[i]->pid = (uint32_t)i + 1;
		}
		/* 5000 entries need at least 5000/48 slabs; none is shared by two live entries. */
		assert_true(s.n_slabs >= BURST / 48);
		for (int i = 0; i < BURST; i++)
			assert_int_equal(got[i]->pid, (uint32_t)i + 1);
		/* Given back in an order unlike the one given out. */
		for (int i = 0; i < BURST; i += 2)
			proc_slab_put(&s, got[i]);
		for (int i = BURST - 1; i > 0; i -= 2)
			proc_slab_put(&s, got[i]);
		assert_true(s.n_slabs <= 4);
		assert_int_equal(s.n_empty, s.n_slabs);
	}
	proc_slabs_free(&s);
	assert_int_equal(s.n_slabs, 0);
	free(got);
}

/* A few live entries keep only their own slabs: the rest are freed. */
static void test_survivors_keep_their_slabs(void **state)
{
	struct proc_slabs s = {0};
	struct proc **got = calloc(BURST, sizeof(*got));
	(void)state;

	assert_non_null(got);
	for (int i = 0; i < BURST; i++)
		got[i] = proc_slab_get(&s);
	for (int i = 0; i < BURST; i++)
		if (i % 1000)
			proc_slab_put(&s, got[i]);
	/* 5 survivors in 5 slabs, plus at most 4 empty ones kept. */
	assert_true(s.n_slabs <= 5 + 4);
	for (int i = 0; i < BURST; i += 1000)
		proc_slab_put(&s, got[i]);
	proc_slabs_free(&s);
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_burst_then_release),
	    cmocka_unit_test(test_survivors_keep_their_slabs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
