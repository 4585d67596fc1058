/*
 * Batch jobs joined to their submitters (correlate/batch.c, batch_argv.c):
 *   - submitters' argv by their documented shapes: sbatch, srun, salloc (Slurm),
 *     qsub (PBS Pro, Torque), bsub (LSF), `aws batch submit-job`; array specs;
 *   - what a job's processes show of the engine inside (Snakemake's jobscript);
 *   - linking with process entries made by hand: a job joins the run and step
 *     that submitted it; two runs that could have is `ambiguous` and neither
 *     gets it; another dir, another user, a job older than the submitter or a
 *     refused sbatch is `unmatched`; a job whose batch script cannot tell its
 *     step gets it from the inner snakemake's rule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "aggregator/correlate/batch.h"
#include "aggregator/model/groups.h"
#define CORRELATE_FIXTURE_TAG "batch-test"
#include "test/unit/correlate_fixture.h"

static struct batch_submit parse(const char *program, const char *cwd, const char *const *argv)
{
	struct batch_submit s;
	size_t argc = 0;

	while (argv[argc])
		argc++;
	assert_true(batch_submit_parse(program, (char *const *)argv, argc, cwd, &s));
	return s;
}

static void test_slurm_submitters(void **state)
{
	/* Snakemake's --cluster "sbatch -o ..." with its jobscript. */
	const char *const sm[] = {"sbatch", "-o", "/w/slurm-%j.out",
				  "/w/.snakemake/tmp.k2x9/snakejob.align.12.sh", NULL};
	struct batch_submit s = parse("sbatch", "/w", sm);
	assert_string_equal(s.scheduler, "slurm");
	assert_string_equal(s.work_dir, "/w");
	assert_string_equal(s.script, "/w/.snakemake/tmp.k2x9/snakejob.align.12.sh");
	assert_string_equal(s.engine_dir, "/w/.snakemake/tmp.k2x9");
	assert_string_equal(s.engine_rule, "align");
	assert_string_equal(s.engine_job_id, "12");
	assert_false(s.waits);
	assert_int_equal(s.array_tasks, 1);

	/* Options with values before a relative script and its own arguments. */
	const char *const wait[] = {"sbatch", "--wait", "-J", "call",	       "-D", "sub", "-p",
				    "debug",  "job.sh", "-J", "not-an-option", NULL};
	s = parse("sbatch", "/home/ana", wait);
	assert_true(s.waits);
	assert_string_equal(s.job_name, "call");
	assert_string_equal(s.work_dir, "/home/ana/sub");
	assert_string_equal(s.script, "/home/ana/job.sh");
	assert_string_equal(s.engine_rule, "");

	const char *const arr[] = {"sbatch", "--parsable", "--array=1-10:3%2", "--chdir=/scratch",
				   "--mem",  "4G",	   "task.sh",	       NULL};
	s = parse("sbatch", "/home/ana", arr);
	assert_string_equal(s.array, "1-10:3%2");
	assert_int_equal(s.array_tasks, 4); /* 1, 4, 7, 10 */
	assert_string_equal(s.work_dir, "/scratch");
	assert_string_equal(s.script, "/home/ana/task.sh");

	const char *const wrap[] = {"sbatch", "--wrap=python3 x.py", "-a", "0-15", NULL};
	s = parse("sbatch", "/w", wrap);
	assert_string_equal(s.command, "python3 x.py");
	assert_string_equal(s.script, "");
	assert_int_equal(s.array_tasks, 16);

	/* Nextflow's Slurm executor: `sbatch .command.run` from the task's work dir. */
	const char *const nf[] = {"sbatch", ".command.run", NULL};
	s = parse("sbatch", "/w/work/3f/9a0b1c", nf);
	assert_string_equal(s.work_dir, "/w/work/3f/9a0b1c");
	assert_string_equal(s.script, "/w/work/3f/9a0b1c/.command.run");

	const char *const srun[] = {"srun",	    "-n1",  "-J",  "direct",
				    "--cpu-bind=q", "burn", "0.3", NULL};
	s = parse("srun", "/w", srun);
	assert_true(s.waits);
	assert_string_equal(s.command, "burn 0.3");
	assert_string_equal(s.job_name, "direct");
	const char *const salloc[] = {"salloc", "-N", "1", "--exclusive", "bash", NULL};
	s = parse("salloc", "/w", salloc);
	assert_string_equal(s.command, "bash");
	assert_string_equal(s.submitter, "salloc");
}

