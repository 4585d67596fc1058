/* Container engine command lines as users, cwltool and Nextflow write them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "aggregator/correlate/container_cli.h"

#define ARGV(...)                                                                                  \
	((char *const[]){__VA_ARGS__}), (sizeof((char *const[]){__VA_ARGS__}) / sizeof(char *))

/* The image (or container) and the command after it, as the parser split them. */
static void expect(const char *exe, char *const *argv, size_t argc, enum container_verb verb,
		   const char *target, const char *cmd0, size_t ncmd)
{
	struct container_cli_args a;

	assert_true(container_cli_parse(exe, argv, argc, &a));
	assert_int_equal(a.verb, verb);
	if (!target) {
		assert_int_equal(a.target, 0);
		return;
	}
	assert_true(a.target > 0);
	assert_string_equal(argv[a.target], target);
	assert_int_equal(a.ncmd, ncmd);
	if (ncmd)
		assert_string_equal(argv[a.cmd], cmd0);
}

static void test_docker_run_shapes(void **state)
{
	(void)state;
	/* Global options with values before the subcommand; -v is a volume after it. */
	expect("/usr/bin/docker",
	       ARGV("docker", "-H", "unix:///tmp/d.sock", "run", "--rm", "--network", "none", "-v",
		    "/x:/out", "local/x:1", "/bin/measure", "/out/t.json", "--", "/bin/cpuburn",
		    "1"),
	       CLI_RUN, "local/x:1", "/bin/measure", 5);
	/* Bundled flags, attached values, `container run`. */
	expect("/usr/bin/docker",
	       ARGV("docker", "container", "run", "-it", "-eA=1", "-m64m", "img", "sh", "-c", "x"),
	       CLI_RUN, "img", "sh", 3);
	/* cwltool's: every option with '='. */
	expect("/usr/bin/docker",
	       ARGV("docker", "run", "-i", "--mount=type=bind,source=/tmp/a,target=/QJ",
		    "--workdir=/QJ", "--read-only=true", "--net=none", "--log-driver=none",
		    "--user=1000:1000", "--rm", "--cidfile=/tmp/x/20261201.cid",
		    "--env=TMPDIR=/tmp", "local/burn:1", "/bin/burn", "1"),
	       CLI_RUN, "local/burn:1", "/bin/burn", 2);
	/* Nextflow's. */
	expect("/usr/bin/docker",
	       ARGV("docker", "run", "-i", "--cpu-shares", "1024", "--memory", "1g", "-e",
		    "NXF_TASK_WORKDIR", "-v", "/w:/w", "-w", "/w/ab/cd", "--name",
		    "nxf-AbCdEfGhIjKlMnOpQrStUvWx", "ubuntu:22.04", "/bin/bash", "-ue",
		    "/w/ab/cd/.command.sh"),
	       CLI_RUN, "ubuntu:22.04", "/bin/bash", 3);
	/* No command: the image's own. */
	expect("/usr/bin/docker", ARGV("docker", "run", "--rm", "img"), CLI_RUN, "img", NULL, 0);
}

static void test_options_recorded(void **state)
{
	struct container_cli_args a;
	(void)state;

	assert_true(container_cli_parse("/usr/bin/podman",
					ARGV("podman", "--runtime", "runc", "--root", "/r", "run",
					     "-d", "--user", "1000:100", "--name", "job1",
					     "--entrypoint", "/entry.sh", "img", "arg"),
					&a));
	assert_string_equal(a.engine, "podman");
	assert_int_equal(a.verb, CLI_RUN);
	assert_true(a.has_user);
	assert_int_equal(a.user, 1000);
	assert_string_equal(a.name, "job1");
	assert_string_equal(a.entrypoint, "/entry.sh");
	assert_true(a.detach);
	/* A user by name has no uid to compare. */
	assert_true(container_cli_parse("/usr/bin/docker",
					ARGV("docker", "run", "-u", "alice", "img", "id"), &a));
	assert_false(a.has_user);
	assert_false(a.detach);
}

static void test_other_verbs_and_programs(void **state)
{
	struct container_cli_args a;
	(void)state;

	expect("/usr/bin/docker", ARGV("docker", "stats", "--no-trunc", "--format", "{{.MemPerc}}"),
	       CLI_OTHER, NULL, NULL, 0);
	assert_true(container_cli_parse("/usr/bin/docker",
					ARGV("docker", "images", "--no-trunc", "--all"), &a));
	assert_string_equal(a.verb_word, "images");
	expect("/usr/bin/nerdctl", ARGV("nerdctl", "exec", "-it", "c1", "sh"), CLI_EXEC, "c1", "sh",
	       1);
	expect("/usr/bin/docker", ARGV("docker", "start", "-i", "c1"), CLI_START, "c1", NULL, 0);
	/* Not an engine; an engine with nothing to do. */
	assert_false(container_cli_parse("/usr/bin/dockerd", ARGV("dockerd", "run"), &a));
	assert_false(container_cli_parse("/usr/bin/docker", ARGV("docker"), &a));
	assert_false(container_cli_parse("/usr/bin/docker", ARGV("docker", "-H", "x"), &a));
	assert_null(container_engine_of("/usr/sbin/runc"));
	assert_string_equal(container_engine_of("/usr/local/bin/docker"), "docker");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_docker_run_shapes),
	    cmocka_unit_test(test_options_recorded),
	    cmocka_unit_test(test_other_verbs_and_programs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
