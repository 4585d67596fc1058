/* Workflow engines: which process is a run (and of which pipeline), which starts a
 * step, and what inside a step is instrumentation, from argv, cwd and cgroups only.
 * The argv shapes are the engines' real ones (docs/correlation.md has sources). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "aggregator/correlate/engines.h"

#include "common/taskdir.h"

#define TASK_DIR "/scratch/run1/work/3f/9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c"

struct view_case {
	const char *exe, *cwd;
	const char *argv[10];
};

/* Fills a view of a process (tool identified as the aggregator does). */
static void make_view(const struct view_case *c, struct process_view *v, struct tool_identity *t,
		      struct cgroup_context *cg)
{
	size_t argc = 0;

	while (argc < 10 && c->argv[argc])
		argc++;
	tool_identify(c->exe, (char *const *)c->argv, argc, t);
	memset(v, 0, sizeof(*v));
	memset(cg, 0, sizeof(*cg));
	v->argv = (char *const *)c->argv;
	v->argc = argc;
	v->exe = c->exe;
	v->cwd = c->cwd;
	v->tool = t;
	v->cgroup = cg;
}

static const char *detect(const struct view_case *c, char *pipeline, size_t size)
{
	struct process_view v;
	struct tool_identity t;
	struct cgroup_context cg;

	make_view(c, &v, &t, &cg);
	const struct engine *e = engine_detect(&v, pipeline, size);
	return e ? e->name : NULL;
}

static void test_runs_and_pipelines(void **state)
{
	static const struct {
		struct view_case view;
		const char *engine, *pipeline;
	} cases[] = {
	    {{"/usr/lib/jvm/bin/java",
	      "/home/ana",
	      {"java", "-cp", "/opt/nextflow/.nextflow/framework/23.10.0/nextflow-23.10.0-one.jar",
	       "nextflow.cli.Launcher", "run", "nf-core/rnaseq", "-profile", "docker"}},
	     "nextflow",
	     "nf-core/rnaseq"},
	    {{"/usr/bin/bash",
	      "/home/ana/variants",
	      {"bash", "/usr/local/bin/nextflow", "run", "main.nf"}},
	     "nextflow",
	     "variants"},
	    {{"/usr/bin/python3.11",
	      "/data/p1",
	      {"/usr/bin/python3", "/usr/bin/snakemake", "--cores", "2", "-s",
	       "/src/rnaseq/Snakefile"}},
	     "snakemake",
	     "rnaseq"},
	    {{"/usr/bin/python3.11",
	      "/data/atac",
	      {"/usr/bin/python3", "/usr/bin/snakemake", "-j", "4"}},
	     "snakemake",
	     "atac"},
	    {{"/usr/bin/python3.11",
	      "/w",
	      {"python3", "/usr/bin/cwltool", "--no-container", "/src/qc/trim.cwl", "job.yml"}},
	     "cwltool",
	     "trim"},
	    {{"/usr/bin/python3.11",
	      "/w",
	      {"python3", "/usr/bin/toil-cwl-runner", "/src/wgs/workflow.cwl", "in.yml"}},
	     "toil",
	     "wgs"},
	    /* Not runs: a snakemake job subprocess, a plain tool, python inline code. */
	    {{"/usr/bin/python3.11",
	      "/w",
	      {"python3", "/usr/bin/snakemake", "--target-jobs", "align:sample=A", "--cores", "2"}},
	     NULL,
	     NULL},
	    {{"/usr/bin/samtools", "/w", {"samtools", "sort", "x.bam"}}, NULL, NULL},
	    {{"/usr/bin/python3.11", "/w", {"python3", "-c", "import snakemake"}}, NULL, NULL},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char pipeline[PIPELINE_NAME_MAX] = "";
		const char *engine = detect(&cases[i].view, pipeline, sizeof(pipeline));
		if (!cases[i].engine) {
			if (engine)
				fail_msg("case %zu: unexpected run of %s", i, engine);
			continue;
		}
		if (!engine || strcmp(engine, cases[i].engine) ||
		    strcmp(pipeline, cases[i].pipeline))
			fail_msg("case %zu: got %s/%s, expected %s/%s", i, engine ? engine : "none",
				 pipeline, cases[i].engine, cases[i].pipeline);
	}
}