static void test_pbs_lsf_aws_submitters(void **state)
{
	/* PBS Pro: -J array, -W block=true waits; the job starts in $HOME unless told. */
	const char *const pro[] = {
	    "qsub", "-N",	  "align",   "-J", "1-10", "-l", "select=1:ncpus=4",
	    "-W",   "block=true", "job.pbs", NULL};
	struct batch_submit s = parse("qsub", "/w", pro);
	assert_string_equal(s.scheduler, "pbs");
	assert_string_equal(s.job_name, "align");
	assert_int_equal(s.array_tasks, 10);
	assert_true(s.waits);
	assert_string_equal(s.work_dir, "");
	assert_string_equal(s.script, "/w/job.pbs");
	const char *const cmd[] = {"qsub", "-q", "short", "--", "/bin/sleep", "10", NULL};
	s = parse("qsub", "/w", cmd);
	assert_string_equal(s.command, "/bin/sleep 10");
	assert_string_equal(s.script, "");
	/* Torque: -d work dir, -t array. */
	const char *const torque[] = {"qsub", "-d", "/scratch/x", "-t", "1-5", "run.sh", NULL};
	s = parse("qsub", "/w", torque);
	assert_string_equal(s.work_dir, "/scratch/x");
	assert_int_equal(s.array_tasks, 5);

	/* LSF: -J "name[1-10]" is an array, -K waits, -cwd the work dir, then the command. */
	const char *const lsf[] = {"bsub",     "-J", "align[1-10]", "-n", "4", "-cwd",
				   "/scratch", "-K", "./run.sh",    "-o", "x", NULL};
	s = parse("bsub", "/w", lsf);
	assert_string_equal(s.scheduler, "lsf");
	assert_string_equal(s.job_name, "align");
	assert_string_equal(s.array, "1-10");
	assert_int_equal(s.array_tasks, 10);
	assert_true(s.waits);
	assert_string_equal(s.work_dir, "/scratch");
	assert_string_equal(s.command, "./run.sh -o x");

	const char *const aws[] = {"/usr/bin/python3",
				   "/usr/local/bin/aws",
				   "batch",
				   "submit-job",
				   "--job-name",
				   "align",
				   "--job-queue",
				   "q",
				   "--job-definition",
				   "d:3",
				   "--array-properties",
				   "size=4",
				   NULL};
	s = parse("aws", "/w", aws);
	assert_string_equal(s.scheduler, "aws-batch");
	assert_string_equal(s.job_name, "align");
	assert_int_equal(s.array_tasks, 4);

	struct batch_submit none;
	const char *const s3[] = {"aws", "s3", "cp", "a", "s3://b/a", NULL};
	assert_false(batch_submit_parse("aws", (char *const *)s3, 5, "/w", &none));
	const char *const sq[] = {"squeue", "-u", "ana", NULL};
	assert_false(batch_submit_parse("squeue", (char *const *)sq, 3, "/w", &none));
}

static void test_array_specs(void **state)
{
	assert_int_equal(batch_array_tasks("1-3"), 3);
	assert_int_equal(batch_array_tasks("1,5,7"), 3);
	assert_int_equal(batch_array_tasks("0-15:4%2"), 4);
	assert_int_equal(batch_array_tasks("1-3,10-11"), 5);
	assert_int_equal(batch_array_tasks("7"), 1);
	assert_int_equal(batch_array_tasks("a-b"), 0);
	assert_int_equal(batch_array_tasks("5-1"), 0);
}

