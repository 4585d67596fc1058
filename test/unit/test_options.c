/*
 * The daemons' option tables (common/options.h): each table is sound, the settings files
 * shipped in deploy/etc are what the table prints, and the table's precedence holds:
 * defaults, then the settings file, then the command line.
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

#include "aggregator/options.h"
#include "aggregator/receive/receiver.h"
#include "collector/setup/config.h"
#include "common/options.h"
#include "shipper/options.h"

static const struct {
	const struct opt_program *program;
	const char *shipped;
} daemons[] = {
    {&collector_program, "deploy/etc/collector.conf"},
    {&aggregator_program, "deploy/etc/aggregator.conf"},
    {&shipper_program, "deploy/etc/shipper.conf.example"},
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = calloc(1, 1 << 16);

	assert_non_null(f);
	assert_non_null(text);
	size_t n = fread(text, 1, (1 << 16) - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

static void test_tables_are_sound(void **state)
{
	char err[300];

	for (size_t i = 0; i < sizeof(daemons) / sizeof(*daemons); i++)
		if (options_check_table(daemons[i].program, err, sizeof(err)) != 0)
			fail_msg("%s", err);
}

/* The check fails on a planted mistake: a default outside its range, a name used twice. */
static void test_table_check_finds_mistakes(void **state)
{
	struct opt bad[64];
	struct opt_program p = shipper_program;
	char err[300];

	memcpy(bad, p.opts, p.n_opts * sizeof(*bad));
	p.opts = bad;
	for (size_t i = 0; i < p.n_opts; i++)
		if (bad[i].name && !strcmp(bad[i].name, "batch-records"))
			bad[i].def = "0"; /* the range is 1.. */
	assert_int_equal(options_check_table(&p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "batch-records"));
	memcpy(bad, shipper_program.opts, p.n_opts * sizeof(*bad));
	bad[1].name = bad[0].name;
	assert_int_equal(options_check_table(&p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "taken"));
}

/* deploy/etc ships what --print-config prints, byte for byte, and it loads. */
static void test_shipped_files_are_the_tables(void **state)
{
	for (size_t i = 0; i < sizeof(daemons) / sizeof(*daemons); i++) {
		char *printed = NULL, err[600];
		size_t len = 0;
		FILE *out = open_memstream(&printed, &len);
		assert_non_null(out);
		options_print_config(daemons[i].program, out);
		fclose(out);
		char *shipped = slurp(daemons[i].shipped);
		if (strcmp(printed, shipped))
			fail_msg("%s differs from %s --print-config (make configs rewrites it)",
				 daemons[i].shipped, daemons[i].program->name);
		void *target = malloc(daemons[i].program->target_size);
		assert_non_null(target);
		options_defaults(daemons[i].program, target);
		if (options_load_file(daemons[i].program, daemons[i].shipped, target, err,
				      sizeof(err)) != 0)
			fail_msg("%s", err);
		free(target);
		free(shipped);
		free(printed);
	}
}

static char path[64];