static void test_script_runs(void **state)
{
	static const struct view_case script = {
	    "/usr/bin/bash", "/w", {"bash", "./qc-report.sh", "in"}};
	static const struct view_case inline_code = {"/usr/bin/bash", "/w", {"bash", "-c", "ls"}};
	static const struct view_case heredoc = {"/usr/bin/bash", "/w", {"bash", "/dev/fd/63"}};
	struct process_view v;
	struct tool_identity t;
	struct cgroup_context cg;
	char pipeline[PIPELINE_NAME_MAX];

	(void)state;
	make_view(&script, &v, &t, &cg);
	assert_true(engine_script.is_run(&v, pipeline, sizeof(pipeline)));
	assert_string_equal(pipeline, "qc-report");
	make_view(&inline_code, &v, &t, &cg);
	assert_false(engine_script.is_run(&v, pipeline, sizeof(pipeline)));
	make_view(&heredoc, &v, &t, &cg);
	assert_false(engine_script.is_run(&v, pipeline, sizeof(pipeline)));
}

static void test_nextflow_task_key(void **state)
{
	char key[96];

	(void)state;
	assert_true(nextflow_task_key(TASK_DIR, key, sizeof(key)));
	assert_string_equal(key, "3f/9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c");
	assert_false(nextflow_task_key("/scratch/run1/work/3f/9a0b1c2d3e4f5a6b7c8d9e0f1a2b3", key,
				       sizeof(key)));
	assert_false(nextflow_task_key("/scratch/run1/work/zz/9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c", key,
				       sizeof(key)));
	assert_false(nextflow_task_key("/home/ana", key, sizeof(key)));
	assert_false(nextflow_task_key(NULL, key, sizeof(key)));
}

static void test_nextflow_steps_and_helpers(void **state)
{
	static const struct view_case wrapper = {
	    "/usr/bin/bash", TASK_DIR, {"/bin/bash", "-ue", ".command.run"}};
	static const struct view_case elsewhere = {
	    "/usr/bin/bash", "/home/ana", {"/bin/bash", "-ue", ".command.run"}};
	static const struct view_case ps = {
	    "/usr/bin/ps", TASK_DIR, {"ps", "-o", "pid=,state=", "-p", "41"}};
	static const struct view_case work = {
	    "/usr/bin/bash", TASK_DIR, {"/bin/bash", "-ue", TASK_DIR "/.command.sh"}};
	static const struct view_case cli = {"/usr/bin/docker",
					     TASK_DIR,
					     {"docker", "run", "-i", "-w", TASK_DIR, "--name",
					      "nxf-abc", "ubuntu", "/bin/bash", "-ue"}};
	static const struct view_case tool = {
	    "/usr/bin/salmon", TASK_DIR, {"salmon", "quant", "-i", "idx"}};
	struct process_view v;
	struct tool_identity t;
	struct cgroup_context cg;
	struct step_spec spec;

	(void)state;
	make_view(&wrapper, &v, &t, &cg);
	v.parent_is_engine = true;
	assert_true(engine_nextflow.step(&v, 1, &spec));
	assert_string_equal(spec.key, "3f/9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c");
	assert_string_equal(spec.kind, "nextflow-task");
	assert_true(spec.wrapper);
	make_view(&elsewhere, &v, &t, &cg);
	assert_false(engine_nextflow.step(&v, 1, &spec));

	/* Inside a task: the wrapper's own processes are instrumentation. */
	const char *wrapper_argv = "[\"/bin/bash\",\"-ue\",\".command.run\"]";
	const char *work_argv = "[\"/bin/bash\",\"-ue\",\"" TASK_DIR "/.command.sh\"]";
	make_view(&ps, &v, &t, &cg);
	v.in_step = true;
	v.parent_argv_json = wrapper_argv;
	assert_false(engine_nextflow.step(&v, 2, &spec));
	assert_true(spec.helper);
	make_view(&cli, &v, &t, &cg);
	v.in_step = true;
	v.parent_argv_json = wrapper_argv;
	engine_nextflow.step(&v, 2, &spec);
	assert_true(spec.helper);
	make_view(&work, &v, &t, &cg);
	v.in_step = true;
	v.parent_argv_json = wrapper_argv;
	engine_nextflow.step(&v, 2, &spec);
	assert_false(spec.helper);
	assert_true(spec.wrapper);
	make_view(&tool, &v, &t, &cg);
	v.in_step = true;
	v.parent_argv_json = work_argv;
	engine_nextflow.step(&v, 2, &spec);
	assert_false(spec.helper);
	assert_false(spec.wrapper);
}

