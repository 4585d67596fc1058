/*
 * Correlation on its own, with process entries made by hand: which run and
 * step a process lands in, and what the run and step add up to.
 *   - a script a user starts is a run; its direct children are steps, named
 *     after their tool; a child's exit is counted in its step and run;
 *   - an engine started inside a script's run gets a run of its own;
 *   - a Slurm job's cgroup makes the job's run, and its step's cgroup a step;
 *   - a self-hosted aggregator (explicit runs only) recognises nothing;
 *   - with thousands of tool names in the database, names keep their ids.
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

#define CORRELATE_FIXTURE_TAG "correlate-test"
#include "test/unit/correlate_fixture.h"

static void exec(struct proc *p, struct proc *parent, const char *const *argv)
{
	correlate_exec(&corr, p, parent, (char *const *)argv, argv_count(argv),
		       p->row.start_epoch_ns);
}

/* The process is killed by the signal already set in its row. */
static void end_by_signal(struct proc *p, uint64_t end_ms)
{
	p->row.end_epoch_ns = (int64_t)(end_ms * MS);
	p->row.state = "exited";
	p->row.has_exit_code = false;
	p->row.has_metrics = true;
	p->life.exited = true;
	correlate_exit(&corr, p);
}

static void test_script_run_and_its_steps(void **state)
{
	static const char *const shell_argv[] = {"bash", NULL};
	static const char *const script_argv[] = {"bash", "align.sh", NULL};
	static const char *const sort_argv[] = {"sort", "-k1", "in.txt", NULL};
	struct proc *shell = process(10, NULL, 0, "/usr/bin/bash", shell_argv);
	struct proc *script = process(11, shell, 100, "/usr/bin/bash", script_argv);

	corr.host_id = "h-1";
	corr.hostname = "node7";
	exec(shell, NULL, shell_argv);
	exec(script, shell, script_argv);
	struct run *r = script->in.run;
	assert_non_null(r);
	assert_int_equal(r->source, RUN_SCRIPT);
	assert_string_equal(r->engine, "script");
	assert_string_equal(r->row.pipeline, "align");
	assert_string_equal(r->row.hostname, "node7"); /* recognised runs know their host too */
	assert_string_equal(r->row.host_id, "h-1");
	assert_null(shell->in.run); /* the user's shell is not in the run */

	struct proc *sort = process(12, script, 200, "/usr/bin/sort", script_argv);
	exec(sort, script, sort_argv);
	struct step *s = sort->in.step;
	assert_non_null(s);
	assert_ptr_equal(sort->in.run, r);
	assert_string_equal(s->name, "sort");
	assert_string_equal(s->kind, "script-step");

	finish(sort, 700, 450, 0);
	assert_int_equal(s->status, GROUP_OK);
	assert_int_equal(s->r.processes, 1);
	assert_int_equal(s->r.cpu_ns, 450 * MS);
	assert_int_equal(s->r.end_epoch_ns - s->r.start_epoch_ns, 500 * MS);
	finish(script, 800, 10, 0);
	assert_int_equal(r->status, GROUP_OK);
	assert_true(r->finished);
	assert_int_equal(r->r.processes, 2);
	assert_int_equal(r->r.cpu_ns, 460 * MS);
}

static void test_subshell_of_a_script_is_a_step(void **state)
{
	static const char *const shell_argv[] = {"bash", NULL};
	static const char *const script_argv[] = {"bash", "loop.sh", NULL};
	static const char *const gzip_argv[] = {"gzip", "-c", "x", NULL};
	struct proc *shell = process(50, NULL, 0, "/usr/bin/bash", shell_argv);
	struct proc *script = process(51, shell, 10, "/usr/bin/bash", script_argv);

	exec(script, shell, script_argv);
	/* `( gzip ...; : )`: the subshell never execs; gzip is its child. */
	struct proc *sub = process(52, script, 20, "/usr/bin/bash", script_argv);
	assert_non_null(sub->in.step);
	struct proc *gz = process(53, sub, 30, "/usr/bin/gzip", script_argv);
	exec(gz, sub, gzip_argv);
	assert_ptr_equal(gz->in.step, sub->in.step);
	assert_string_equal(sub->in.step->name, "gzip");
	finish(gz, 130, 80, 0);
	finish(sub, 140, 1, 0);
	assert_int_equal(sub->in.step->r.cpu_ns, 81 * MS);
	assert_int_equal(sub->in.step->r.processes, 2);
	/* The next direct child is a step of its own. */
	struct proc *next = process(54, script, 150, "/usr/bin/gzip", script_argv);
	exec(next, script, gzip_argv);
	assert_non_null(next->in.step);
	assert_true(next->in.step != sub->in.step);
	/* A child of a child is not a step of its own. */
	struct proc *grandchild = process(55, next, 160, "/usr/bin/gzip", gzip_argv);
	assert_ptr_equal(grandchild->in.step, next->in.step);
}

