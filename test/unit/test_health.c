/*
 * tracer status's verdict: healthy only with nothing lost, every probe of the
 * newest collector present, that collector alive (or ended), and nothing
 * dropped by the shipper.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli/health.h"

#define NOW (1000LL * 1000000000LL)

static json_t *stream(int64_t last_seen, const char *probe_state)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:[{s:s, s:s}]}", "kernel_drops", (json_int_t)0,
			 "collector_drops", (json_int_t)0, "seq_gaps", (json_int_t)0, "final",
			 (json_int_t)0, "last_seen_ns", (json_int_t)last_seen, "probes", "name",
			 "process", "state", probe_state);
}

static void test_verdicts(void **state)
{
	json_t *none = json_array();
	json_t *streams = json_pack("[o, o]", stream(NOW - 1, "active"), stream(0, "missing"));

	/* An older collector's missing probe and silence do not count. */
	assert_true(health_verdict(streams, none, NULL, NULL, NOW));
	/* The newest collector silent for over a minute. */
	assert_false(health_verdict(streams, none, NULL, NULL, NOW + HEALTH_STALE_NS));
	/* ... unless it ended. */
	json_object_set_new(json_array_get(streams, 0), "final", json_integer(1));
	assert_true(health_verdict(streams, none, NULL, NULL, NOW + HEALTH_STALE_NS));
	/* A missing probe now. */
	json_t *missing = json_pack("[o]", stream(NOW, "missing"));
	assert_false(health_verdict(missing, none, NULL, NULL, NOW));
	/* Drops in any stream, a loss row, skipped events, shipper drops. */
	json_object_set_new(json_array_get(streams, 1), "seq_gaps", json_integer(2));
	assert_false(health_verdict(streams, none, NULL, NULL, NOW));
	json_object_set_new(json_array_get(streams, 1), "seq_gaps", json_integer(0));
	json_t *loss = json_pack("[{s:s}]", "hop", "kernel");
	assert_false(health_verdict(streams, loss, NULL, NULL, NOW));
	json_t *agg = json_pack("{s:I}", "events_skipped", (json_int_t)1);
	assert_false(health_verdict(streams, none, agg, NULL, NOW));
	json_t *ship = json_pack("{s:I}", "dead_letter_records", (json_int_t)3);
	assert_false(health_verdict(streams, none, NULL, ship, NOW));
	json_decref(ship);
	json_decref(agg);
	json_decref(loss);
	json_decref(missing);
	json_decref(streams);
	json_decref(none);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_verdicts)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
