/*
 * Process table semantics through the real ingest + SQLite path (in-memory
 * database): PID reuse, exec in place, an exit seen before its exec,
 * snapshot merging, lost processes, explicit runs; samples of a fork child held
 * in the outbox, facts that come after the row was written (the exit tail, files
 * and an OOM mark: test_proctable_facts.c). realloc is wrapped
 * (the link uses --wrap=realloc) so that a test can make it fail.
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

static bool fail_realloc;

void *__real_realloc(void *ptr, size_t size);
void *__wrap_realloc(void *ptr, size_t size);

void *__wrap_realloc(void *ptr, size_t size)
{
	return fail_realloc ? NULL : __real_realloc(ptr, size);
}

static void test_pid_reuse_never_merges(void **state)
{
	char *a[] = {"/bin/a"}, *b[] = {"/bin/b"};
	Tracer__Counters c = counters(10, 1, 100);

	fork_ev(100, 1000, 1, 1);
	exec_ev(100, 1000, 1, 1, 1100, a, 1, &c, false, -1);
	exit_ev(100, 1000, 1200, 0, &c);
	assert_int_equal(assert_live_list_is_the_unexited(), 0);
	fork_ev(100, 5000, 1, 1); /* same pid, new process */
	exec_ev(100, 5000, 1, 1, 5100, b, 1, &c, false, -1);
	assert_int_equal(assert_live_list_is_the_unexited(), 1);
	commit();
	assert_int_equal(query_int("SELECT count(*) FROM processes WHERE pid = 100"), 2);
	assert_int_equal(
	    query_int("SELECT count(DISTINCT proc_start_boot_ns) FROM processes WHERE pid = 100"),
	    2);
	assert_int_equal(
	    query_int("SELECT count(*) FROM processes WHERE pid = 100 AND state = 'running'"), 1);
	/* Reuse without the old exit: the old one is marked lost, not merged. */
	fork_ev(100, 9000, 1, 1);
	assert_int_equal(assert_live_list_is_the_unexited(), 1);
	commit();
	assert_int_equal(
	    query_int("SELECT count(*) FROM processes WHERE pid = 100 AND state = 'lost'"), 1);
	assert_int_equal(query_int("SELECT count(*) FROM processes WHERE pid = 100"), 3);
}

static void test_exec_in_place(void **state)
{
	char *bash[] = {"/usr/bin/bash", "-c", "a; b"}, *tool[] = {"/usr/bin/true"};
	Tracer__Counters zero = counters(0, 0, 0);
	Tracer__Counters at = counters(3000000, 50, 0);
	Tracer__Counters tot = counters(5000000, 80, 900);

	fork_ev(1, 10, 0, 0);
	fork_ev(200, 100, 1, 10);
	exec_ev(200, 100, 1, 10, 110, bash, 3, &zero, false, 64); /* first exec: same row */
	exec_ev(200, 100, 1, 10, 500, tool, 1, &at, false, 2944); /* in place: new image */
	exit_ev(200, 100, 600, 3 << 8, &tot);
	commit();
	assert_int_equal(query_int("SELECT count(*) FROM processes WHERE pid = 200"), 2);
	assert_int_equal(
	    query_int("SELECT state = 'exec' FROM processes WHERE pid = 200 AND image = 0"), 1);
	assert_int_equal(
	    query_int("SELECT cpu_user_ns FROM processes WHERE pid = 200 AND image = 0"), 3000000);
	assert_int_equal(
	    query_int("SELECT max_rss_kb FROM processes WHERE pid = 200 AND image = 0"), 2944);
	assert_int_equal(
	    query_int("SELECT cpu_user_ns FROM processes WHERE pid = 200 AND image = 1"), 2000000);
	assert_int_equal(query_int("SELECT wchar FROM processes WHERE pid = 200 AND image = 1"),
			 30);
	assert_int_equal(
	    query_int("SELECT max_rss_kb FROM processes WHERE pid = 200 AND image = 1"), 900);
	assert_int_equal(query_int("SELECT exit_code FROM processes WHERE pid = 200 AND image = 1"),
			 3);
	assert_int_equal(query_int("SELECT exit_code FROM processes WHERE pid = 200 AND image = 0"),
			 -2);
	assert_int_equal(
	    query_int("SELECT p1.parent_id = p0.id FROM processes p0, processes p1 "
		      "WHERE p0.pid = 200 AND p0.image = 0 AND p1.pid = 200 AND p1.image = 1"),
	    1);
}

