/*
 * Correlation of engine jobs and of what runs beside them, with process
 * entries made by hand:
 *   - a Toil Python workflow's leader becomes a Toil run at its first worker;
 *     each user job is a step named by its job, Toil's own jobs are no step;
 *   - a leader a script runs leaves the script's run for a Toil run of its own;
 *   - toil-cwl-runner's CWL tool jobs are steps named by their tool, its
 *     bookkeeping jobs (CWLWorkflow, CWLScatter, ...) belong to the engine;
 *   - deny-listed programs inside a run are recorded as helpers and never
 *     name a step; outside runs they are not recorded;
 *   - a script started by a program is a run; one a deny-listed daemon runs,
 *     or an installed system script, is not.
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

#define CORRELATE_FIXTURE_TAG "correlate-jobs-test"
#include "test/unit/correlate_fixture.h"

/* p execs argv: its exe is argv[0] where that is a path (as the kernel sees it). */
static void exec(struct proc *p, struct proc *parent, const char *const *argv)
{
	if (argv[0][0] == '/' && strcmp(p->row.exe, argv[0]) != 0 &&
	    strncmp(p->row.exe, argv[0], strlen(argv[0])) != 0) {
		free(p->row.exe);
		p->row.exe = strdup(argv[0]);
	}
	p->life.execed = true;
	correlate_exec(&corr, p, parent, (char *const *)argv, argv_count(argv),
		       p->row.start_epoch_ns);
}

/* As setup, with the shipped deny list (dpkg, apt-get ...). */
static int setup_deny(void **state)
{
	(void)state;
	return fixture_open("deploy/etc/tools.deny");
}

static void copy_comm(struct proc *p, const char *comm)
{
	snprintf(p->row.comm, sizeof(p->row.comm), "%s", comm);
}

static void test_toil_python_workflow_is_known_by_its_first_worker(void **state)
{
	static const char *const shell_argv[] = {"bash", NULL};
	static const char *const leader_argv[] = {"/usr/bin/python3", "flow.py", "file:/w/js",
						  NULL};
	static const char *const sh_argv[] = {
	    "/bin/sh", "-c", "_toil_worker burn file:/w/js kind-burn/instance-1", NULL};
	static const char *const worker_argv[] = {
	    "/usr/bin/python3", "/usr/bin/_toil_worker", "burn",
	    "file:/w/js",	"kind-burn/instance-1",	 NULL};
	static const char *const gzip_argv[] = {"gzip", "-c", "in.txt", NULL};
	static const char *const du_argv[] = {"du", "-s", "/tmp/x/ab", NULL};
	static const char *const own_argv[] = {
	    "/bin/sh", "-c", "_toil_worker EncapsulatedJob file:/w/js kind-E/instance-2", NULL};
	struct proc *shell = process(30, NULL, 0, "/usr/bin/bash", shell_argv);
	struct proc *leader = process(31, shell, 10, "/usr/bin/python3.11", leader_argv);

	exec(shell, NULL, shell_argv);
	exec(leader, shell, leader_argv);
	assert_null(leader->in.run); /* a Python program like any other, so far */
	struct proc *sh = process(32, leader, 20, "/usr/bin/python3.11", leader_argv);
	exec(sh, leader, sh_argv);
	struct run *r = leader->in.run;
	assert_non_null(r);
	assert_string_equal(r->engine, "toil");
	assert_int_equal(r->source, RUN_ENGINE);
	assert_string_equal(r->row.pipeline, "flow");
	assert_string_equal(r->toil_job_store, "file:/w/js");
	assert_int_equal(r->engine_pid, 31);
	assert_null(leader->in.step);
	struct step *s = sh->in.step;
	assert_non_null(s);
	assert_string_equal(s->name, "burn"); /* the user's job function */
	assert_string_equal(s->engine_job, "kind-burn/instance-1");
	assert_string_equal(s->identity, "kind-burn/instance-1");

	struct proc *worker = process(33, sh, 30, "/bin/sh", sh_argv);
	exec(worker, sh, worker_argv);
	struct proc *gzip = process(34, worker, 40, "/usr/bin/gzip", worker_argv);
	exec(gzip, worker, gzip_argv);
	struct proc *du = process(35, worker, 50, "/usr/bin/du", worker_argv);
	exec(du, worker, du_argv);
	assert_ptr_equal(worker->in.step, s);
	assert_ptr_equal(gzip->in.step, s);
	assert_ptr_equal(du->in.step, s);
	assert_true(du->row.helper); /* Toil's disk probe of the job's scratch dir */
	assert_false(gzip->row.helper);
	assert_string_equal(s->name, "burn");

	struct proc *own = process(36, leader, 60, "/usr/bin/python3.11", leader_argv);
	exec(own, leader, own_argv);
	assert_ptr_equal(own->in.run, r);
	assert_null(own->in.step); /* Toil's own job: the engine's */
	assert_int_equal(r->n_steps, 1);
}

