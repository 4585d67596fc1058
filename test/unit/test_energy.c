/*
 * The energy model's arithmetic and where its coefficients come from:
 * energy.conf keys, bad lines named, the CPU table by a cpuinfo model name,
 * the grid table by cloud region or location code, and the defaults.
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

#include "test/unit/tmpdir.h"

#include "cli/cost/energy.h"

static void test_arithmetic(void **state)
{
	struct energy_model m = {
	    .cpu_w_per_core = 10, .mem_w_per_gb = 0.5, .pue = 1.5, .grid_g_per_kwh = 400};
	struct energy_figures f;

	(void)state;
	/* 360 CPU s at 10 W = 1 Wh; 3600 GiB-s at 0.5 W/GB = 0.5 x 1.0737 Wh. */
	energy_of(&m, 360, 3600, &f);
	assert_float_equal(f.cpu_wh, 1.0, 1e-12);
	assert_float_equal(f.memory_wh, 0.5 * GB_PER_GIB, 1e-12);
	assert_float_equal(f.energy_wh, (1.0 + 0.5 * GB_PER_GIB) * 1.5, 1e-12);
	assert_float_equal(f.co2e_g, f.energy_wh / 1000 * 400, 1e-12);
}

static void test_configured(void **state)
{
	struct energy_model m;
	char err[600];
	const char *cpuinfo =
	    tmpdir_write("cpuinfo", "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) "
				    "Gold 6148 CPU @ 2.40GHz\n");
	const char *conf = tmpdir_write("e.conf", "[energy]\npue = 1.1\nregion = europe-west4\n");
	struct energy_options o = {
	    .conf_path = conf, .cpuinfo_path = cpuinfo, .cpu_is_this_host = true};

	(void)state;
	assert_int_equal(energy_model_resolve(&o, &m, err, sizeof(err)), 0);
	assert_float_equal(m.cpu_w_per_core, 7.5, 1e-9); /* the table's Gold 6148 */
	assert_non_null(strstr(m.cpu_source, "Gold 6148"));
	assert_float_equal(m.pue, 1.1, 1e-12);
	assert_non_null(strstr(m.pue_source, conf));
	assert_float_equal(m.grid_g_per_kwh, 374.34, 1e-9); /* europe-west4 is in NL */
	assert_float_equal(m.mem_w_per_gb, 0.3725, 1e-12);
	/* --region wins over the file's; another host's runs do not take this CPU's model. */
	o.region = "FR";
	o.cpu_is_this_host = false;
	assert_int_equal(energy_model_resolve(&o, &m, err, sizeof(err)), 0);
	assert_float_equal(m.grid_g_per_kwh, 51.28, 1e-9);
	assert_float_equal(m.cpu_w_per_core, 12, 1e-9);
	/* An unknown region: the world, saying so. */
	o.region = "mars-north-1";
	assert_int_equal(energy_model_resolve(&o, &m, err, sizeof(err)), 0);
	assert_float_equal(m.grid_g_per_kwh, 475, 1e-9);
	assert_non_null(strstr(m.grid_source, "mars-north-1"));
}

static void test_bad_files(void **state)
{
	struct energy_model m;
	char err[600];
	struct energy_options o = {.conf_path = tmpdir_write("bad.conf", "[energy]\npue = 0.9\n")};

	(void)state;
	assert_int_equal(energy_model_resolve(&o, &m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "pue"));
	o.conf_path = tmpdir_write("bad2.conf", "[energy]\nwatts = 3\n");
	assert_int_equal(energy_model_resolve(&o, &m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown setting 'watts'"));
	o.conf_path = tmpdir_write("bad3.conf", "[cost]\nrate = 1\n");
	assert_int_equal(energy_model_resolve(&o, &m, err, sizeof(err)), -1);
	o.conf_path = "/nonexistent/energy.conf"; /* named, so it must exist */
	assert_int_equal(energy_model_resolve(&o, &m, err, sizeof(err)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_arithmetic),
	    cmocka_unit_test(test_configured),
	    cmocka_unit_test(test_bad_files),
	};
	if (tmpdir_make("energy") != 0)
		return 1;
	return tmpdir_done(cmocka_run_group_tests(tests, NULL, NULL));
}