/*
 * An aggregator restart resumes running processes from the database. One in
 * its second image keeps the clock its process started under (its first
 * image's row says which), also when the wall clock stepped while the
 * aggregator was down: its duration comes from the boot clock alone.
 */
static void test_resumed_image_keeps_its_clock(void **state)
{
	char *sh[] = {"/bin/sh"}, *tool[] = {"/usr/bin/tool"};
	Tracer__Counters c = counters(1000, 0, 10);
	const int64_t sec = 1000000000, offset = 10000 * sec, step = -3600 * sec;

	(void)state;
	g.has_offset = true;
	g.offset_ns = offset;
	fork_ev(800, 100 * sec, 1, 1);
	exec_ev(800, 100 * sec, 1, 1, 100 * sec + 1000, sh, 1, &c, false, -1);
	exec_ev(800, 100 * sec, 1, 1, 101 * sec, tool, 1, &c, false, -1); /* image 1 */
	commit();

	ingest_free(&g);
	start_ingest(true);
	g.has_offset = true;
	g.offset_ns = offset + step;
	exit_ev(800, 100 * sec, 103 * sec, 0, &c);
	commit();
	assert_int_equal(query_int("SELECT start_ns FROM processes WHERE pid = 800 AND image = 1"),
			 101 * sec + offset);
	assert_int_equal(
	    query_int("SELECT end_ns - start_ns FROM processes WHERE pid = 800 AND image = 1"),
	    2 * sec);
	assert_int_equal(
	    query_int("SELECT state = 'exited' FROM processes WHERE pid = 800 AND image = 1"), 1);
}

/*
 * A step whose processes started on both sides of a wall-clock step: its
 * span is on its root's clock, boot-clock exact. A child started after a
 * +3600 s step ends at 3.5 s, the root at 4 s: the step lasted 2 s, not 3601.5.
 */
static void test_step_across_a_clock_step(void **state)
{
	char *snakemake[] = {"/usr/bin/python3", "/usr/bin/snakemake", "--cores", "1"};
	char *job[] = {"/bin/sh", "/w/.snakemake/tmp.x1/snakejob.sort_bam.7.sh"};
	char *tool[] = {"/usr/bin/samtools", "sort", "a.bam"};
	Tracer__Counters c = counters(1000, 0, 10);
	const int64_t sec = 1000000000, offset = 10000 * sec, step = 3600 * sec;

	(void)state;
	g.has_offset = true;
	g.offset_ns = offset;
	fork_ev(900, 1 * sec, 1, 1);
	exec_ev(900, 1 * sec, 1, 1, 1 * sec + 1000, snakemake, 4, &c, false, -1);
	fork_ev(901, 2 * sec, 900, 1 * sec);
	exec_ev(901, 2 * sec, 900, 1 * sec, 2 * sec + 1000, job, 2, &c, false, -1);
	g.offset_ns = offset + step;
	fork_ev(902, 3 * sec, 901, 2 * sec);
	exec_ev(902, 3 * sec, 901, 2 * sec, 3 * sec + 1000, tool, 3, &c, false, -1);
	exit_ev(902, 3 * sec, 3500 * (sec / 1000), 0, &c);
	exit_ev(901, 2 * sec, 4 * sec, 0, &c);
	commit();
	assert_int_equal(query_int("SELECT count(*) FROM steps WHERE name = 'sort_bam'"), 1);
	assert_int_equal(
	    query_int("SELECT count(*) FROM processes WHERE step_id = (SELECT id FROM steps)"), 2);
	assert_int_equal(query_int("SELECT start_ns FROM steps"), 2 * sec + offset);
	assert_int_equal(query_int("SELECT end_ns - start_ns FROM steps"), 2 * sec);
	/* The processes themselves keep the clocks they started under. */
	assert_int_equal(query_int("SELECT start_ns FROM processes WHERE pid = 902"),
			 3 * sec + offset + step);
}