static void test_snakemake_steps(void **state)
{
	static const struct {
		struct view_case view;
		bool step;
		const char *name;
	} cases[] = {
	    {{"/usr/bin/bash",
	      "/w",
	      {"/usr/bin/bash", "-c", "set -euo pipefail;  bwa mem ref.fa r.fq > a.sam"}},
	     true,
	     ""},
	    {{"/usr/bin/python3.11",
	      "/w",
	      {"/usr/bin/python3", "-m", "snakemake", "--target-jobs",
	       "call_variants:sample=NA12878", "--cores", "1"}},
	     true,
	     "call_variants"},
	    {{"/usr/bin/bash", "/w", {"/bin/sh", "/w/.snakemake/tmp.x1/snakejob.sort_bam.7.sh"}},
	     true,
	     "sort_bam"},
	    {{"/usr/bin/python3.11", "/w", {"python3", "/w/.snakemake/scripts/tmpab12.plot.py"}},
	     true,
	     "plot.py"},
	    /* A run: job in Snakemake 7: the rule is inside the shell's string. */
	    {{"/usr/bin/dash",
	      "/w",
	      {"/bin/sh", "-c",
	       "cd /w && /usr/bin/python3 -m snakemake --snakefile /w/Snakefile --target-jobs "
	       "'summarise:sample=A' --allowed-rules 'summarise' --cores 1 --mode 2"}},
	     true,
	     "summarise"},
	    /* The ILP solver Snakemake runs to schedule is not a job. */
	    {{"/usr/bin/cbc", "/w", {"cbc", "/tmp/x-pulp.mps", "max", "timeMode", "elapsed"}},
	     false,
	     ""},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct process_view v;
		struct tool_identity t;
		struct cgroup_context cg;
		struct step_spec spec = {0};

		make_view(&cases[i].view, &v, &t, &cg);
		v.parent_is_engine = true;
		bool starts = engine_snakemake.step(&v, 3, &spec);
		if (starts != cases[i].step || (starts && strcmp(spec.name, cases[i].name)))
			fail_msg("case %zu: step %d name '%s', expected %d '%s'", i, starts,
				 spec.name, cases[i].step, cases[i].name);
	}
}

static void test_slurm_steps(void **state)
{
	static const struct view_case batch = {
	    "/usr/bin/bash", "/w", {"/bin/bash", "/var/spool/slurmd/job00042/slurm_script"}};
	struct process_view v;
	struct tool_identity t;
	struct cgroup_context cg;
	struct step_spec spec;
	char pipeline[PIPELINE_NAME_MAX];

	(void)state;
	make_view(&batch, &v, &t, &cg);
	assert_false(engine_slurm.is_run(&v, pipeline, sizeof(pipeline)));
	cgroup_path_parse("/slurm_vm/uid_0/job_42/step_batch", &cg);
	assert_true(engine_slurm.is_run(&v, pipeline, sizeof(pipeline)));
	assert_true(engine_slurm.step(&v, 1, &spec));
	assert_string_equal(spec.key, "42.batch");
	assert_string_equal(spec.kind, "slurm-step");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_runs_and_pipelines),
	    cmocka_unit_test(test_script_runs),
	    cmocka_unit_test(test_nextflow_task_key),
	    cmocka_unit_test(test_nextflow_steps_and_helpers),
	    cmocka_unit_test(test_snakemake_steps),
	    cmocka_unit_test(test_slurm_steps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