static void write_file(const char *text)
{
	snprintf(path, sizeof(path), "/tmp/tracer-options-test-%d.conf", (int)getpid());
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int parse(const struct opt_program *p, void *target, char *a1, char *a2, char *a3, char *a4)
{
	char *argv[] = {"prog", a1, a2, a3, a4, NULL};
	int argc = 1;

	while (argv[argc])
		argc++;
	return options_parse(p, argc, argv, target);
}

static void test_precedence(void **state)
{
	struct collector_config c;
	struct shipper_options s;

	write_file("[collector]\nflush-ms = 50\nqueue-mb = 8\n[probes]\nfiles = off\n");
	assert_int_equal(parse(&collector_program, &c, "--socket", "/x", NULL, NULL), 0);
	if (access("/etc/tracer/collector.conf", F_OK) != 0) /* else it was read */
		assert_int_equal(c.flush_ms, 200);
	assert_int_equal(parse(&collector_program, &c, "--config", path, NULL, NULL), 0);
	assert_int_equal(c.flush_ms, 50);
	assert_int_equal(c.queue_mb, 8);
	assert_false(c.enabled[PROBE_FILES]);
	assert_int_equal(parse(&collector_program, &c, "--flush-ms", "70", "--config", path), 0);
	assert_int_equal(c.flush_ms, 70); /* the command line wins, wherever --config is */
	assert_int_equal(parse(&collector_program, &c, "--enable", "files", "--config", path), 0);
	assert_true(c.enabled[PROBE_FILES]);
	assert_int_equal(c.start.key_fd, -1);
	assert_int_equal(parse(&collector_program, &c, "--ring-mb", "3", NULL, NULL), -1);
	assert_int_equal(parse(&collector_program, &c, "--disable", "process", NULL, NULL), -1);

	write_file("[shipper]\nsink = http://a/\nbatch-kib = 2\n");
	assert_int_equal(parse(&shipper_program, &s, "--config", path, "--once-timeout-s", "3"), 0);
	assert_string_equal(s.sink_url, "http://a/");
	assert_int_equal(s.batch_bytes, 2048);
	assert_int_equal(s.once_timeout_ms, 3000);
	assert_int_equal(s.retry_max_ms, 60000);
	assert_int_equal(parse(&shipper_program, &s, "--db", "/x", NULL, NULL), -1); /* no sink */
	unlink(path);
}

static void test_aggregator_options(void **state)
{
	struct aggregator_options a;
	char err[600];

	assert_int_equal(parse(&aggregator_program, &a, "--socket-mode", "0640", "--scope", "runs"),
			 0);
	assert_int_equal(a.socket_mode, 0640);
	assert_int_equal(a.scope, SCOPE_RUNS);
	assert_int_equal(a.commit_ms, RECEIVER_COMMIT_EVERY_MS);
	assert_int_equal(a.retain_days, 30);
	assert_int_equal(a.ready_fd, -1);
	assert_int_equal(parse(&aggregator_program, &a, "--launcher", "12:345", NULL, NULL), 0);
	assert_true(a.has_launcher);
	assert_int_equal(a.launcher_pid, 12);
	assert_int_equal(a.launcher_start_boot_ns, 345);
	assert_int_equal(parse(&aggregator_program, &a, "--retain-check-s", "0", NULL, NULL), -1);
	assert_int_equal(parse(&aggregator_program, &a, "--host-sample-ms", "50", NULL, NULL), -1);
	write_file("[scope]\nscope_cgroup = /slurm\n");
	assert_int_equal(parse(&aggregator_program, &a, "--config", path, NULL, NULL), 0);
	assert_string_equal(a.scope_cgroup, "/slurm");
	assert_int_equal(
	    parse(&aggregator_program, &a, "--scope-cgroup", "/batch", "--config", path), 0);
	assert_string_equal(a.scope_cgroup, "/batch");
	write_file("[scope]\n\ncgroup = slurm\n");
	options_defaults(&aggregator_program, &a);
	assert_int_equal(options_load_file(&aggregator_program, path, &a, err, sizeof(err)), -1);
	assert_non_null(strstr(err, ":3: [scope] cgroup = slurm: expected an absolute"));
	unlink(path);
}

/* Each number lands at its field's own width, its neighbours untouched (store_uint). */
struct widths {
	uint8_t before, u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;
	uint8_t after;
};

static void test_numbers_fill_their_field_alone(void **state)
{
	(void)state;
	static const struct opt opts[] = {
	    {.name = "a",
	     .kind = OPT_UINT,
	     .max = 255,
	     .offset = OPT_FIELD(struct widths, u8),
	     .help = "a"},
	    {.name = "b",
	     .kind = OPT_UINT,
	     .max = 65535,
	     .offset = OPT_FIELD(struct widths, u16),
	     .help = "b"},
	    {.name = "c",
	     .kind = OPT_UINT,
	     .max = 4294967295ul,
	     .offset = OPT_FIELD(struct widths, u32),
	     .help = "c"},
	    {.name = "d",
	     .kind = OPT_UINT,
	     .max = ~0ul,
	     .offset = OPT_FIELD(struct widths, u64),
	     .help = "d"},
	};
	static const struct opt_program p = {.name = "t",
					     .usage = "t",
					     .version = "0",
					     .opts = opts,
					     .n_opts = 4,
					     .target_size = sizeof(struct widths)};
	/* Widest first: a store too wide for a later field would clobber the one after it. */
	char *argv[] = {
	    "t",   "--d", "18446744073709551614", "--c", "4294967294", "--b", "65534", "--a",
	    "254", NULL};
	struct widths w;

	assert_int_equal(options_parse(&p, 9, argv, &w), 0);
	assert_int_equal(w.before, 0);
	assert_int_equal(w.u8, 254);
	assert_int_equal(w.u16, 65534);
	assert_int_equal(w.u32, 4294967294u);
	assert_true(w.u64 == 18446744073709551614ull);
	assert_int_equal(w.after, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tables_are_sound),
	    cmocka_unit_test(test_table_check_finds_mistakes),
	    cmocka_unit_test(test_shipped_files_are_the_tables),
	    cmocka_unit_test(test_precedence),
	    cmocka_unit_test(test_aggregator_options),
	    cmocka_unit_test(test_numbers_fill_their_field_alone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
