/*
 * The store's step and run rows, read back with plain SQL by column name: their
 * totals in their columns, and the restart's read of open runs and their steps
 * returns what was written (test_store.c has the process rows).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "aggregator/model/proctable.h"
#include "aggregator/store/store.h"
#define TMPDB_STORE_FIXTURE "store-runs-test"
#include "test/unit/tmpdb.h"

static struct totals_row some_totals(void)
{
	return (struct totals_row){
	    .processes = 3,
	    .images = 5,
	    .failed = 1,
	    .cpu_ns = 500,
	    .has_avg_cores = true,
	    .avg_cores = 1.5,
	    .peak_cores = 2.0,
	    .peak_rss_kb = 700,
	    .max_process_rss_kb = 600,
	    .rchar = 1,
	    .wchar = 2,
	    .read_bytes = 3,
	    .write_bytes = 4,
	    .net_tx_bytes = 5,
	    .net_rx_bytes = 6,
	    .iowait_ns = 7,
	    .runq_ns = 8,
	    .reclaim_ns = 9,
	    .sleep_ns = 10,
	};
}

static void test_step_and_run_totals(void **state)
{
	struct store *s = *state;
	struct run_row run = {.id = 5,
			      .name = "r",
			      .start_epoch_ns = 100,
			      .source = "explicit",
			      .status = "running",
			      .steps = 1};
	struct step_row step = {.id = 6,
				.run_id = 5,
				.key = "k",
				.name = "align",
				.kind = "rule",
				.status = "ok",
				.start_epoch_ns = 100,
				.end_epoch_ns = 300,
				.has_exit_code = true,
				.root_process_id = 40,
				.cpu_limit = 0,
				.memory_limit_kb = 2048};

	run.totals = some_totals();
	step.totals = some_totals();
	step.totals.has_avg_cores = false;
	step.totals.peak_rss_kb = 0;
	assert_int_equal(store_put_run(s, &run), 0);
	assert_int_equal(store_put_step(s, &step), 0);
	assert_string_equal(tmpdb_column(s, "runs", "cpu_ns", 5), "500");
	assert_string_equal(tmpdb_column(s, "runs", "avg_cores", 5), "1.5");
	assert_string_equal(tmpdb_column(s, "runs", "peak_rss_kb", 5), "700");
	assert_string_equal(tmpdb_column(s, "runs", "net_rx_bytes", 5), "6");
	assert_string_equal(tmpdb_column(s, "runs", "sleep_ns", 5), "10");
	assert_string_equal(tmpdb_column(s, "runs", "images", 5), "5");
	assert_string_equal(tmpdb_column(s, "steps", "images", 6), "5");
	assert_string_equal(tmpdb_column(s, "runs", "end_ns", 5), "NULL");
	assert_string_equal(tmpdb_column(s, "steps", "failed_processes", 6), "1");
	assert_string_equal(tmpdb_column(s, "steps", "avg_cores", 6), "NULL");
	assert_string_equal(tmpdb_column(s, "steps", "peak_rss_kb", 6), "NULL");
	assert_string_equal(tmpdb_column(s, "steps", "cpu_limit", 6), "NULL");
	assert_string_equal(tmpdb_column(s, "steps", "memory_limit_kb", 6), "2048");
	assert_string_equal(tmpdb_column(s, "steps", "exit_code", 6), "0");
	assert_string_equal(tmpdb_column(s, "steps", "end_ns", 6), "300");

	/* A step rewritten in place (update_or_insert) keeps one row. */
	step.totals.cpu_ns = 900;
	assert_int_equal(store_put_step(s, &step), 0);
	assert_string_equal(tmpdb_column(s, "steps", "cpu_ns", 6), "900");
}

struct seen_runs {
	int runs, steps;
	int64_t run_id;
	char source[16], step_name[256];
	char job_store[256], engine_job[128];
	struct store *store;
};

static int keep_step(void *ctx, const struct stored_step *st)
{
	struct seen_runs *seen = ctx;

	seen->steps++;
	snprintf(seen->step_name, sizeof(seen->step_name), "%s", st->name);
	snprintf(seen->engine_job, sizeof(seen->engine_job), "%s", st->engine_job);
	return 0;
}

static int keep_run(void *ctx, struct open_run *o)
{
	struct seen_runs *seen = ctx;

	seen->runs++;
	seen->run_id = o->row.id;
	snprintf(seen->source, sizeof(seen->source), "%s", o->row.source);
	snprintf(seen->job_store, sizeof(seen->job_store), "%s", o->toil_job_store);
	store_each_step_of_run(seen->store, o->row.id, keep_step, seen);
	free(o->row.name);
	free(o->row.pipeline);
	return 0;
}

static void test_open_runs_and_their_steps(void **state)
{
	struct store *s = *state;
	struct run_row open = {.id = 8,
			       .name = "open",
			       .start_epoch_ns = 1,
			       .source = "engine",
			       .toil_job_store = "file:/w/js"};
	struct run_row ended = {
	    .id = 9, .name = "ended", .start_epoch_ns = 1, .end_epoch_ns = 2, .source = "script"};
	struct step_row step = {.id = 10,
				.run_id = 8,
				.key = "k",
				.name = "sort",
				.kind = "rule",
				.status = "running",
				.start_epoch_ns = 1,
				.engine_job = "kind-burn/instance-1"};
	struct seen_runs seen = {.store = s};

	assert_int_equal(store_put_run(s, &open), 0);
	assert_int_equal(store_put_run(s, &ended), 0);
	assert_int_equal(store_put_step(s, &step), 0);
	assert_int_equal(store_each_open_run(s, keep_run, &seen), 0);
	assert_int_equal(seen.runs, 1);
	assert_int_equal(seen.run_id, 8);
	assert_string_equal(seen.source, "engine");
	assert_int_equal(seen.steps, 1);
	assert_string_equal(seen.step_name, "sort");
	/* A restarted aggregator keeps the keys that join Toil's jobs to the run. */
	assert_string_equal(seen.job_store, "file:/w/js");
	assert_string_equal(seen.engine_job, "kind-burn/instance-1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_step_and_run_totals, open_store, close_store),
	    cmocka_unit_test_setup_teardown(test_open_runs_and_their_steps, open_store,
					    close_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
