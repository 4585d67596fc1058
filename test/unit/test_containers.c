/*
 * Containers joining the run and step of the CLI that started them, with
 * process entries made by hand (daemon mode):
 *   - the first program of a /docker/<id> cgroup running the CLI's command
 *     joins the CLI's run and step, names the step, gives it its container;
 *     the CLI is a helper; a later exec in the container joins by its id;
 *   - a CLI is used up by its container; one that started after the
 *     container's process, or asked for another uid, is no candidate;
 *   - two runs' identical CLIs: the container is in neither, and ambiguous.
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

#include "aggregator/model/groups.h"
#define CORRELATE_FIXTURE_TAG "containers-test"
#include "test/unit/correlate_fixture.h"

#define ID_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define ID_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define ID_C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"

/* The fixture's, with three containers' cgroups known. */
static int setup_containers(void **state)
{
	(void)state;
	fixture_open(NULL);
	correlate_cgroup(&corr, 501, true, "/docker/" ID_A);
	correlate_cgroup(&corr, 502, true, "/docker/" ID_B);
	correlate_cgroup(&corr, 503, true, "/docker/" ID_C);
	return 0;
}

/* A process forked at start_ms (in cgroup1 if non-zero) that execs argv. */
static struct proc *run_prog(uint32_t pid, struct proc *parent, uint64_t start_ms, uint64_t cgroup1,
			     const char *const *argv)
{
	struct proc *p = proc_entry(pid, parent, start_ms, argv[0], "/w");

	p->row.has_ids = true;
	p->row.cgroup1_id = cgroup1;
	return fork_exec(p, parent, argv);
}

static const char *const shell_argv[] = {"/usr/bin/bash", NULL};
static const char *const script_argv[] = {"/usr/bin/bash", "pipe.sh", NULL};
static const char *const cli_argv[] = {"/usr/bin/docker", "run",       "--rm", "-v", "/d:/d",
				       "local/x:1",	  "/bin/burn", "2",    NULL};
static const char *const burn_argv[] = {"/bin/burn", "2", NULL};

/* A user's script (a run) whose child runs the docker CLI (a step). */
static struct proc *script_cli(uint32_t pid, uint64_t start_ms, const char *const *argv)
{
	struct proc *shell = run_prog(pid, NULL, start_ms, 0, shell_argv);
	struct proc *script = run_prog(pid + 1, shell, start_ms + 1, 0, script_argv);

	return run_prog(pid + 2, script, start_ms + 2, 0, argv);
}

static void test_container_joins_the_clis_step(void **state)
{
	(void)state;
	struct proc *cli = script_cli(10, 0, cli_argv);
	struct run *r = cli->in.run;
	struct step *s = cli->in.step;
	assert_non_null(r);
	assert_non_null(s);
	assert_true(cli->row.helper); /* the engine's plumbing */
	/* runc's setup stage in the new cgroup, then the container's first program. */
	static const char *const runc_argv[] = {"/usr/sbin/runc", "init", NULL};
	struct proc *runc = run_prog(30, NULL, 100, 501, runc_argv);
	assert_null(runc->in.run);
	struct proc *burn = run_prog(31, NULL, 110, 501, burn_argv);
	assert_ptr_equal(burn->in.run, r);
	assert_ptr_equal(burn->in.step, s);
	assert_false(burn->row.helper);
	assert_string_equal(s->name, "burn"); /* named by the program, not `docker` */
	assert_string_equal(s->container_id, ID_A);
	/* Later processes of the container join by its id (a `docker exec`). */
	static const char *const sh_argv[] = {"/bin/sh", "-c", "true", NULL};
	struct proc *later = run_prog(32, NULL, 150, 501, sh_argv);
	assert_ptr_equal(later->in.step, s);
	finish(burn, 2200, 2000, 0);
	assert_int_equal(s->r.cpu_ns, 2000 * MS);
	assert_int_equal(r->r.cpu_ns, 2000 * MS);
	assert_true(correlate_has_pending(&corr));
	assert_int_equal(store_begin(&st), 0);
	assert_int_equal(correlate_write(&corr), 0);
	assert_int_equal(store_commit(&st), 0);
	correlate_committed(&corr);
}

