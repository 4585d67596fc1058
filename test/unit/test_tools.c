/* Tool identification: interpreters unwrapped, subcommands kept; allow/deny lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "aggregator/correlate/tools.h"

struct id_case {
	const char *exe;
	const char *argv[8];
	const char *name, *program;
};

static const struct id_case id_cases[] = {
    {"/usr/bin/samtools",
     {"samtools", "sort", "-@", "4", "-o", "x.bam", "y.sam"},
     "samtools sort",
     "samtools"},
    {"/usr/bin/bwa", {"bwa", "mem", "-t", "2", "ref.fa", "r.fq"}, "bwa mem", "bwa"},
    {"/usr/bin/bwa", {"bwa", "index", "ref.fa"}, "bwa index", "bwa"},
    {"/opt/conda/bin/gatk",
     {"gatk", "--java-options", "-Xmx4g", "HaplotypeCaller"},
     "gatk",
     "gatk"},
    {"/opt/conda/bin/gatk",
     {"gatk", "HaplotypeCaller", "-R", "ref.fa"},
     "gatk HaplotypeCaller",
     "gatk"},
    {"/usr/bin/python3.11",
     {"python3", "-u", "/opt/scripts/align.py", "--in", "x"},
     "align.py",
     "align.py"},
    {"/usr/bin/python3", {"python3", "-m", "multiqc.main", "."}, "multiqc", "multiqc"},
    /* Snakemake's copy of a script: rule file, not its temp name. */
    {"/usr/bin/python3.11",
     {"python3", "/w/.snakemake/scripts/tmpocl9lvfu.analyse.py"},
     "analyse.py",
     "analyse.py"},
    {"/usr/bin/python3", {"python3", "/opt/tmp_tools.py"}, "tmp_tools.py", "tmp_tools.py"},
    {"/usr/bin/python3", {"python3", "-c", "print(1)"}, "python3", "python3"},
    {"/usr/bin/python3",
     {"/usr/bin/python3", "/usr/bin/snakemake", "--cores", "2"},
     "snakemake",
     "snakemake"},
    {"/usr/bin/python3",
     {"python3", "/usr/bin/snakemake", "-s", "Snakefile"},
     "snakemake",
     "snakemake"},
    {"/usr/lib/jvm/bin/java",
     {"java", "-Xmx4g", "-jar", "/opt/picard-2.27.5.jar", "SortSam", "I=x"},
     "picard SortSam",
     "picard"},
    {"/usr/lib/jvm/bin/java",
     {"java", "-cp", "x.jar", "nextflow.cli.Launcher", "run", "main.nf"},
     "nextflow run",
     "nextflow"},
    {"/usr/bin/Rscript", {"Rscript", "--vanilla", "deseq.R", "a"}, "deseq.R", "deseq.R"},
    {"/usr/bin/perl", {"perl", "-w", "/opt/vep/vep", "--cache"}, "vep", "vep"},
    {"/usr/bin/perl", {"perl", "-e", "print 1"}, "perl", "perl"},
    {"/usr/bin/bash", {"bash", "-ue", ".command.sh"}, ".command.sh", ".command.sh"},
    {"/usr/bin/bash", {"bash", "-c", "set -euo pipefail; bwa mem x"}, "bash", "bash"},
    {"/usr/bin/bash", {"bash", "run.sh", "input"}, "run.sh", "run.sh"},
    {"/usr/bin/gzip", {"gzip", "-9", "reads.fq"}, "gzip", "gzip"},
    {"/usr/bin/python3.11 (deleted)", {"python3"}, "python3.11", "python3.11"},
    {NULL, {"samtools", "view", "x.bam"}, "samtools view", "samtools"},
};

static void test_identify(void **state)
{
	for (size_t i = 0; i < sizeof(id_cases) / sizeof(id_cases[0]); i++) {
		const struct id_case *c = &id_cases[i];
		size_t argc = 0;
		while (argc < 8 && c->argv[argc])
			argc++;
		struct tool_identity t;
		tool_identify(c->exe, (char *const *)c->argv, argc, &t);
		if (strcmp(t.name, c->name) || strcmp(t.program, c->program))
			fail_msg("case %zu (%s): got name '%s' program '%s', expected '%s' '%s'", i,
				 c->argv[0], t.name, t.program, c->name, c->program);
	}
}