static void test_exit_before_exec(void **state)
{
	char *argv[] = {"/bin/zombie"};
	Tracer__Counters c = counters(7, 0, 10);

	exit_ev(300, 7000, 7100, 9, &c); /* killed by SIGKILL, never seen starting */
	exec_ev(300, 7000, 1, 1, 7200, argv, 1, &c, true, -1);	/* /proc still showed it */
	exec_ev(300, 7000, 1, 1, 7300, argv, 1, &c, false, -1); /* a resent exec */
	commit();
	assert_int_equal(query_int("SELECT count(*) FROM processes WHERE pid = 300"), 1);
	assert_int_equal(query_int("SELECT signal FROM processes WHERE pid = 300"), 9);
	assert_int_equal(query_int("SELECT state = 'exited' FROM processes WHERE pid = 300"), 1);
	assert_int_equal(g.stats.unmatched_exits, 1);
	assert_int_equal(g.stats.late_events, 2);
}

static void test_snapshot_then_precise(void **state)
{
	char *argv[] = {"/usr/sbin/daemon"};
	Tracer__Counters c = counters(1, 0, 10);

	/* /proc gives 10 ms ticks: 12,345,678 ns reads as 10,000,000. */
	exec_ev(400, 10000000, 1, 1, 50000000, argv, 1, NULL, true, -1);
	exit_ev(400, 12345678, 60000000, 0, &c);
	commit();
	assert_int_equal(query_int("SELECT count(*) FROM processes WHERE pid = 400"), 1);
	assert_int_equal(query_int("SELECT proc_start_boot_ns FROM processes WHERE pid = 400"),
			 12345678);
	/* The wall-clock start moves with it (the clock offset is 0 without frames). */
	assert_int_equal(g.offset_ns, 0);
	assert_int_equal(query_int("SELECT start_ns FROM processes WHERE pid = 400"), 12345678);
	assert_int_equal(query_int("SELECT from_snapshot FROM processes WHERE pid = 400"), 1);
}

static void test_snapshot_done_marks_lost(void **state)
{
	char *argv[] = {"/bin/x"};

	exec_ev(500, 1000, 1, 1, 2000, argv, 1, NULL, true, -1);
	exec_ev(600, 1000, 1, 1, 2000, argv, 1, NULL, true, -1);
	commit();
	/* A collector restart: its snapshot only sees 500. */
	ingest_new_generation(&g);
	exec_ev(500, 1000, 1, 1, 9000, argv, 1, NULL, true, -1);
	ingest_snapshot_done(&g, 9000);
	assert_int_equal(assert_live_list_is_the_unexited(), 1); /* 500 */
	commit();
	assert_int_equal(query_int("SELECT state = 'running' FROM processes WHERE pid = 500"), 1);
	assert_int_equal(query_int("SELECT state = 'lost' FROM processes WHERE pid = 600"), 1);
}

