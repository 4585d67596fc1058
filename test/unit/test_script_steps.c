/*
 * Steps of a plain script, with process entries made by hand (step_work.c):
 *   - a loop's step is named by the tool that did its work, not by its `seq`,
 *     and by the tool running now while too little work has ended to tell;
 *   - three tools of a third each: a subshell is named by its two main tools;
 *   - a child that succeeded within a few ms having started nothing is no
 *     step, and a written step row is deleted at the next write; a short
 *     child that failed stays a step;
 *   - a helper that ran a pipe ($(ls | wc -l)) is no step either, and its
 *     processes' records, already queued with its step id, reach the shipper
 *     without it: still queued, rewritten; sent or being sent, queued again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define CORRELATE_FIXTURE_TAG "script-steps-test"
#include "test/unit/correlate_fixture.h"

#include "aggregator/outbox/outbox.h"

/* A process forked by parent at start_ms (its argv_json: its first argument). */
static struct proc *fork_at(uint32_t pid, struct proc *parent, uint64_t start_ms, const char *exe)
{
	struct proc *p = proc_entry(pid, parent, start_ms, exe, "/w");

	if (parent)
		parent->life.had_children = true;
	correlate_fork(&corr, p, parent);
	return p;
}

static void exec_as(struct proc *p, struct proc *parent, const char *exe, const char *const *argv)
{
	free(p->row.exe);
	p->row.exe = strdup(exe);
	free(p->row.argv_json);
	p->row.argv_json = argv_json(argv);
	p->life.execed = true;
	correlate_exec(&corr, p, parent, (char *const *)argv, argv_count(argv),
		       p->row.start_epoch_ns);
}

/* A forked child of parent that execs exe (argv: one word) and ends. */
static struct proc *tool(uint32_t pid, struct proc *parent, uint64_t start_ms, const char *exe,
			 uint64_t end_ms, uint64_t cpu_ms, int code)
{
	const char *name = strrchr(exe, '/') + 1;
	const char *const argv[] = {name, "in.fq", NULL};
	struct proc *p = fork_at(pid, parent, start_ms, "/usr/bin/bash");

	exec_as(p, parent, exe, argv);
	if (end_ms)
		finish(p, end_ms, cpu_ms, code);
	return p;
}

static struct proc *script_run(void)
{
	static const char *const shell_argv[] = {"bash", NULL};
	static const char *const script_argv[] = {"bash", "samples.sh", NULL};
	struct proc *shell = fork_at(10, NULL, 0, "/usr/bin/bash");
	struct proc *script = fork_at(11, shell, 10, "/usr/bin/bash");

	exec_as(shell, NULL, "/usr/bin/bash", shell_argv);
	exec_as(script, shell, "/usr/bin/bash", script_argv);
	assert_non_null(script->in.run);
	return script;
}

static int64_t count_steps(int64_t id)
{
	sqlite3_stmt *q;
	int64_t n = -1;

	assert_int_equal(
	    sqlite3_prepare_v2(st.db, "SELECT count(*) FROM steps WHERE id = ?", -1, &q, NULL),
	    SQLITE_OK);
	sqlite3_bind_int64(q, 1, id);
	if (sqlite3_step(q) == SQLITE_ROW)
		n = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return n;
}

static void test_a_loop_is_named_by_its_work(void **state)
{
	(void)state;
	struct proc *script = script_run();
	/* ( for i in $(seq 3); do gzip ...; done ): a subshell that never execs. */
	struct proc *loop = fork_at(20, script, 100, "/usr/bin/bash");
	struct step *s = loop->in.step;
	assert_non_null(s);
	tool(21, loop, 101, "/usr/bin/seq", 103, 1, 0);
	struct proc *gzip = tool(22, loop, 104, "/usr/bin/gzip", 0, 0, 0);
	/* A long gzip after the loop's seq: the step is gzip while it runs. */
	assert_string_equal(s->name, "gzip");
	finish(gzip, 900, 700, 0);
	tool(23, loop, 901, "/usr/bin/gzip", 1600, 690, 0);
	tool(24, loop, 1601, "/usr/bin/wc", 1700, 60, 0);
	finish(loop, 1701, 2, 0);
	assert_string_equal(s->name, "gzip");
	assert_string_equal(s->signature, "[\"gzip\",\"in.fq\"]");
	assert_int_equal(s->status, GROUP_OK);
}

