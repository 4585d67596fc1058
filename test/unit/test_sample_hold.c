/*
 * Samples of a fork child are held in the outbox until its exec shows whether it
 * is recorded. When the release cannot be queued (out of memory), the process
 * must stay held, or its later samples are queued once on their own and again
 * by the release at the next aggregator start. realloc is wrapped (the link
 * uses --wrap=realloc) so that the test can make it fail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "aggregator/ingest.h"
#include "aggregator/outbox.h"
#include "aggregator/store.h"

#define SEC 1000000000ULL
#define CHILD 200
#define CHILD_START (100 * SEC)

static bool fail_realloc;

void *__real_realloc(void *ptr, size_t size);
void *__wrap_realloc(void *ptr, size_t size);

void *__wrap_realloc(void *ptr, size_t size)
{
	return fail_realloc ? NULL : __real_realloc(ptr, size);
}

static struct store st;
static struct outbox ob;
static struct ingest g;

static int setup(void **state)
{
	(void)state;
	assert_int_equal(store_open(&st, ":memory:"), 0);
	assert_int_equal(outbox_open(&ob, st.db, 64 << 20, NULL), 0);
	st.outbox = &ob;
	assert_int_equal(ingest_init(&g, &st, SCOPE_ALL, NULL, NULL, NULL), 0);
	snprintf(g.boot_id, sizeof(g.boot_id), "b0");
	ingest_new_generation(&g);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ingest_free(&g);
	outbox_close(&ob);
	store_close(&st);
	return 0;
}

static void commit(void)
{
	assert_int_equal(store_begin(&st), 0);
	assert_int_equal(ingest_write(&g), 0);
	assert_int_equal(store_commit(&st), 0);
	ingest_committed(&g, 0);
}

static int64_t query_int(const char *sql)
{
	sqlite3_stmt *s;
	int64_t v = -1;

	assert_int_equal(sqlite3_prepare_v2(st.db, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

static void fork_child(void)
{
	Tracer__Event ev = TRACER__EVENT__INIT;
	Tracer__ForkEvent f = TRACER__FORK_EVENT__INIT;

	f.pid = CHILD;
	f.has_start_ns = 1;
	f.start_ns = CHILD_START;
	f.parent_pid = 1;
	f.parent_start_ns = SEC;
	f.comm = "worker";
	ev.ts_ns = CHILD_START;
	ev.kind_case = TRACER__EVENT__KIND_FORK;
	ev.fork = &f;
	ingest_event(&g, &ev);
}

/* A sample of the child at CHILD_START + seconds, busy since the last one. */
static void sample_child(unsigned seconds)
{
	Tracer__Event ev = TRACER__EVENT__INIT;
	Tracer__SampleEvent x = TRACER__SAMPLE_EVENT__INIT;

	x.pid = CHILD;
	x.start_ns = CHILD_START;
	x.has_runtime_ns = x.has_utime_ns = 1;
	x.runtime_ns = x.utime_ns = seconds * SEC / 2;
	x.has_rss_kb = 1;
	x.rss_kb = 1000;
	ev.ts_ns = CHILD_START + seconds * SEC;
	ev.kind_case = TRACER__EVENT__KIND_SAMPLE;
	ev.sample = &x;
	ingest_event(&g, &ev);
}

static void exit_child(unsigned seconds)
{
	Tracer__Event ev = TRACER__EVENT__INIT;
	Tracer__ExitEvent x = TRACER__EXIT_EVENT__INIT;

	x.pid = CHILD;
	x.start_ns = CHILD_START;
	x.comm = "worker";
	ev.ts_ns = CHILD_START + seconds * SEC;
	ev.kind_case = TRACER__EVENT__KIND_EXIT;
	ev.exit = &x;
	ingest_event(&g, &ev);
}

/* Outbox sample rows, and distinct sample keys among them. */
static void outbox_samples(int64_t *rows, int64_t *keys)
{
	*rows = query_int("SELECT count(*) FROM outbox WHERE kind = 'samples'");
	*keys = query_int("SELECT count(DISTINCT record_key) FROM outbox WHERE kind = 'samples'");
}

static void test_release_that_fails_keeps_the_hold(void **state)
{
	(void)state;
	int64_t rows, keys;

	fork_child();
	sample_child(1);
	sample_child(2);
	commit();
	outbox_samples(&rows, &keys);
	assert_int_equal(rows, 0); /* held: no exec yet, within the 5 s */

	/* Past the hold: the release is due, and no memory is left for it. */
	fail_realloc = true;
	sample_child(6);
	fail_realloc = false;
	sample_child(7);
	commit();
	outbox_samples(&rows, &keys);
	assert_int_equal(rows, 0); /* still held, the later sample with them */

	exit_child(8);
	commit();
	int64_t stored = query_int("SELECT count(*) FROM samples");
	outbox_samples(&rows, &keys);
	assert_true(stored >= 3);
	assert_int_equal(rows, stored);
	assert_int_equal(keys, stored);

	/* The next aggregator start finds nothing left held. */
	outbox_close(&ob);
	assert_int_equal(outbox_open(&ob, st.db, 64 << 20, NULL), 0);
	outbox_samples(&rows, &keys);
	assert_int_equal(rows, stored);
	assert_int_equal(keys, stored);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_release_that_fails_keeps_the_hold, setup,
					    teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