/* A script runs the workflow: the leader leaves the script's run and step for a Toil run. */
static void test_toil_leader_inside_a_script_gets_its_own_run(void **state)
{
	static const char *const shell_argv[] = {"bash", NULL};
	static const char *const script_argv[] = {"bash", "go.sh", NULL};
	static const char *const leader_argv[] = {"/usr/bin/python3", "flow.py", "/w/js", NULL};
	static const char *const sh_argv[] = {
	    "/bin/sh", "-c", "_toil_worker align file:/w/js kind-align/instance-9", NULL};
	struct proc *shell = process(70, NULL, 0, "/usr/bin/bash", shell_argv);
	struct proc *script = process(71, shell, 10, "/usr/bin/bash", script_argv);

	exec(shell, NULL, shell_argv);
	exec(script, shell, script_argv);
	struct run *sr = script->in.run;
	assert_non_null(sr);
	struct proc *leader = process(72, script, 20, "/usr/bin/bash", script_argv);
	exec(leader, script, leader_argv);
	assert_ptr_equal(leader->in.run, sr);
	assert_non_null(leader->in.step); /* a step of the script, so far */
	struct proc *sh = process(73, leader, 30, "/usr/bin/python3.11", leader_argv);
	exec(sh, leader, sh_argv);
	struct run *r = leader->in.run;
	assert_true(r != sr);
	assert_string_equal(r->engine, "toil");
	assert_null(leader->in.step);
	assert_ptr_equal(sh->in.run, r);
	assert_string_equal(sh->in.step->name, "align");
	assert_int_equal(r->n_steps, 1);
}

static void test_toil_cwl_tool_jobs_are_steps_named_by_their_tool(void **state)
{
	static const char *const leader_argv[] = {"/usr/bin/python3",
						  "/usr/bin/toil-cwl-runner",
						  "--jobStore",
						  "/w/js",
						  "scatter.cwl",
						  "in.yml",
						  NULL};
	static const char *const wf_argv[] = {
	    "/bin/sh", "-c", "_toil_worker CWLWorkflow file:/w/js kind-CWLWorkflow/instance-a",
	    NULL};
	static const char *const scatter_argv[] = {
	    "/bin/sh", "-c", "_toil_worker CWLScatter file:/w/js kind-CWLScatter/instance-b", NULL};
	static const char *const job_argv[] = {
	    "/bin/sh", "-c", "_toil_worker CWLJob file:/w/js kind-CWLJob/instance-c", NULL};
	static const char *const worker_argv[] = {
	    "/usr/bin/python3", "/usr/bin/_toil_worker",  "CWLJob",
	    "file:/w/js",	"kind-CWLJob/instance-c", NULL};
	static const char *const gzip_argv[] = {"gzip", "-c", "a.txt", NULL};
	struct proc *leader = process(40, NULL, 0, "/usr/bin/python3.11", leader_argv);

	exec(leader, NULL, leader_argv);
	struct run *r = leader->in.run;
	assert_non_null(r);
	assert_string_equal(r->engine, "toil");
	struct proc *wf = process(41, leader, 10, "/usr/bin/python3.11", leader_argv);
	exec(wf, leader, wf_argv);
	struct proc *sc = process(42, leader, 20, "/usr/bin/python3.11", leader_argv);
	exec(sc, leader, scatter_argv);
	assert_ptr_equal(wf->in.run, r);
	assert_null(wf->in.step);
	assert_null(sc->in.step);
	struct proc *job = process(43, leader, 30, "/usr/bin/python3.11", leader_argv);
	exec(job, leader, job_argv);
	struct proc *worker = process(44, job, 40, "/bin/sh", job_argv);
	exec(worker, job, worker_argv);
	struct step *s = job->in.step;
	assert_non_null(s);
	assert_string_equal(s->name, ""); /* named by its tool, not by the worker */
	struct proc *gzip = process(45, worker, 50, "/usr/bin/gzip", worker_argv);
	exec(gzip, worker, gzip_argv);
	assert_string_equal(s->name, "gzip");
	assert_int_equal(r->n_steps, 1);
	assert_string_equal(r->toil_job_store, "file:/w/js");
}