static void test_explicit_run(void **state)
{
	char *launcher[] = {
	    "/opt/tracer/bin/tracer", "run", "--pipeline", "P", "--run", "R", "--", "bash", "x.sh"};
	char *daemon[] = {"/opt/tracer/bin/tracer-aggregator", "--db", "x"};
	char *cmd[] = {"/usr/bin/bash", "x.sh"};
	Tracer__Counters c = counters(1, 0, 10);

	exec_ev(700, 1000, 1, 1, 1100, launcher, 9, NULL, true, -1);
	exec_ev(699, 1050, 700, 1000, 1150, daemon, 3, NULL, true, -1);
	fork_ev(701, 2000, 700, 1000);
	exec_ev(701, 2000, 700, 1000, 2100, cmd, 2, &c, false, -1);
	fork_ev(702, 3000, 701, 2000);
	exit_ev(702, 3000, 3500, 0, &c);
	exit_ev(701, 2000, 4000, 3 << 8, &c);
	commit();
	assert_int_equal(query_int("SELECT count(*) FROM runs WHERE name = 'R' AND pipeline = 'P'"),
			 1);
	assert_int_equal(query_int("SELECT exit_code FROM runs"), 3);
	assert_int_equal(
	    query_int("SELECT count(*) FROM processes WHERE run_id = (SELECT id FROM runs)"), 2);
	assert_int_equal(query_int("SELECT run_id FROM processes WHERE pid = 700"), -2);
	assert_int_equal(query_int("SELECT run_id FROM processes WHERE pid = 699"), -2);
	assert_int_equal(
	    query_int(
		"SELECT command_process_id = (SELECT id FROM processes WHERE pid = 701) FROM runs"),
	    1);
	/* A `tracer` of a user's own (not root's install) opens no run: it is a process. */
	char *lookalike[] = {"/home/u/bin/tracer", "run", "--run", "forged", "--", "true"};
	exec_ev(800, 9000, 1, 1, 9100, lookalike, 6, NULL, true, -1);
	commit();
	assert_int_equal(query_int("SELECT count(*) FROM runs WHERE name = 'forged'"), 0);
	assert_int_equal(g.stats.untrusted_launchers, 1);
}

/*
 * A program that re-execs itself: every image's CPU and bytes count in its
 * step and run, not only the last image's (issue: 151 ms for 605 ms). The
 * script is a run; its child, which execs three times, is a step.
 */
static void test_rollups_hold_every_image(void **state)
{
	char *launcher[] = {"/opt/tracer/bin/tracer", "run", "--run", "R", "--", "bash", "x.sh"};
	char *script[] = {"/usr/bin/bash", "x.sh"};
	char *tool[] = {"/usr/bin/python3", "reexec.py"};
	Tracer__Counters none = counters(0, 0, 10);
	Tracer__Counters c1 = counters(150 * MS, 100, 10), c2 = counters(300 * MS, 200, 10);
	Tracer__Counters c3 = counters(450 * MS, 300, 10), end = counters(600 * MS, 400, 10);
	Tracer__Counters script_end = counters(5 * MS, 0, 10);

	exec_ev(700, 1000, 1, 1, 1100, launcher, 7, NULL, true, -1);
	fork_ev(701, 2000, 700, 1000);
	exec_ev(701, 2000, 700, 1000, 2100, script, 2, &none, false, -1);
	fork_ev(702, 3000, 701, 2000);
	exec_ev(702, 3000, 701, 2000, 3100, tool, 2, &none, false, -1);
	exec_ev(702, 3000, 701, 2000, 3200, tool, 2, &c1, false, 10);
	exec_ev(702, 3000, 701, 2000, 3300, tool, 2, &c2, false, 10);
	exec_ev(702, 3000, 701, 2000, 3400, tool, 2, &c3, false, 10);
	exit_ev(702, 3000, 3500, 0, &end);
	exit_ev(701, 2000, 4000, 0, &script_end);
	commit();
	/* Four images of 150 ms each, every one a row. */
	assert_int_equal(query_int("SELECT count(*) FROM processes WHERE pid = 702"), 4);
	assert_int_equal(
	    query_int("SELECT sum(cpu_user_ns + cpu_sys_ns) FROM processes WHERE pid = 702"),
	    600 * MS);
	assert_int_equal(query_int("SELECT cpu_ns FROM steps"), 600 * MS);
	assert_int_equal(query_int("SELECT wchar FROM steps"), 400);
	assert_int_equal(query_int("SELECT cpu_ns FROM runs"), 605 * MS);
	/* A process is counted once, however many images it had. */
	assert_int_equal(query_int("SELECT processes FROM steps"), 1);
	assert_int_equal(query_int("SELECT processes FROM runs"), 2);
	assert_int_equal(query_int("SELECT images FROM steps"), 4);
	assert_int_equal(query_int("SELECT images FROM runs"), 5);
	/* The totals agree with the sum over the run's rows. */
	assert_int_equal(
	    query_int("SELECT (SELECT cpu_ns FROM runs) - (SELECT sum(cpu_user_ns + "
		      "cpu_sys_ns) FROM processes WHERE run_id = (SELECT id FROM runs))"),
	    0);
}

