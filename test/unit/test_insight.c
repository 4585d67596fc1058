/* Signal thresholds from the command line; a step's character from its time shares. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "aggregator/insight/insight.h"

static void test_thresholds(void **state)
{
	struct insight_config cfg;
	char err[256];

	(void)state;
	insight_config_defaults(&cfg);
	assert_int_equal(cfg.stall_ns, 60000000000ULL);
	assert_int_equal(insight_config_set(&cfg, "stall-seconds=2.5", err, sizeof(err)), 0);
	assert_int_equal(cfg.stall_ns, 2500000000ULL);
	assert_int_equal(insight_config_set(&cfg, "io-wait-share=0.4", err, sizeof(err)), 0);
	assert_true(cfg.io_wait_share > 0.39 && cfg.io_wait_share < 0.41);
	assert_int_equal(cfg.net_wait_min_ns, 10000000000ULL);
	assert_int_equal(insight_config_set(&cfg, "network-wait-seconds=2", err, sizeof(err)), 0);
	assert_int_equal(cfg.net_wait_min_ns, 2000000000ULL);
	assert_int_equal(insight_config_set(&cfg, "network-wait-share=0.5", err, sizeof(err)), 0);
	assert_true(cfg.net_wait_share > 0.49 && cfg.net_wait_share < 0.51);
	assert_int_equal(insight_config_set(&cfg, "network-wait-share=2", err, sizeof(err)), -1);
	assert_int_equal(insight_config_set(&cfg, "slow-min-history=5", err, sizeof(err)), 0);
	assert_int_equal(cfg.slow_min_history, 5);
	/* Bad input: named, and nothing changes. */
	assert_int_equal(insight_config_set(&cfg, "io-wait-share=1.5", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "io-wait-share"));
	assert_int_equal(insight_config_set(&cfg, "slow-factor=0.5", err, sizeof(err)), -1);
	assert_int_equal(insight_config_set(&cfg, "slow-min-history=2.5", err, sizeof(err)), -1);
	assert_int_equal(insight_config_set(&cfg, "stall-seconds=", err, sizeof(err)), -1);
	assert_int_equal(insight_config_set(&cfg, "stall-seconds=-1", err, sizeof(err)), -1);
	assert_int_equal(insight_config_set(&cfg, "no-such=1", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown"));
	assert_int_equal(insight_config_set(&cfg, "stall-seconds", err, sizeof(err)), -1);
	assert_int_equal(cfg.stall_ns, 2500000000ULL);
}

static void test_character(void **state)
{
	const uint64_t s = 1000000000ULL;
	struct rollup r;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_null(insight_character(&r));
	r.cpu_ns = 8 * s, r.iowait_ns = 1 * s, r.sleep_ns = 1 * s;
	assert_string_equal(insight_character(&r), "compute");
	r.iowait_ns = 9 * s;
	assert_string_equal(insight_character(&r), "io");
	r.iowait_ns = 0, r.runq_ns = 5 * s;
	assert_string_equal(insight_character(&r), "contended");
	r.runq_ns = 0, r.reclaim_ns = 2 * s;
	assert_string_equal(insight_character(&r), "memory");
	/* 16% on a CPU, the rest spread: no one part is the character. */
	memset(&r, 0, sizeof(r));
	r.cpu_ns = 16 * s, r.runq_ns = 25 * s, r.iowait_ns = 24 * s, r.sleep_ns = 35 * s;
	assert_string_equal(insight_character(&r), "mixed");
	r.sleep_ns = 55 * s; /* 55 of 120: asleep is the largest and over 40% */
	assert_string_equal(insight_character(&r), "waiting");
	/* Mostly asleep: waiting, whatever bytes moved; network only from measured wait. */
	memset(&r, 0, sizeof(r));
	r.cpu_ns = 1 * s, r.sleep_ns = 9 * s, r.start_epoch_ns = 1,
	r.end_epoch_ns = 1 + 10 * (int64_t)s;
	r.net_rx_bytes = 100ULL << 20;
	assert_string_equal(insight_character(&r), "waiting");
	r.sleep_ns = 2 * s, r.net_wait_ns = 7 * s;
	assert_string_equal(insight_character(&r), "network");
	r.iowait_ns = 8 * s; /* the larger wait names it */
	assert_string_equal(insight_character(&r), "io");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_thresholds),
	    cmocka_unit_test(test_character),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
