/*
 * Steps of a plain script, with process entries made by hand (step_work.c):
 *   - a loop's step is named by the tool that did its work, not by its `seq`,
 *     and by the tool running now while too little work has ended to tell;
 *   - three tools of a third each: a subshell is named by its two main tools;
 *   - a child that succeeded within a few ms having started nothing is no
 *     step, and a written step row is deleted at the next write; a short
 *     child that failed stays a step.
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
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_a_loop_is_named_by_its_work, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_dominant_tool_names_a_subshell_by_two, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_helpers_are_not_steps, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