static void test_no_dominant_tool_names_a_subshell_by_two(void **state)
{
	(void)state;
	struct proc *script = script_run();
	struct proc *sub = fork_at(30, script, 100, "/usr/bin/bash");
	struct step *s = sub->in.step;
	tool(31, sub, 101, "/usr/bin/bzip2", 400, 300, 0);
	tool(32, sub, 401, "/usr/bin/xz", 700, 310, 0);
	tool(33, sub, 701, "/usr/bin/zstd", 1000, 290, 0);
	finish(sub, 1001, 1, 0);
	assert_string_equal(s->name, "xz + bzip2");
}

static void test_helpers_are_not_steps(void **state)
{
	(void)state;
	struct proc *script = script_run();
	struct run *r = script->in.run;
	/* n=$(date +%s): forked at 100 ms, written live, ended at 114 ms. */
	struct proc *date = tool(40, script, 100, "/usr/bin/date", 0, 0, 0);
	struct step *s = date->in.step;
	assert_non_null(s);
	int64_t id = s->id;
	assert_int_equal(correlate_write(&corr), 0);
	correlate_committed(&corr);
	assert_int_equal(count_steps(id), 1);
	finish(date, 114, 1, 0);
	assert_null(date->in.step);
	assert_int_equal(date->row.step_id, 0);
	assert_int_equal(r->n_steps, 0);
	assert_null(r->steps);
	assert_int_equal(correlate_write(&corr), 0);
	correlate_committed(&corr);
	assert_int_equal(count_steps(id), 0);
	/* The next step takes its number; a short child that failed stays a step. */
	struct proc *ls = tool(41, script, 120, "/usr/bin/ls", 125, 1, 2);
	assert_non_null(ls->in.step);
	assert_string_equal(ls->in.step->key, "1");
	assert_int_equal(ls->in.step->status, GROUP_FAILED);
	/* A child that ran 60 ms is a step, however little it did. */
	struct proc *mk = tool(42, script, 200, "/usr/bin/mkdir", 260, 1, 0);
	assert_non_null(mk->in.step);
	assert_string_equal(mk->in.step->name, "mkdir");
	assert_int_equal(r->n_steps, 2);
	/* sh -c "true; true": a program the script ran, with children, in 10 ms. */
	static const char *const sh_argv[] = {"sh", "-c", "true; true", NULL};
	struct proc *sh = fork_at(43, script, 300, "/usr/bin/bash");
	exec_as(sh, script, "/usr/bin/dash", sh_argv);
	tool(44, sh, 302, "/usr/bin/true", 304, 1, 0);
	tool(45, sh, 305, "/usr/bin/true", 307, 1, 0);
	finish(sh, 310, 1, 0);
	assert_int_equal(r->n_steps, 3);
}

static int64_t query_i64(const char *sql, int64_t arg)
{
	sqlite3_stmt *q;
	int64_t n = -1;

	assert_int_equal(sqlite3_prepare_v2(st.db, sql, -1, &q, NULL), SQLITE_OK);
	sqlite3_bind_int64(q, 1, arg);
	if (sqlite3_step(q) == SQLITE_ROW)
		n = sqlite3_column_type(q, 0) == SQLITE_NULL ? -2 : sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return n;
}

/* Its row written and queued, as the ingest layer does at its exit. */
static void write_and_queue(struct proc *p)
{
	assert_int_equal(store_put_process(&st, &p->row), 0);
	assert_int_equal(store_ship_process(&st, p->row.id), 0);
}