/*
 * A process with more files than the kernel lists per process: its counts
 * (with the overflow) follow its exit event, and may come after the commit
 * that wrote its row for good and freed the row's strings. The overflow (and
 * an OOM mark, however late) then updates those columns alone: the row keeps
 * its exe, argv and cwd, and the shipper gets the row once, as it is now while
 * its record is still queued.
 */
static void test_facts_after_the_row_was_written_keep_the_row(void **state)
{
	char *argv[] = {"/usr/bin/manyfiles", "/data", "5000"};
	Tracer__Counters c = counters(1, 0, 10);
	Tracer__Event ev = TRACER__EVENT__INIT;
	Tracer__FileCountsEvent fc = TRACER__FILE_COUNTS_EVENT__INIT;
	Tracer__OomEvent oom = TRACER__OOM_EVENT__INIT;

	fork_ev(1, 10, 0, 0);
	fork_ev(810, 100, 1, 10);
	exec_ev(810, 100, 1, 10, 110, argv, 3, &c, false, -1);
	exit_ev(810, 100, 200, 0, &c);
	commit_at(300); /* within the grace: the entry stays, its strings go */
	fc.pid = 810;
	fc.start_ns = 100;
	fc.overflow = 5392;
	ev.ts_ns = 201;
	ev.kind_case = TRACER__EVENT__KIND_FILE_COUNTS;
	ev.file_counts = &fc;
	ingest_event(&g, &ev);
	commit_at(400);
	oom.pid = 810;
	oom.start_ns = 100;
	oom.comm = "manyfiles";
	ev.kind_case = TRACER__EVENT__KIND_OOM;
	ev.oom = &oom;
	ingest_event(&g, &ev);
	commit_at(500);
	assert_int_equal(query_int("SELECT files_overflow FROM processes WHERE pid = 810"), 5392);
	assert_int_equal(query_int("SELECT oom_killed FROM processes WHERE pid = 810"), 1);
	assert_int_equal(query_int("SELECT count(*) FROM processes WHERE pid = 810 AND exe = "
				   "'/usr/bin/manyfiles' AND argv LIKE '%5000%'"),
			 1);
	assert_int_equal(query_int("SELECT count(*) FROM outbox WHERE kind = 'processes' AND "
				   "record_key = (SELECT id FROM processes WHERE pid = 810)"),
			 1);
	/* Still queued, the record took the late facts too, and the outbox's size follows. */
	assert_int_equal(query_int("SELECT json_extract(payload, '$.files_overflow') FROM outbox "
				   "WHERE kind = 'processes' AND record_key = (SELECT id FROM "
				   "processes WHERE pid = 810)"),
			 5392);
	assert_int_equal(query_int("SELECT json_extract(payload, '$.oom_killed') FROM outbox WHERE "
				   "kind = 'processes' AND record_key = (SELECT id FROM processes "
				   "WHERE pid = 810)"),
			 1);
	assert_int_equal(
	    query_int("SELECT json_extract(payload, '$.exe') = '/usr/bin/manyfiles' "
		      "FROM outbox WHERE kind = 'processes' AND record_key = (SELECT id "
		      "FROM processes WHERE pid = 810)"),
	    1);
	assert_int_equal(query_int("SELECT bytes = (SELECT sum(length(payload)) FROM outbox) FROM "
				   "outbox_size"),
			 1);
}

