/*
 * Retention on a database the test fills itself with plain SQL: which rows
 * survive is decided here from what was inserted, not read from the code.
 * Age: finished runs and lone processes that ended before the cutoff go with
 * their steps, files, samples and signals; a run with a process still running,
 * a process whose samples the outbox holds, the outbox itself and anything
 * newer stay. Size: the oldest go first, until the data fits.
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

#include "aggregator/store/retention.h"
#include "aggregator/store/store.h"
#define TMPDB_STORE_FIXTURE "retention-test"
#include "test/unit/tmpdb.h"

#define DAY (86400LL * 1000000000LL)
#define NOW (1800000000LL * 1000000000LL)

static void sql(struct store *s, const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	char *err = NULL;
	if (sqlite3_exec(s->db, text, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", text, err);
}

static long long count(struct store *s, const char *query)
{
	sqlite3_stmt *st;
	long long n = -1;
	assert_int_equal(sqlite3_prepare_v2(s->db, query, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/* A run from start to end (end < 0: running) with one process per entry of ends. */
/* The query's single text value ("" for NULL). */
static const char *text(struct store *s, const char *query)
{
	static char out[512];
	sqlite3_stmt *st;
	out[0] = '\0';
	assert_int_equal(sqlite3_prepare_v2(s->db, query, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(out, sizeof(out), "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return out;
}

static void add_run(struct store *s, int id, long long start, long long end,
		    const long long *proc_ends, int n)
{
	if (end >= 0)
		sql(s,
		    "INSERT INTO runs (id, name, start_ns, end_ns) VALUES (%d, 'r%d', %lld, %lld)",
		    id, id, start, end);
	else
		sql(s, "INSERT INTO runs (id, name, start_ns) VALUES (%d, 'r%d', %lld)", id, id,
		    start);
	sql(s,
	    "INSERT INTO steps (id, run_id, key, kind, status) VALUES (%d, %d, 'k', "
	    "'script-step', 'ok')",
	    id, id);
	for (int i = 0; i < n; i++) {
		int pid = id * 100 + i;
		if (proc_ends[i] >= 0)
			sql(s,
			    "INSERT INTO processes (id, pid, proc_start_boot_ns, state, run_id, "
			    "step_id, start_ns, end_ns) VALUES (%d, %d, 1, 'exited', %d, %d, %lld, "
			    "%lld)",
			    pid, pid, id, id, start, proc_ends[i]);
		else
			sql(s,
			    "INSERT INTO processes (id, pid, proc_start_boot_ns, state, run_id, "
			    "step_id, start_ns) VALUES (%d, %d, 1, 'running', %d, %d, %lld)",
			    pid, pid, id, id, start);
		sql(s, "INSERT INTO samples (process_id, ts_ns, rss_kb) VALUES (%d, %lld, 1)", pid,
		    start);
		sql(s,
		    "INSERT INTO files (process_id, path, access, created, open_flags, result, "
		    "count, failed, first_ns) VALUES (%d, '/d/%d', 'r', 0, 0, 0, 1, 0, %lld)",
		    pid, pid, start);
	}
	sql(s,
	    "INSERT INTO signals (run_id, step_id, kind, severity, detected_ns, message) "
	    "VALUES (%d, %d, 'stalled', 'warning', %lld, 'm')",
	    id, id, start);
	sql(s,
	    "INSERT INTO batch_submissions (id, run_id, scheduler, submitter, waits, submit_ns) "
	    "VALUES (%d, %d, 'slurm', 'sbatch', 0, %lld)",
	    id * 100, id, start);
	sql(s,
	    "INSERT INTO batch_jobs (host_id, scheduler, job_id, run_id, link, candidates) "
	    "VALUES ('h', 'slurm', '%d', %d, 'linked', 1)",
	    id, id);
}

static void test_age(void **state)
{
	struct store *s = *state;
	const long long done[] = {NOW - 40 * DAY}, running[] = {NOW - 40 * DAY, -1};
	const long long recent[] = {NOW - 2 * DAY};

	add_run(s, 1, NOW - 41 * DAY, NOW - 40 * DAY, done, 1);	   /* old, finished: goes */
	add_run(s, 2, NOW - 41 * DAY, NOW - 40 * DAY, running, 2); /* a process runs: stays */
	add_run(s, 3, NOW - 3 * DAY, NOW - 2 * DAY, recent, 1);	   /* recent: stays */
	add_run(s, 4, NOW - 50 * DAY, -1, done, 1);		   /* run still open: stays */
	/* Lone host processes: old (goes), old but its samples held for the outbox
	 * (stays), old but running (stays). */
	sql(s,
	    "INSERT INTO processes (id, pid, proc_start_boot_ns, state, start_ns, end_ns) "
	    "VALUES (901, 901, 1, 'exited', %lld, %lld), (902, 902, 1, 'exited', %lld, %lld)",
	    NOW - 45 * DAY, NOW - 44 * DAY, NOW - 45 * DAY, NOW - 44 * DAY);
	sql(s,
	    "INSERT INTO processes (id, pid, proc_start_boot_ns, state, start_ns) VALUES "
	    "(903, 903, 1, 'running', %lld)",
	    NOW - 45 * DAY);
	sql(s,
	    "INSERT INTO samples (process_id, ts_ns) VALUES (901, %lld), (902, %lld), (903, "
	    "%lld), (903, %lld)",
	    NOW - 45 * DAY, NOW - 45 * DAY, NOW - 45 * DAY, NOW - DAY);
	sql(s, "INSERT INTO outbox_held (process_id) VALUES (902)");
	sql(s, "INSERT INTO host_samples (ts_ns, interval_ns) VALUES (%lld, 1), (%lld, 1)",
	    NOW - 31 * DAY, NOW - 29 * DAY);
	sql(s,
	    "INSERT INTO outbox (kind, record_key, priority, created_ns, payload) VALUES "
	    "('processes', '1', 2, %lld, 'x')",
	    NOW - 60 * DAY);

	struct retention r = {.max_age_ns = 30 * DAY};
	struct prune_result p;
	assert_int_equal(store_prune(s, &r, NOW, &p), 0);

	assert_string_equal(
	    text(s, "SELECT group_concat(id) FROM (SELECT id FROM runs ORDER BY id)"), "2,3,4");
	assert_string_equal(text(s, "SELECT group_concat(run_id) FROM (SELECT run_id FROM steps "
				    "ORDER BY run_id)"),
			    "2,3,4");
	assert_string_equal(text(s, "SELECT group_concat(id) FROM (SELECT id FROM processes ORDER "
				    "BY id)"),
			    "200,201,300,400,902,903");
	/* Files and samples of the deleted processes went with them; 903's old sample
	 * went by age, its recent one stayed; 902's are held for the outbox. */
	assert_string_equal(text(s, "SELECT group_concat(process_id) FROM (SELECT process_id FROM "
				    "files ORDER BY process_id)"),
			    "200,201,300,400");
	assert_string_equal(
	    text(s, "SELECT group_concat(process_id || ':' || (ts_ns < 1800000000000000000 - "
		    "30 * 86400000000000)) FROM (SELECT * FROM samples ORDER BY "
		    "process_id, ts_ns)"),
	    "300:0,902:1,903:0");
	assert_string_equal(text(s, "SELECT group_concat(run_id) FROM (SELECT run_id FROM signals "
				    "ORDER BY run_id)"),
			    "2,3,4");
	/* A run's batch rows go with it. */
	assert_string_equal(text(s, "SELECT group_concat(run_id) FROM (SELECT run_id FROM "
				    "batch_submissions ORDER BY run_id)"),
			    "2,3,4");
	assert_string_equal(text(s, "SELECT group_concat(run_id) FROM (SELECT run_id FROM "
				    "batch_jobs ORDER BY run_id)"),
			    "2,3,4");
	assert_int_equal(count(s, "SELECT count(*) FROM host_samples"), 1);
	assert_int_equal(count(s, "SELECT count(*) FROM outbox"), 1);
	assert_int_equal(p.runs, 1);
	assert_int_equal(p.processes, 2);
	assert_int_equal(p.host_samples, 1);
}

/* 40 finished runs, one a day, each with a fat sample: the oldest go until it fits. */
static void test_size(void **state)
{
	struct store *s = *state;
	char *blob = malloc(200001);
	memset(blob, 'x', 200000);
	blob[200000] = '\0';

	for (int d = 0; d < 40; d++) {
		long long end = NOW - (40 - d) * DAY, ends[] = {end};
		add_run(s, d + 1, end - DAY / 2, end, ends, 1);
		sqlite3_stmt *st;
		assert_int_equal(
		    sqlite3_prepare_v2(s->db, "UPDATE samples SET state = ?1 WHERE process_id = ?2",
				       -1, &st, NULL),
		    SQLITE_OK);
		sqlite3_bind_text(st, 1, blob, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 2, (d + 1) * 100);
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
		sqlite3_finalize(st);
	}
	free(blob);
	int64_t before = store_used_bytes(s), bound = before / 2;
	struct retention r = {.max_bytes = bound};
	struct prune_result p;
	assert_int_equal(store_prune(s, &r, NOW, &p), 0);
	assert_true(store_used_bytes(s) <= bound);
	assert_int_equal(p.bytes_before, before);
	/* What remains is the newest runs, without a gap, and at least a third of them. */
	long long left = count(s, "SELECT count(*) FROM runs");
	assert_true(left >= 13 && left <= 20);
	assert_int_equal(count(s, "SELECT min(id) FROM runs"), 40 - left + 1);
	assert_int_equal(count(s, "SELECT max(id) FROM runs"), 40);
	/* Nothing to delete at all: no error, a bound it cannot meet is only reported. */
	r.max_bytes = 1;
	sql(s, "UPDATE processes SET end_ns = NULL, state = 'running'");
	assert_int_equal(store_prune(s, &r, NOW, &p), 0);
	assert_int_equal(count(s, "SELECT count(*) FROM runs"), left);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_age, open_store, close_store),
	    cmocka_unit_test_setup_teardown(test_size, open_store, close_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