static void test_engine_inside_a_script_gets_its_own_run(void **state)
{
	static const char *const shell_argv[] = {"bash", NULL};
	static const char *const script_argv[] = {"bash", "wrap.sh", NULL};
	static const char *const smk_argv[] = {"/usr/bin/python3", "/usr/bin/snakemake", "--cores",
					       "2", NULL};
	struct proc *shell = process(20, NULL, 0, "/usr/bin/bash", shell_argv);
	struct proc *script = process(21, shell, 10, "/usr/bin/bash", script_argv);

	exec(script, shell, script_argv);
	struct proc *smk = process(22, script, 20, "/usr/bin/python3.11", smk_argv);
	assert_ptr_equal(smk->in.run, script->in.run); /* inherited at fork */
	exec(smk, script, smk_argv);
	assert_non_null(smk->in.run);
	assert_true(smk->in.run != script->in.run);
	assert_int_equal(smk->in.run->source, RUN_ENGINE);
	assert_string_equal(smk->in.run->engine, "snakemake");
	assert_null(smk->in.step); /* it left the script's step */
}

static void test_slurm_job_is_a_run_and_its_step_a_step(void **state)
{
	static const char *const argv[] = {"/usr/bin/sleep", "1", NULL};

	correlate_cgroup(&corr, 77, false,
			 "/system.slice/slurmstepd.scope/job_42/step_0/user/task_0");
	struct proc *p = process(30, NULL, 0, "/usr/bin/sleep", argv);
	p->row.cgroup_id = 77;
	exec(p, NULL, argv);
	assert_non_null(p->in.run);
	assert_int_equal(p->in.run->source, RUN_SLURM);
	assert_string_equal(p->in.run->row.name, "slurm-job-42");
	assert_string_equal(p->row.slurm_job, "42");
	assert_non_null(p->in.step);
	assert_string_equal(p->in.step->key, "42.0");
	/* A second process of the same job joins the same run. */
	struct proc *q = process(31, NULL, 5, "/usr/bin/sleep", argv);
	q->row.cgroup_id = 77;
	exec(q, NULL, argv);
	assert_ptr_equal(q->in.run, p->in.run);
	assert_ptr_equal(q->in.step, p->in.step);
}

/*
 * A job without a batch step (a bare srun) ends as its step did: a failed grep the
 * step's shell handled fails nothing, and Slurm's extern step, killed at the job's
 * end, is not a step of the user's. A step that exits 3 fails the job with 3.
 */
static void test_slurm_job_without_batch_step_ends_as_its_steps(void **state)
{
	static const char *const bash_argv[] = {"bash", "-c", "grep -q x f || true", NULL};
	static const char *const grep_argv[] = {"grep", "-q", "x", "f", NULL};
	static const char *const sleep_argv[] = {"sleep", "100000000", NULL};

	(void)state;
	for (int exit_code = 0; exit_code <= 3; exit_code += 3) {
		char step0[96], ext[96];
		uint32_t base = 30 + (uint32_t)exit_code * 10;
		uint64_t cg = 70 + (uint64_t)exit_code * 10;
		snprintf(step0, sizeof(step0), "/slurm_vm/uid_0/job_%d/step_0/task_0",
			 42 + exit_code);
		snprintf(ext, sizeof(ext), "/slurm_vm/uid_0/job_%d/step_extern", 42 + exit_code);
		correlate_cgroup(&corr, cg, true, step0);
		correlate_cgroup(&corr, cg + 1, true, ext);
		struct proc *hold = process(base, NULL, 0, "/usr/bin/sleep", sleep_argv);
		hold->row.cgroup1_id = cg + 1;
		exec(hold, NULL, sleep_argv);
		struct proc *sh = process(base + 1, NULL, 1, "/usr/bin/bash", bash_argv);
		sh->row.cgroup1_id = cg;
		exec(sh, NULL, bash_argv);
		struct proc *grep = process(base + 2, sh, 2, "/usr/bin/grep", grep_argv);
		exec(grep, sh, grep_argv);
		finish(grep, 3, 1, 1);
		finish(sh, 4, 1, exit_code);
		hold->row.has_signal = true; /* Slurm kills the extern step's holder */
		hold->row.signal = 9;
		end_by_signal(hold, 5);
		struct run *r = sh->in.run;
		assert_non_null(r);
		assert_int_equal(r->status, exit_code ? GROUP_FAILED : GROUP_OK);
		assert_true(r->row.has_exit_code && !r->row.has_signal);
		assert_int_equal(r->row.exit_code, exit_code);
	}
}