/* A shipper's state database saying the batch up to `through` is being sent. */
static void shipper_sending(const char *path, int64_t through)
{
	sqlite3 *db;
	char sql[160];

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	snprintf(sql, sizeof(sql),
		 "CREATE TABLE shipper_state (key TEXT PRIMARY KEY, value TEXT); INSERT INTO "
		 "shipper_state VALUES ('attempt_through', '%lld')",
		 (long long)through);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

#define RECORDS                                                                                    \
	"SELECT count(*) FROM outbox WHERE kind = 'processes' AND record_key = CAST(?1 AS TEXT)"
#define NEWEST_STEP                                                                                \
	"SELECT json_extract(payload, '$.step_id') FROM outbox WHERE kind = 'processes' AND "      \
	"record_key = CAST(?1 AS TEXT) ORDER BY id DESC LIMIT 1"

static void test_a_helper_with_a_pipe_is_no_step_at_the_sink_either(void **state)
{
	(void)state;
	struct outbox ob;
	char state_path[80];

	snprintf(state_path, sizeof(state_path), "%s.ship", db_path);
	remove(state_path);
	assert_int_equal(outbox_open(&ob, st.db, 64 << 20, state_path), 0);
	st.outbox = &ob;
	struct proc *script = script_run();
	/* n=$(ls | sort | wc -l): a subshell forks the three, waits, exits. */
	struct proc *sub = fork_at(50, script, 100, "/usr/bin/bash");
	struct step *s = sub->in.step;
	assert_non_null(s);
	int64_t id = s->id;
	struct proc *ls = tool(51, sub, 101, "/usr/bin/ls", 104, 1, 0);
	struct proc *sort = tool(52, sub, 101, "/usr/bin/sort", 105, 1, 0);
	struct proc *wc = tool(53, sub, 102, "/usr/bin/wc", 105, 1, 0);
	for (struct proc *const *p = (struct proc *const[]){ls, sort, wc}; *p != wc; p++)
		write_and_queue(*p);
	write_and_queue(wc);
	assert_int_equal(correlate_write(&corr), 0);
	correlate_committed(&corr);
	assert_int_equal(count_steps(id), 1);
	assert_int_equal(query_i64(NEWEST_STEP, wc->row.id), id);
	/* ls's record is in the batch being sent; wc's was delivered (forgotten here). */
	shipper_sending(state_path,
			query_i64("SELECT max(id) FROM outbox WHERE record_key = CAST(?1 AS TEXT)",
				  ls->row.id));
	assert_int_equal(query_i64("DELETE FROM outbox WHERE kind = 'processes' AND record_key = "
				   "CAST(?1 AS TEXT) RETURNING 0",
				   wc->row.id),
			 0);
	finish(sub, 106, 1, 0);
	assert_int_equal(s->r.processes, 4);
	assert_null(sub->in.step);
	assert_int_equal(correlate_write(&corr), 0);
	correlate_committed(&corr);
	assert_int_equal(count_steps(id), 0);
	assert_int_equal(
	    query_i64("SELECT count(*) FROM processes WHERE step_id = ?1 OR id IN (51, 52, 53) AND "
		      "step_id IS NOT NULL",
		      id),
	    0);
	/* Still queued (sort): rewritten in place. Being sent (ls) and delivered (wc):
	 * queued again. Each newest record says no step. */
	assert_int_equal(query_i64(RECORDS, sort->row.id), 1);
	assert_int_equal(query_i64(RECORDS, ls->row.id), 2);
	assert_int_equal(query_i64(RECORDS, wc->row.id), 1);
	for (struct proc *const *p = (struct proc *const[]){ls, sort, wc, NULL}; *p; p++)
		assert_int_equal(query_i64(NEWEST_STEP, (*p)->row.id), -2);
	/* The step itself: a tombstone. */
	assert_int_equal(query_i64("SELECT json_extract(payload, '$._withdrawn') FROM outbox WHERE "
				   "kind = 'steps' AND record_key = CAST(?1 AS TEXT)",
				   id),
			 1);
	st.outbox = NULL;
	outbox_close(&ob);
	remove(state_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_a_loop_is_named_by_its_work, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_dominant_tool_names_a_subshell_by_two, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_helpers_are_not_steps, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_a_helper_with_a_pipe_is_no_step_at_the_sink_either,
					    setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