static void test_launchers(void **state)
{
	(void)state;
	assert_true(tool_is_launcher("setsid"));
	assert_true(tool_is_launcher("nohup"));
	assert_true(tool_is_launcher("env"));
	assert_false(tool_is_launcher("samtools"));
	assert_false(tool_is_launcher("bash"));
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Names this test's two list files (64 bytes each) after tag and writes them. */
static void write_lists(char *allow, char *deny, const char *tag, const char *allow_text,
			const char *deny_text)
{
	snprintf(allow, 64, "/tmp/tracer-allow-%s-%d", tag, (int)getpid());
	snprintf(deny, 64, "/tmp/tracer-deny-%s-%d", tag, (int)getpid());
	write_file(allow, allow_text);
	write_file(deny, deny_text);
}

static void test_lists_and_reload(void **state)
{
	char allow[64], deny[64], err[256];
	struct tool_lists lists = {0};

	write_lists(allow, deny, "reload", "# tools\nbwa\taligner\nsamtools  alignment utility\n\n",
		    "sshd\nsystemd-*\n");
	assert_int_equal(tool_lists_load(&lists, allow, deny, err, sizeof(err)), 0);
	assert_string_equal(tool_category(&lists, "bwa"), "aligner");
	assert_string_equal(tool_category(&lists, "samtools"), "alignment utility");
	assert_null(tool_category(&lists, "gzip"));
	assert_true(tool_denied(&lists, "sshd"));
	assert_true(tool_denied(&lists, "systemd-journald"));
	assert_false(tool_denied(&lists, "systemd"));
	assert_false(tool_denied(&lists, "bwa"));

	/* A user adds a tool: reloading (from the stored paths, as SIGHUP does) picks it
	 * up, twice in a row. */
	write_file(allow, "bwa\taligner\n@category in-house\nmytool\tin-house\n");
	assert_int_equal(
	    tool_lists_load(&lists, lists.allow_path, lists.deny_path, err, sizeof(err)), 0);
	assert_string_equal(tool_category(&lists, "mytool"), "in-house");
	assert_string_equal(lists.allow_path, allow);
	assert_int_equal(
	    tool_lists_load(&lists, lists.allow_path, lists.deny_path, err, sizeof(err)), 0);
	assert_string_equal(lists.deny_path, deny);
	assert_true(tool_denied(&lists, "sshd"));

	/* A bad line is named and the previous lists stay in force. */
	write_file(allow, "bwa\taligner\nlonely\n");
	assert_int_equal(tool_lists_load(&lists, allow, deny, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ":2:"));
	assert_string_equal(tool_category(&lists, "mytool"), "in-house");
	/* A category is one the docs list or one declared above its first use. */
	write_file(allow, "bwa\taligne\n");
	assert_int_equal(tool_lists_load(&lists, allow, deny, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ":1: unknown category 'aligne'"));
	write_file(allow, "mytool\tin-house\n@category in-house\n");
	assert_int_equal(tool_lists_load(&lists, allow, deny, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ":1: unknown category 'in-house'"));
	write_file(allow, "@category\n");
	assert_int_equal(tool_lists_load(&lists, allow, deny, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ":1: '@category NAME'"));
	write_file(allow, "@category a;b\n");
	assert_int_equal(tool_lists_load(&lists, allow, deny, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "letters, digits"));
	assert_string_equal(tool_category(&lists, "mytool"), "in-house");
	write_file(deny, "sys*temd\n");
	write_file(allow, "bwa\taligner\n");
	assert_int_equal(tool_lists_load(&lists, allow, deny, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "'*' only at the end"));
	tool_lists_free(&lists);
	unlink(allow);
	unlink(deny);
}

/* The lists are sorted for binary search: lookups must answer as a scan in file order would. */
static void test_lookups_match_file_order(void **state)
{
	char allow[64], deny[64], err[256];
	struct tool_lists lists = {0};

	write_lists(allow, deny, "order",
		    "@category z\n@category first\n@category b\n@category second\n@category ab\n"
		    "zeta\tz\nalpha\tfirst\nbeta\tb\nalpha\tsecond\nalphab\tab\n",
		    "zsh-helper\nkworker*\ncron\nsshd\nsnapd\nsn*\n");
	assert_int_equal(tool_lists_load(&lists, allow, deny, err, sizeof(err)), 0);
	assert_string_equal(tool_category(&lists, "alpha"), "first"); /* the first line wins */
	assert_string_equal(tool_category(&lists, "alphab"), "ab");
	assert_string_equal(tool_category(&lists, "zeta"), "z");
	assert_string_equal(tool_category(&lists, "beta"), "b");
	assert_null(tool_category(&lists, "alph"));
	assert_null(tool_category(&lists, "zz"));
	assert_null(tool_category(&lists, ""));
	const char *denied[] = {"zsh-helper",  "cron",	  "sshd", "snapd",
				"kworker/0:1", "kworker", "snap"};
	for (size_t i = 0; i < sizeof(denied) / sizeof(*denied); i++)
		assert_true(tool_denied(&lists, denied[i]));
	const char *kept[] = {"ssh", "sshd2", "cro", "zsh", "kworke", "s", ""};
	for (size_t i = 0; i < sizeof(kept) / sizeof(*kept); i++)
		assert_false(tool_denied(&lists, kept[i]));
	tool_lists_free(&lists);
	unlink(allow);
	unlink(deny);
}

static void test_shipped_lists(void **state)
{
	struct tool_lists lists = {0};
	char err[256];

	assert_int_equal(tool_lists_load(&lists, "deploy/etc/tools.allow", "deploy/etc/tools.deny",
					 err, sizeof(err)),
			 0);
	assert_true(lists.n_allow >= 150);
	assert_string_equal(tool_category(&lists, "bwa"), "aligner");
	assert_true(tool_denied(&lists, "systemd-udevd"));
	assert_false(tool_denied(&lists, "samtools"));
	/* Every shipped name is found after sorting. */
	for (size_t i = 0; i < lists.n_allow; i++)
		assert_non_null(tool_category(&lists, lists.allow[i].name));
	for (size_t i = 0; i < lists.n_deny; i++)
		assert_true(tool_denied(&lists, lists.deny[i].name));
	tool_lists_free(&lists);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_identify),
	    cmocka_unit_test(test_launchers),
	    cmocka_unit_test(test_lists_and_reload),
	    cmocka_unit_test(test_lookups_match_file_order),
	    cmocka_unit_test(test_shipped_lists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