/* Outbox sample rows, and distinct sample keys among them. */
static void outbox_samples(int64_t *rows, int64_t *keys)
{
	*rows = query_int("SELECT count(*) FROM outbox WHERE kind = 'samples'");
	*keys = query_int("SELECT count(DISTINCT record_key) FROM outbox WHERE kind = 'samples'");
}

/*
 * A fork child's samples are held until its exec shows whether it is recorded.
 * When the release cannot be queued (out of memory), the child must stay held,
 * or its later samples are queued once on their own and again by the release
 * at the next aggregator start.
 */
static void test_release_that_fails_keeps_the_hold(void **state)
{
	const uint64_t start = 100 * SEC;
	int64_t rows, keys;

	fork_ev(200, start, 1, SEC);
	sample_ev(200, start, start + 1 * SEC);
	sample_ev(200, start, start + 2 * SEC);
	commit();
	outbox_samples(&rows, &keys);
	assert_int_equal(rows, 0); /* held: no exec yet, within the 5 s */

	/* Past the hold: the release is due, and no memory is left for it. */
	fail_realloc = true;
	sample_ev(200, start, start + 6 * SEC);
	fail_realloc = false;
	sample_ev(200, start, start + 7 * SEC);
	commit();
	outbox_samples(&rows, &keys);
	assert_int_equal(rows, 0); /* still held, the later sample with them */

	exit_ev(200, start, start + 8 * SEC, 0, NULL);
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

/* A RAPL reading is queued as written: its row as JSON (a range not known stays null),
 * keyed host_id:zone:ts_ns, priority 0 (dropped first, with the process samples). */
static void test_energy_sample_is_queued_with_its_key(void **state)
{
	(void)state;
	struct energy_sample_row r = {.ts_epoch_ns = 1700000000123456789LL,
				      .host_id = "h1",
				      .zone = 1,
				      .name = "package-1",
				      .energy_uj = 123456789012ULL};

	assert_int_equal(store_put_energy_sample(&st, &r), 0);
	assert_int_equal(store_ship_energy_sample(&st, &r), 0);
	r.zone = 0;
	r.has_max_range = true;
	r.max_range_uj = 262143328850ULL;
	assert_int_equal(store_put_energy_sample(&st, &r), 0);
	assert_int_equal(store_ship_energy_sample(&st, &r), 0);
	assert_int_equal(query_int("SELECT count(*) FROM outbox WHERE kind = 'energy_samples' AND "
				   "priority = 0 AND record_key IN ('h1:1:1700000000123456789', "
				   "'h1:0:1700000000123456789')"),
			 2);
	assert_int_equal(query_int("SELECT json_extract(payload, '$.energy_uj') FROM outbox WHERE "
				   "record_key = 'h1:1:1700000000123456789'"),
			 123456789012LL);
	assert_int_equal(query_int("SELECT json_type(payload, '$.max_energy_range_uj') = 'null' "
				   "FROM outbox WHERE record_key = 'h1:1:1700000000123456789'"),
			 1);
	assert_int_equal(query_int("SELECT json_extract(payload, '$.max_energy_range_uj') FROM "
				   "outbox WHERE record_key = 'h1:0:1700000000123456789'"),
			 262143328850LL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_pid_reuse_never_merges, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_exec_in_place, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_exit_before_exec, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_resumed_image_keeps_its_clock, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_step_across_a_clock_step, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_snapshot_then_precise, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_snapshot_done_marks_lost, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_explicit_run, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rollups_hold_every_image, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_release_that_fails_keeps_the_hold,
					    setup_with_outbox, teardown),
	    cmocka_unit_test_setup_teardown(test_facts_after_the_row_was_written_keep_the_row,
					    setup_with_outbox, teardown),
	    cmocka_unit_test_setup_teardown(test_energy_sample_is_queued_with_its_key,
					    setup_with_outbox, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