static void test_job_hints(void **state)
{
	/* The inner snakemake of Snakemake 7's cluster jobscript (executors/__init__.py). */
	const char *const inner[] = {"/usr/bin/python3",
				     "-m",
				     "snakemake",
				     "--snakefile",
				     "/w/Snakefile",
				     "--target-jobs",
				     "align:x=a",
				     "--allowed-rules",
				     "align",
				     "--cores",
				     "all",
				     "--attempt",
				     "1",
				     "--force-use-threads",
				     "--wait-for-files",
				     "/w/.snakemake/tmp.k2x9",
				     "a.fq",
				     NULL};
	struct batch_job_hint h;
	size_t n = 0;
	while (inner[n])
		n++;
	assert_true(batch_job_hint_parse("snakemake", (char *const *)inner, n, &h));
	assert_string_equal(h.snakefile, "/w/Snakefile");
	assert_string_equal(h.engine_rule, "align");
	assert_string_equal(h.engine_dir, "/w/.snakemake/tmp.k2x9");
	const char *const touch[] = {"touch", "/w/.snakemake/tmp.k2x9/12.jobfinished", NULL};
	assert_true(batch_job_hint_parse("touch", (char *const *)touch, 2, &h));
	assert_string_equal(h.engine_job_id, "12");
	assert_string_equal(h.engine_dir, "/w/.snakemake/tmp.k2x9");
	const char *const other[] = {"touch", "/w/out.txt", NULL};
	assert_false(batch_job_hint_parse("touch", (char *const *)other, 2, &h));
}

static void test_pbs_and_lsf_cgroups(void **state)
{
	static const struct {
		const char *path, *scheduler, *job;
	} cases[] = {
	    /* PBS Pro's cgroup hook (pbs_cgroups.PY), v1 and systemd layouts. */
	    {"/pbs_jobs.service/jobid/1234.pbs01", "pbs", "1234.pbs01"},
	    {"/system.slice/pbs_jobs.service/jobid/88[3].srv/tasks", "pbs", "88[3].srv"},
	    {"/pbspro/77.head", "pbs", "77.head"},
	    {"/torque/4321.master", "pbs", "4321.master"},
	    /* LSF: lsf/<cluster>/job.<id>.<array index>.<submit time> */
	    {"/lsf/cluster1/job.5501.0.1733000000", "lsf", "5501"},
	    {"/lsf/cluster1/job.5502.7.1733000000/task", "lsf", "5502[7]"},
	};
	char sched[16], job[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		assert_true(
		    batch_cgroup_job(cases[i].path, sched, sizeof(sched), job, sizeof(job)));
		assert_string_equal(sched, cases[i].scheduler);
		assert_string_equal(job, cases[i].job);
	}
	const char *const not_jobs[] = {
	    "/user.slice/user-1000.slice",	"/lsf",	       "/lsf/cluster1",
	    "/slurm_vm/uid_0/job_4/step_batch", "/docker/abc", NULL};
	for (size_t i = 0; not_jobs[i]; i++)
		assert_false(batch_cgroup_job(not_jobs[i], sched, sizeof(sched), job, sizeof(job)));
}

/* --- linking, with process entries made by hand ------------------------------------------ */

/* A process forked from parent at start_ms that execs argv in cwd as uid, in cgroup cg (0: none).
 */
static struct proc *run_process(struct proc *parent, uint64_t start_ms, const char *cwd,
				uint32_t uid, uint64_t cg, const char *const *argv)
{
	struct proc *p = proc_entry((uint32_t)(101 + n_procs), parent, start_ms, argv[0], cwd);

	p->row.argv_json = strdup("[]");
	p->row.uid = uid;
	p->row.cgroup1_id = cg;
	correlate_fork(&corr, p, parent);
	correlate_exec(&corr, p, parent, (char *const *)argv, argv_count(argv),
		       p->row.start_epoch_ns);
	return p;
}

/* The process exits with the code, its use never measured. */
static void finish_unmeasured(struct proc *p, uint64_t end_ms, int code)
{
	p->row.end_epoch_ns = (int64_t)(end_ms * MS);
	p->row.state = "exited";
	p->row.has_exit_code = true;
	p->row.exit_code = code;
	p->life.exited = true;
	correlate_exit(&corr, p);
}