static void test_explicit_only_recognises_nothing(void **state)
{
	static const char *const shell_argv[] = {"bash", NULL};
	static const char *const script_argv[] = {"bash", "align.sh", NULL};

	corr.explicit_only = true;
	struct proc *shell = process(40, NULL, 0, "/usr/bin/bash", shell_argv);
	struct proc *script = process(41, shell, 100, "/usr/bin/bash", script_argv);
	exec(script, shell, script_argv);
	assert_null(script->in.run);
	assert_null(corr.runs);
}

/* A pyenv shim's handled readlink failure first, then the tool: the tool failed the step. */
static void test_the_tool_that_ended_as_the_step_did_is_the_cause(void **state)
{
	const struct failed_tool shim = {.process_id = 1, .code = 1};
	const struct failed_tool crash = {.process_id = 2, .has_signal = true, .code = 11};
	const struct failed_tool exit3 = {.process_id = 3, .code = 3};
	struct failed_tool first;

	(void)state;
	first = shim; /* killed by SIGSEGV, as the step was */
	failed_tool_settle(&first, &crash, true, 11, 0);
	assert_int_equal(first.process_id, 2);
	first = shim; /* a shell reporting it: exit 139 */
	failed_tool_settle(&first, &crash, false, 0, 139);
	assert_int_equal(first.process_id, 2);
	first = shim; /* the same exit code */
	failed_tool_settle(&first, &exit3, false, 0, 3);
	assert_int_equal(first.process_id, 3);
	first = shim; /* nothing ended as the step did: the first failure stays */
	failed_tool_settle(&first, &exit3, false, 0, 2);
	assert_int_equal(first.process_id, 1);
	failed_tool_settle(&first, &crash, true, 9, 0);
	assert_int_equal(first.process_id, 1);
}

/*
 * A database that has gathered thousands of tool names (a shared host over
 * months): an exec of a known tool gets the id the tools table already has,
 * a new name the next free one, and the table never holds a name twice.
 */
static void test_known_tool_names_keep_their_ids(void **state)
{
	static const char *const known[] = {"/usr/bin/prog1777", NULL};
	static const char *const fresh[] = {"/usr/bin/prog_new", NULL};
	sqlite3_stmt *q;
	char name[32];
	struct proc *a, *b;
	int64_t id_1777 = 0;

	(void)state;
	correlator_free(&corr);
	assert_int_equal(store_begin(&st), 0);
	for (int i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "prog%d", i);
		/* Ids as a long-lived database has them: not in name order. */
		assert_int_equal(store_put_tool(&st, 10 + (i * 7919) % 3000, name, name, NULL), 0);
	}
	assert_int_equal(store_commit(&st), 0);
	assert_int_equal(correlator_init(&corr, &st, NULL, NULL), 0);

	a = process(100, NULL, 0, known[0], known);
	exec(a, NULL, known);
	b = process(101, NULL, 1, fresh[0], fresh);
	exec(b, NULL, fresh);
	assert_int_equal(store_begin(&st), 0);
	assert_int_equal(correlate_write(&corr), 0);
	assert_int_equal(store_commit(&st), 0);

	assert_int_equal(
	    sqlite3_prepare_v2(st.db, "SELECT id FROM tools WHERE name = 'prog1777'", -1, &q, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	id_1777 = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	assert_int_equal(a->row.tool_id, id_1777);
	assert_int_equal(b->row.tool_id, 3010); /* ids 10 .. 3009 are taken */
	assert_int_equal(sqlite3_prepare_v2(st.db,
					    "SELECT count(*), count(DISTINCT name) FROM tools", -1,
					    &q, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int64(q, 0), 3001);
	assert_int_equal(sqlite3_column_int64(q, 1), 3001);
	sqlite3_finalize(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_the_tool_that_ended_as_the_step_did_is_the_cause),
	    cmocka_unit_test_setup_teardown(test_script_run_and_its_steps, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_subshell_of_a_script_is_a_step, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_engine_inside_a_script_gets_its_own_run, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_slurm_job_without_batch_step_ends_as_its_steps,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_slurm_job_is_a_run_and_its_step_a_step, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_explicit_only_recognises_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_known_tool_names_keep_their_ids, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