static void test_deny_listed_programs_in_a_run_are_helpers(void **state)
{
	static const char *const shell_argv[] = {"bash", NULL};
	static const char *const script_argv[] = {"bash", "setup.sh", NULL};
	static const char *const apt_argv[] = {"apt-get", "update", NULL};
	static const char *const http_argv[] = {"/usr/lib/apt/methods/http", NULL};
	static const char *const sort_argv[] = {"sort", "x", NULL};
	struct proc *shell = process(50, NULL, 0, "/usr/bin/bash", shell_argv);
	struct proc *script = process(51, shell, 10, "/usr/bin/bash", script_argv);

	exec(shell, NULL, shell_argv);
	exec(script, shell, script_argv);
	struct proc *apt = process(52, script, 20, "/usr/bin/apt-get", script_argv);
	exec(apt, script, apt_argv);
	assert_true(apt->in.denied);
	assert_true(apt->row.helper);
	assert_true(correlate_recordable(apt)); /* inside a run: kept, and counted */
	struct step *s = apt->in.step;
	assert_non_null(s);
	struct proc *http = process(53, apt, 30, "/usr/lib/apt/methods/http", apt_argv);
	exec(http, apt, http_argv);
	assert_true(http->row.helper);
	assert_ptr_equal(http->in.step, s);
	assert_false(s->naming.named); /* never named after apt's helper */
	copy_comm(apt, "apt-get");
	finish(http, 100, 5, 0);
	finish(apt, 110, 20, 0);
	assert_string_equal(s->name, "apt-get");
	assert_int_equal(s->r.processes, 2);
	assert_int_equal(s->r.cpu_ns, 25 * MS);

	struct proc *sort = process(54, script, 120, "/usr/bin/sort", script_argv);
	exec(sort, script, sort_argv);
	assert_false(sort->row.helper);
	assert_string_equal(sort->in.step->name, "sort");

	/* Outside any run, the same program is system noise: not written. */
	struct proc *lone = process(55, shell, 130, "/usr/bin/apt-get", shell_argv);
	exec(lone, shell, apt_argv);
	assert_null(lone->in.run);
	assert_false(correlate_recordable(lone));
}

static void test_a_script_started_by_a_program_is_a_run(void **state)
{
	static const char *const py_argv[] = {"/usr/bin/python3", "driver.py", NULL};
	static const char *const script_argv[] = {"/bin/bash", "/home/u/steps.sh", NULL};
	static const char *const sys_argv[] = {"/bin/sh", "/usr/share/foo/hook.sh", NULL};
	static const char *const dpkg_argv[] = {"dpkg", "--configure", "-a", NULL};
	struct proc *py = process(60, NULL, 0, "/usr/bin/python3.11", py_argv);

	exec(py, NULL, py_argv);
	struct proc *script = process(61, py, 10, "/usr/bin/python3.11", py_argv);
	exec(script, py, script_argv);
	assert_non_null(script->in.run);
	assert_string_equal(script->in.run->engine, "script");
	/* An installed system script a program runs is the system's. */
	struct proc *hook = process(62, py, 20, "/usr/bin/python3.11", py_argv);
	exec(hook, py, sys_argv);
	assert_null(hook->in.run);
	/* A script a deny-listed daemon runs (dpkg's maintainer scripts) is not a run. */
	struct proc *dpkg = process(63, NULL, 30, "/usr/bin/dpkg", dpkg_argv);
	exec(dpkg, NULL, dpkg_argv);
	assert_true(dpkg->in.denied);
	struct proc *post = process(64, dpkg, 40, "/usr/bin/dpkg", dpkg_argv);
	exec(post, dpkg, script_argv);
	assert_null(post->in.run);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_toil_python_workflow_is_known_by_its_first_worker,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_toil_leader_inside_a_script_gets_its_own_run,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_toil_cwl_tool_jobs_are_steps_named_by_their_tool,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_deny_listed_programs_in_a_run_are_helpers,
					    setup_deny, teardown),
	    cmocka_unit_test_setup_teardown(test_a_script_started_by_a_program_is_a_run, setup_deny,
					    teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
