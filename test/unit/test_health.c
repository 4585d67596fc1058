/*
 * tracer status's verdict: healthy only with nothing lost, every probe of the
 * newest collector present, that collector alive (or ended), and nothing
 * dropped by the shipper.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cli/model/health.h"

#define NOW (1000LL * 1000000000LL)

static json_t *stream(int64_t last_seen, const char *probe_state)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:[{s:s, s:s}]}", "kernel_drops", (json_int_t)0,
			 "collector_drops", (json_int_t)0, "seq_gaps", (json_int_t)0, "final",
			 (json_int_t)0, "last_seen_ns", (json_int_t)last_seen, "probes", "name",
			 "process", "state", probe_state);
}

static bool healthy(const json_t *streams, const json_t *losses, const json_t *agg,
		    const json_t *shipping, int64_t now)
{
	char buf[256];
	struct health_input in = {streams, losses, agg, shipping, "ok", -1, NULL, now};

	return health_problem(&in, buf, sizeof(buf)) == NULL;
}

static void test_verdicts(void **state)
{
	json_t *none = json_array();
	json_t *streams = json_pack("[o, o]", stream(NOW - 1, "active"), stream(0, "missing"));

	/* An older collector's missing probe and silence do not count. */
	assert_true(healthy(streams, none, NULL, NULL, NOW));
	/* The newest collector silent for over a minute. */
	assert_false(healthy(streams, none, NULL, NULL, NOW + HEALTH_STALE_NS));
	/* ... unless it ended. */
	json_object_set_new(json_array_get(streams, 0), "final", json_integer(1));
	assert_true(healthy(streams, none, NULL, NULL, NOW + HEALTH_STALE_NS));
	/* A missing probe now. */
	json_t *missing = json_pack("[o]", stream(NOW, "missing"));
	assert_false(healthy(missing, none, NULL, NULL, NOW));
	/* Drops in any stream, a blind window, a loss row, skipped events, shipper drops. */
	json_object_set_new(json_array_get(streams, 1), "seq_gaps", json_integer(2));
	assert_false(healthy(streams, none, NULL, NULL, NOW));
	json_object_set_new(json_array_get(streams, 1), "seq_gaps", json_integer(0));
	json_object_set_new(json_array_get(streams, 1), "blind_processes", json_integer(4));
	assert_false(healthy(streams, none, NULL, NULL, NOW));
	json_object_set_new(json_array_get(streams, 1), "blind_processes", json_integer(0));
	json_t *loss = json_pack("[{s:s}]", "hop", "kernel");
	assert_false(healthy(streams, loss, NULL, NULL, NOW));
	json_t *agg = json_pack("{s:I}", "events_skipped", (json_int_t)1);
	assert_false(healthy(streams, none, agg, NULL, NOW));
	json_t *ship = json_pack("{s:I}", "dead_letter_records", (json_int_t)3);
	assert_false(healthy(streams, none, NULL, ship, NOW));
	json_decref(ship);
	json_decref(agg);
	json_decref(loss);
	json_decref(missing);
	json_decref(streams);
	json_decref(none);
}

/* The database damaged or its disk nearly full; the sink failing or no shipper shipping. */
static void test_database_and_shipping(void **state)
{
	json_t *none = json_array();
	json_t *streams = json_pack("[o]", stream(NOW - 1, "active"));
	char buf[256];
	struct health_input in = {streams, none, NULL, NULL, "ok", 10LL << 30, NULL, NOW};

	assert_null(health_problem(&in, buf, sizeof(buf)));
	in.db_check = "*** in database main ***\nPage 7: btreeInitPage() returns error code 11";
	assert_non_null(strstr(health_problem(&in, buf, sizeof(buf)), "the database is damaged"));
	in.db_check = "ok";
	in.db_free_bytes = HEALTH_MIN_FREE_BYTES - 1;
	assert_non_null(strstr(health_problem(&in, buf, sizeof(buf)), "MiB free"));
	in.db_free_bytes = HEALTH_MIN_FREE_BYTES;
	assert_null(health_problem(&in, buf, sizeof(buf)));
	in.db_read_only = "its file is read-only (mode 0444)";
	assert_non_null(strstr(health_problem(&in, buf, sizeof(buf)), "cannot be written"));
	in.db_read_only = NULL;

	/* Failing, but the oldest record is young: retries are still within reason. */
	json_t *ship =
	    json_pack("{s:I, s:I, s:s, s:f, s:I}", "last_error_ns", (json_int_t)(NOW - 5),
		      "last_success_ns", (json_int_t)(NOW - 90), "last_error", "HTTP 503 busy",
		      "oldest_age_s", 30.0, "delivered_through", (json_int_t)7);
	in.shipping = ship;
	assert_null(health_problem(&in, buf, sizeof(buf)));
	json_object_set_new(ship, "oldest_age_s", json_real(HEALTH_SINK_FAILING_S + 1));
	const char *why = health_problem(&in, buf, sizeof(buf));
	assert_non_null(why);
	assert_non_null(strstr(why, "the sink is failing"));
	assert_non_null(strstr(why, "HTTP 503 busy"));
	/* It recovered since: the backlog is draining. */
	json_object_set_new(ship, "last_success_ns", json_integer(NOW));
	assert_null(health_problem(&in, buf, sizeof(buf)));
	/* No error, but nothing shipped for a long time with a shipper set up. */
	json_object_set_new(ship, "oldest_age_s", json_real(HEALTH_SHIP_STALLED_S + 1));
	assert_non_null(strstr(health_problem(&in, buf, sizeof(buf)), "waited"));
	json_object_del(ship, "delivered_through");
	assert_null(health_problem(&in, buf, sizeof(buf)));
	json_decref(ship);
	json_decref(streams);
	json_decref(none);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_verdicts),
					   cmocka_unit_test(test_database_and_shipping)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