static void test_a_cli_starts_one_container_and_only_after_it_started(void **state)
{
	(void)state;
	struct proc *cli = script_cli(10, 0, cli_argv);
	struct proc *a = run_prog(31, NULL, 100, 501, burn_argv);
	assert_ptr_equal(a->in.run, cli->in.run);
	/* An identical container later: the CLI is used up, so it is nobody's. */
	struct proc *b = run_prog(41, NULL, 200, 502, burn_argv);
	assert_null(b->in.run);
	/* A CLI that started after the container's process did not start it. */
	struct proc *late = script_cli(50, 300, cli_argv);
	assert_non_null(late->in.run);
	struct proc *c = run_prog(61, NULL, 250, 503, burn_argv);
	assert_null(c->in.run);
}

static void test_another_uid_is_not_the_clis(void **state)
{
	(void)state;
	static const char *const user_argv[] = {
	    "/usr/bin/docker", "run", "--user=1000:1000", "local/x:1", "/bin/burn", "2", NULL};
	struct proc *cli = script_cli(10, 0, user_argv);
	struct proc *as_root = run_prog(31, NULL, 100, 501, burn_argv);
	assert_null(as_root->in.run); /* uid 0, the CLI asked for 1000 */
	assert_non_null(cli->in.run);
}

static void test_identical_containers_of_two_runs_are_ambiguous(void **state)
{
	(void)state;
	struct proc *one = script_cli(10, 0, cli_argv);
	struct proc *two = script_cli(20, 1, cli_argv);
	assert_true(one->in.run != two->in.run);
	struct proc *a = run_prog(31, NULL, 100, 501, burn_argv);
	struct proc *b = run_prog(41, NULL, 101, 502, burn_argv);
	assert_null(a->in.run);
	assert_null(b->in.run);
	assert_true(one->in.run->dirty);
	/* Both written as ambiguous, with both runs as candidates. */
	assert_int_equal(store_begin(&st), 0);
	assert_int_equal(correlate_write(&corr), 0);
	assert_int_equal(store_commit(&st), 0);
	correlate_committed(&corr);
	sqlite3_stmt *q;
	assert_int_equal(
	    sqlite3_prepare_v2(st.db,
			       "SELECT count(*), sum(method = 'ambiguous'), "
			       "sum(run_id IS NULL), sum(candidates) FROM container_links",
			       -1, &q, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(q, 0), 2);
	assert_int_equal(sqlite3_column_int(q, 1), 2);
	assert_int_equal(sqlite3_column_int(q, 2), 2);
	assert_int_equal(sqlite3_column_int(q, 3), 4);
	sqlite3_finalize(q);
}

static void test_the_whole_argv_beats_an_entrypoints_tail(void **state)
{
	(void)state;
	static const char *const tail_argv[] = {"/usr/bin/docker", "run", "img:1", "2", NULL};
	struct proc *tail = script_cli(20, 1, tail_argv);
	struct proc *whole = script_cli(10, 0, cli_argv);
	struct proc *burn = run_prog(31, NULL, 100, 501, burn_argv);
	assert_ptr_equal(burn->in.run, whole->in.run);
	assert_true(burn->in.run != tail->in.run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_container_joins_the_clis_step, setup_containers,
					    teardown),
	    cmocka_unit_test_setup_teardown(
		test_a_cli_starts_one_container_and_only_after_it_started, setup_containers,
		teardown),
	    cmocka_unit_test_setup_teardown(test_another_uid_is_not_the_clis, setup_containers,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_identical_containers_of_two_runs_are_ambiguous,
					    setup_containers, teardown),
	    cmocka_unit_test_setup_teardown(test_the_whole_argv_beats_an_entrypoints_tail,
					    setup_containers, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