/* A script run from an interactive shell, in cwd as uid: its engine process. */
static struct proc *script_run(uint64_t start_ms, const char *cwd, uint32_t uid)
{
	static const char *const shell[] = {"/bin/bash", NULL};
	static const char *const script[] = {"/bin/bash", "submit.sh", NULL};
	struct proc *sh = run_process(NULL, start_ms, cwd, uid, 0, shell);
	return run_process(sh, start_ms + 1, cwd, uid, 0, script);
}

static struct proc *sbatch(struct proc *parent, uint64_t start_ms, const char *script)
{
	const char *const argv[] = {"/usr/bin/sbatch", "-o", "out.%j", script, NULL};
	return run_process(parent, start_ms, parent->row.cwd, parent->row.uid, 0, argv);
}

/* The batch script of job `job` (cgroup id cg), started at start_ms in cwd. */
static struct proc *batch_script(const char *job, uint64_t cg, uint64_t start_ms, const char *cwd,
				 uint32_t uid)
{
	static const char *const argv[] = {"/bin/bash", "/var/spool/slurmd/job00042/slurm_script",
					   NULL};
	char path[96];

	snprintf(path, sizeof(path), "/slurm_vm/uid_%u/job_%s/step_batch/task_0", uid, job);
	correlate_cgroup(&corr, cg, true, path);
	return run_process(NULL, start_ms, cwd, uid, cg, argv);
}

