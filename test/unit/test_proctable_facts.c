/*
 * What reaches a process around and after its exit event, through the real ingest +
 * SQLite path (in-memory database): the exit path's CPU (exit tails), its files and
 * their counts, an OOM mark (test_proctable.c has the rest).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test/unit/ingest_fixture.h"

/*
 * The exit path's CPU comes after the exit event: added to the process's row
 * (before or after the row was written), its step and its run; a tail of a
 * process not known to have exited is counted, not applied.
 */
static void test_exit_tail_adds_the_exit_path(void **state)
{
	char *launcher[] = {"/opt/tracer/bin/tracer", "run", "--run", "R", "--", "bash", "x.sh"};
	char *script[] = {"/usr/bin/bash", "x.sh"};
	char *tool[] = {"/usr/bin/sort", "big"};
	Tracer__Counters none = counters(0, 0, 10);
	Tracer__Counters end = counters(400 * MS, 0, 10), script_end = counters(5 * MS, 0, 10);

	exec_ev(700, 1000, 1, 1, 1100, launcher, 7, NULL, true, -1);
	fork_ev(701, 2000, 700, 1000);
	exec_ev(701, 2000, 700, 1000, 2100, script, 2, &none, false, -1);
	fork_ev(702, 3000, 701, 2000);
	exec_ev(702, 3000, 701, 2000, 3100, tool, 2, &none, false, -1);
	tail_ev(702, 3000, 7 * MS); /* before its exit: not applied */
	exit_ev(702, 3000, 3500, 0, &end);
	tail_ev(702, 3000, 100 * MS); /* same batch: the row is written whole */
	tail_ev(702, 3000, 50 * MS);  /* another thread's exit path: added too */
	commit();
	assert_int_equal(
	    query_int("SELECT cpu_user_ns + cpu_sys_ns FROM processes WHERE pid = 702"), 550 * MS);
	assert_int_equal(query_int("SELECT cpu_ns FROM steps"), 550 * MS);
	exit_ev(701, 2000, 4000, 0, &script_end);
	commit_at(5000);
	tail_ev(701, 2000, 20 * MS); /* after the row was written: updated in place */
	commit_at(6000);
	assert_int_equal(
	    query_int("SELECT cpu_user_ns + cpu_sys_ns FROM processes WHERE pid = 701"), 25 * MS);
	/* The update touched the CPU alone: the row kept its strings. */
	assert_int_equal(
	    query_int("SELECT count(*) FROM processes WHERE pid = 701 AND exe IS NOT NULL"), 1);
	assert_int_equal(query_int("SELECT cpu_ns FROM runs"), 575 * MS);
	assert_int_equal(g.stats.tails_unmatched, 1);
}

/*
 * The collector stamps each read of a process's totals at its exit; a thread
 * released while they were read (the read retried) is in them, and the tail
 * its note from the failed attempt sends is left out. Tails with the exit's
 * stamp are added, and unstamped ones (an older collector) as before.
 */
static void test_exit_tail_of_a_retried_read_is_left_out(void **state)
{
	char *tool[] = {"/usr/bin/java", "-jar", "x.jar"};
	Tracer__Counters none = counters(0, 0, 10), end = counters(400 * MS, 0, 10);

	fork_ev(1, 10, 0, 0);
	fork_ev(900, 100, 1, 10);
	exec_ev(900, 100, 1, 10, 110, tool, 3, &none, false, -1);
	exit_ev_stamped(900, 100, 500, 0, &end, 6);
	tail_ev_stamped(900, 100, 3 * MS, 4); /* released during the failed attempt */
	tail_ev_stamped(900, 100, 2 * MS, 6); /* still exiting after the read */
	tail_ev_stamped(900, 100, 1 * MS, -1);
	commit();
	assert_int_equal(
	    query_int("SELECT cpu_user_ns + cpu_sys_ns FROM processes WHERE pid = 900"), 403 * MS);
	assert_int_equal(g.stats.tails_unmatched, 0);
}

static void test_files_and_oom(void **state)
{
	char *argv[] = {"/usr/bin/tool"};
	Tracer__Counters c = counters(1, 0, 10);
	Tracer__Event ev = TRACER__EVENT__INIT;
	Tracer__FileEvent f0 = TRACER__FILE_EVENT__INIT, f1 = TRACER__FILE_EVENT__INIT;
	Tracer__FileCountsEvent fc = TRACER__FILE_COUNTS_EVENT__INIT;
	Tracer__OomEvent oom = TRACER__OOM_EVENT__INIT;
	uint32_t count[] = {3, 1}, failed[] = {0, 1}, flags[] = {0, 0101};

	fork_ev(1, 10, 0, 0);
	fork_ev(800, 100, 1, 10);
	exec_ev(800, 100, 1, 10, 110, argv, 1, &c, false, -1);
	f0.pid = f1.pid = 800;
	f0.start_ns = f1.start_ns = 100;
	f0.path = "/data/in.bam";
	f0.slot = 0;
	f1.path = "out.txt";
	f1.relative = 1;
	f1.slot = 1;
	f1.result = -2;
	ev.ts_ns = 120;
	ev.kind_case = TRACER__EVENT__KIND_FILE;
	ev.file = &f0;
	ingest_event(&g, &ev);
	ev.file = &f1;
	ingest_event(&g, &ev);
	commit(); /* counts arrive in a later frame than the opens */
	oom.pid = 800;
	oom.start_ns = 100;
	oom.comm = "tool";
	oom.anon_rss_kb = 5000;
	oom.memcg_limit_kb = 65536;
	ev.kind_case = TRACER__EVENT__KIND_OOM;
	ev.oom = &oom;
	ingest_event(&g, &ev);
	exit_ev(800, 100, 200, 9, &c);
	fc.pid = 800;
	fc.start_ns = 100;
	fc.count = count;
	fc.failed = failed;
	fc.flags_union = flags;
	fc.n_count = fc.n_failed = fc.n_flags_union = 2;
	ev.kind_case = TRACER__EVENT__KIND_FILE_COUNTS;
	ev.file_counts = &fc;
	ingest_event(&g, &ev);
	commit();
	assert_int_equal(query_int("SELECT count FROM files WHERE path = '/data/in.bam'"), 3);
	assert_int_equal(query_int("SELECT result FROM files WHERE path LIKE '%out.txt'"), 2);
	assert_int_equal(query_int("SELECT failed FROM files WHERE path LIKE '%out.txt'"), 1);
	assert_int_equal(query_int("SELECT created FROM files WHERE path LIKE '%out.txt'"), 1);
	assert_int_equal(query_int("SELECT access = 'w' FROM files WHERE path LIKE '%out.txt'"), 1);
	assert_int_equal(query_int("SELECT oom_killed FROM processes WHERE pid = 800"), 1);
	assert_int_equal(
	    query_int("SELECT o.process_id = p.id FROM oom_kills o, processes p WHERE p.pid = 800"),
	    1);
	assert_int_equal(query_int("SELECT memcg_limit_kb FROM oom_kills"), 65536);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_files_and_oom, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_exit_tail_adds_the_exit_path, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_exit_tail_of_a_retried_read_is_left_out, setup,
					    teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
