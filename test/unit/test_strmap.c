/*
 * The string map against a plain list scanned in full: after thousands of
 * keys (the map grows several times), every key reads back its latest value,
 * a replaced key its new one, and keys never put read NULL.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/strmap.h"

#define N 5000

static char keys[N][24];
static int values[N];

static void *scan(int n, const char *key)
{
	void *found = NULL;

	for (int i = 0; i < n; i++) /* the last put wins, as in the map */
		if (!strcmp(keys[i], key))
			found = &values[i];
	return found;
}

static void test_agrees_with_a_scan(void **state)
{
	struct strmap m = {0};
	char probe[24];
	(void)state;

	for (int i = 0; i < N; i++) {
		/* Every seventh key repeats an earlier one: a replacement. */
		if (i % 7 == 6)
			snprintf(keys[i], sizeof(keys[i]), "%s", keys[i / 2]);
		else
			snprintf(keys[i], sizeof(keys[i]), "rule_%d:%d", i % 13, i);
		assert_true(strmap_put(&m, keys[i], &values[i]));
	}
	for (int i = 0; i < N; i++)
		assert_ptr_equal(strmap_get(&m, keys[i]), scan(N, keys[i]));
	for (int i = 0; i < 100; i++) {
		snprintf(probe, sizeof(probe), "rule_%d:%d", i % 13, N + i);
		assert_null(strmap_get(&m, probe));
	}
	assert_null(strmap_get(&m, ""));
	assert_true(m.n * 2 <= m.n_slots);
	strmap_free(&m);
	assert_null(strmap_get(&m, keys[0]));
}

/* Removing every third key (in clusters of colliding probes): the removed read
 * NULL, every other key still reads its value, and removed keys can come back. */
static void test_remove_keeps_the_rest_reachable(void **state)
{
	struct strmap m = {0};
	(void)state;

	for (int i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "%d", i);
		assert_true(strmap_put(&m, keys[i], &values[i]));
	}
	for (int i = 0; i < N; i += 3)
		assert_true(strmap_remove(&m, keys[i]));
	assert_false(strmap_remove(&m, keys[0]));
	assert_int_equal(m.n, N - (N + 2) / 3);
	for (int i = 0; i < N; i++)
		assert_ptr_equal(strmap_get(&m, keys[i]), i % 3 ? &values[i] : NULL);
	for (int i = 0; i < N; i += 3)
		assert_true(strmap_put(&m, keys[i], &values[i]));
	for (int i = 0; i < N; i++)
		assert_ptr_equal(strmap_get(&m, keys[i]), &values[i]);
	strmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_agrees_with_a_scan),
	    cmocka_unit_test(test_remove_keeps_the_rest_reachable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