/* batch_jobs.link and candidates of the job, after writing what changed. */
static void job_link(const char *job, char *link, size_t size, int *candidates)
{
	sqlite3_stmt *q;

	assert_int_equal(store_begin(&st), 0);
	assert_int_equal(correlate_write(&corr), 0);
	assert_int_equal(store_commit(&st), 0);
	correlate_committed(&corr);
	assert_int_equal(
	    sqlite3_prepare_v2(st.db, "SELECT link, candidates FROM batch_jobs WHERE job_id = ?",
			       -1, &q, NULL),
	    SQLITE_OK);
	sqlite3_bind_text(q, 1, job, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	snprintf(link, size, "%s", (const char *)sqlite3_column_text(q, 0));
	*candidates = sqlite3_column_int(q, 1);
	sqlite3_finalize(q);
}

static void test_job_joins_its_submitters_run_and_step(void **state)
{
	struct proc *script = script_run(1000, "/w", 1000);
	struct proc *sub = sbatch(script, 1100, "job.sh");
	struct run *run = script->in.run;
	struct step *step = sub->in.step;
	assert_non_null(run);
	assert_non_null(step);
	finish_unmeasured(sub, 1150, 0); /* sbatch returns at once; the job starts later */
	struct proc *job = batch_script("42", 900, 5000, "/w", 1000);
	assert_ptr_equal(job->in.run, run);
	assert_ptr_equal(job->in.step, step);
	/* A later step of the job (srun inside it) joins it too, through the job id. */
	static const char *const task[] = {"/usr/bin/burn", "0.2", NULL};
	correlate_cgroup(&corr, 901, true, "/slurm_vm/uid_1000/job_42/step_0/task_0");
	struct proc *srun_task = run_process(NULL, 6000, "/w", 1000, 901, task);
	assert_ptr_equal(srun_task->in.run, run);
	assert_ptr_equal(srun_task->in.step, step);
	char link[16];
	int n;
	job_link("42", link, sizeof(link), &n);
	assert_string_equal(link, "linked");
	assert_int_equal(n, 1);
	/* The queue wait: from sbatch's start to the job's first process. */
	sqlite3_stmt *q;
	assert_int_equal(sqlite3_prepare_v2(st.db,
					    "SELECT queue_wait_ns, submission_id FROM "
					    "batch_jobs WHERE job_id = '42'",
					    -1, &q, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int64(q, 0), (5000 - 1100) * MS);
	assert_int_equal(sqlite3_column_int64(q, 1), sub->row.id);
	sqlite3_finalize(q);
}

static void test_two_runs_that_could_have_submitted_it_is_ambiguous(void **state)
{
	struct proc *a = script_run(1000, "/w", 1000);
	struct proc *b = script_run(1010, "/w", 1000);
	finish_unmeasured(sbatch(a, 1100, "job.sh"), 1150, 0);
	finish_unmeasured(sbatch(b, 1120, "job.sh"), 1170, 0);
	struct proc *job = batch_script("43", 900, 5000, "/w", 1000);
	assert_non_null(job->in.run);
	assert_ptr_not_equal(job->in.run, a->in.run);
	assert_ptr_not_equal(job->in.run, b->in.run);
	assert_string_equal(job->in.run->row.name, "slurm-job-43");
	char link[16];
	int n;
	job_link("43", link, sizeof(link), &n);
	assert_string_equal(link, "ambiguous");
	assert_int_equal(n, 2);
}

static void test_what_could_not_have_submitted_it_is_unmatched(void **state)
{
	struct proc *script = script_run(1000, "/w", 1000);
	finish_unmeasured(sbatch(script, 1100, "job.sh"), 1150, 0);
	struct proc *refused = sbatch(script, 1200, "bad.sh");
	finish_unmeasured(refused, 1210, 1); /* sbatch: error: ... : no job */
	const struct {
		const char *job, *cwd;
		uint32_t uid;
		uint64_t start_ms;
	} cases[] = {
	    {"50", "/elsewhere", 1000, 5000}, /* another work dir */
	    {"51", "/w", 1001, 5000},	      /* another user */
	    {"52", "/w", 1000, 1050},	      /* started before the sbatch */
	};
	char link[16];
	int n;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct proc *job = batch_script(cases[i].job, 910 + i, cases[i].start_ms,
						cases[i].cwd, cases[i].uid);
		assert_ptr_not_equal(job->in.run, script->in.run);
		job_link(cases[i].job, link, sizeof(link), &n);
		assert_string_equal(link, "unmatched");
	}
	/* The one sbatch that did submit a job still waits for it; the refused one does not. */
	struct proc *job = batch_script("53", 920, 6000, "/w", 1000);
	assert_ptr_equal(job->in.run, script->in.run);
	job_link("53", link, sizeof(link), &n);
	assert_string_equal(link, "linked");
	assert_int_equal(n, 1);
}

static void test_inner_snakemake_tells_the_step(void **state)
{
	static const char *const shell[] = {"/bin/bash", NULL};
	static const char *const smk[] = {
	    "/usr/bin/python3", "/usr/bin/snakemake", "-j3", "--cluster", "sbatch", NULL};
	struct proc *sh = run_process(NULL, 1000, "/w", 1000, 0, shell);
	struct proc *engine = run_process(sh, 1001, "/w", 1000, 0, smk);
	assert_non_null(engine->in.run);
	assert_string_equal(engine->in.run->engine, "snakemake");
	struct step *steps[2];
	const char *rules[] = {"align", "count"};
	for (int i = 0; i < 2; i++) {
		char script[96], code[160];
		snprintf(script, sizeof(script), "/w/.snakemake/tmp.k2/snakejob.%s.%d.sh", rules[i],
			 i + 1);
		snprintf(code, sizeof(code), "sbatch -o x %s", script);
		const char *const sh_c[] = {"/bin/sh", "-c", code, NULL};
		struct proc *wrapper = run_process(engine, 1100 + 10 * i, "/w", 1000, 0, sh_c);
		steps[i] = wrapper->in.step;
		assert_non_null(steps[i]);
		assert_string_equal(steps[i]->name, rules[i]);
		const char *const sb[] = {"/usr/bin/sbatch", "-o", "x", script, NULL};
		struct proc *s = run_process(wrapper, 1101 + 10 * i, "/w", 1000, 0, sb);
		finish_unmeasured(s, 1105 + 10 * i, 0);
	}
	/* count's job starts first: its batch script alone cannot tell which it is. */
	struct proc *job = batch_script("60", 930, 5000, "/w", 1000);
	assert_ptr_equal(job->in.run, engine->in.run);
	assert_null(job->in.step);
	char link[16];
	int n;
	job_link("60", link, sizeof(link), &n);
	assert_string_equal(link, "ambiguous"); /* so far: the run, no step */
	assert_int_equal(n, 2);
	const char *const inner[] = {"/usr/bin/python3",
				     "-m",
				     "snakemake",
				     "--snakefile",
				     "/w/Snakefile",
				     "--target-jobs",
				     "count:",
				     "--wait-for-files",
				     "/w/.snakemake/tmp.k2",
				     NULL};
	struct proc *smk_inner = run_process(job, 5010, "/w", 1000, 930, inner);
	assert_ptr_equal(smk_inner->in.step, steps[1]);
	job_link("60", link, sizeof(link), &n);
	assert_string_equal(link, "linked");
	assert_int_equal(n, 1);
}

static void test_pbs_job_joins_its_qsub(void **state)
{
	struct proc *script = script_run(1000, "/w", 1000);
	const char *const qsub[] = {"/opt/pbs/bin/qsub", "-N", "align", "job.pbs", NULL};
	struct proc *q = run_process(script, 1100, "/w", 1000, 0, qsub);
	finish_unmeasured(q, 1120, 0);
	/* PBS Pro starts the job in the user's home: the work dir is no evidence here. */
	static const char *const job_shell[] = {"/bin/bash", NULL};
	correlate_cgroup(&corr, 940, true, "/pbs_jobs.service/jobid/1234.pbs01");
	struct proc *job = run_process(NULL, 4000, "/home/ana", 1000, 940, job_shell);
	assert_ptr_equal(job->in.run, script->in.run);
	assert_ptr_equal(job->in.step, q->in.step);
	char link[16];
	int n;
	job_link("1234.pbs01", link, sizeof(link), &n);
	assert_string_equal(link, "linked");
}

/*
 * A script's `sbatch --wait job.sh`: the step holds the job, whose programs did its
 * work; the submitter only waited, like a container's CLI, so it never names the step.
 */
static void test_waiting_submitters_step_is_named_by_its_jobs_work(void **state)
{
	struct proc *script = script_run(1000, "/w", 1000);
	const char *const argv[] = {"/usr/bin/sbatch", "--wait", "job.sh", NULL};
	struct proc *sub = run_process(script, 1100, "/w", 1000, 0, argv);
	struct step *step = sub->in.step;
	assert_non_null(step);
	struct proc *job = batch_script("44", 950, 3000, "/w", 1000);
	static const char *const burn[] = {"/usr/bin/burn", "0.6", NULL};
	struct proc *b = run_process(job, 3010, "/w", 1000, 950, burn);
	assert_ptr_equal(b->in.step, step);
	/* Its work in a forked child, as a program that forks workers does. */
	struct proc *w = process((uint32_t)(101 + n_procs), b, 3020, "/usr/bin/burn", burn);
	w->row.cgroup1_id = 950;
	assert_ptr_equal(w->in.step, step);
	finish(w, 3690, 600, 0);
	finish(b, 3700, 1, 0);
	finish(job, 3710, 3, 0);
	finish(sub, 4000, 6, 0);
	assert_string_equal(step->name, "burn");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_slurm_submitters),
	    cmocka_unit_test(test_pbs_lsf_aws_submitters),
	    cmocka_unit_test(test_array_specs),
	    cmocka_unit_test(test_job_hints),
	    cmocka_unit_test(test_pbs_and_lsf_cgroups),
	    cmocka_unit_test_setup_teardown(test_pbs_job_joins_its_qsub, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_job_joins_its_submitters_run_and_step, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_two_runs_that_could_have_submitted_it_is_ambiguous,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_what_could_not_have_submitted_it_is_unmatched,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_inner_snakemake_tells_the_step, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_waiting_submitters_step_is_named_by_its_jobs_work,
					    setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
