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
#include <sqlite3.h>

#include "test/unit/tmpdir.h"

#include "cli/cost/energy.h"
#include "cli/cost/energymeasure.h"

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

/* Differences summed; a wrap past max_energy_range_uj counts range - a + b + 1. */
static void test_rapl_wrap(void **state)
{
	const uint64_t range = 262143328850ull; /* a common max_energy_range_uj */
	struct rapl_reading r[] = {{1, 1000000, range},
				   {2, 3500000, range},
				   {3, range - 500000, range},
				   {4, 250000, range}};
	unsigned unknown = 0;

	(void)state;
	/* 2.5 J, then (range - 500000 - 3500000) uJ, then 500000 + 250000 + 1 uJ over the wrap. */
	double want = (2500000.0 + (double)(range - 4000000) + 750001.0) / 1e6;
	assert_float_equal(rapl_joules(r, 4, &unknown), want, 1e-9);
	assert_int_equal(unknown, 0);
	/* Without a range a decrease cannot be measured: counted, nothing added. */
	for (int i = 0; i < 4; i++)
		r[i].max_range_uj = 0;
	assert_float_equal(rapl_joules(r, 4, &unknown),
			   (2500000.0 + (double)(range - 4000000)) / 1e6, 1e-9);
	assert_int_equal(unknown, 1);
	assert_float_equal(rapl_joules(r, 1, &unknown), 0, 0);
}

static void exec_sql(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
	if (rc != SQLITE_OK)
		fprintf(stderr, "%s\n", err);
	assert_int_equal(rc, SQLITE_OK);
}

/*
 * Two packages over a 4 s run (t = 10..14 s): readings every second from 9 to 15 s;
 * package-1 wraps; psys (the platform, which includes the packages) is left out. The
 * host was busy 2 CPUs of 4 (50%) throughout.
 */
static void test_rapl_measure(void **state)
{
	sqlite3 *db;
	struct energy_measured m;
	const int64_t s = 1000000000;

	(void)state;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	exec_sql(db, "CREATE TABLE energy_samples (ts_ns INTEGER, host_id TEXT, zone INTEGER,"
		     " name TEXT, energy_uj INTEGER, max_energy_range_uj INTEGER);"
		     "CREATE TABLE host_samples (ts_ns INTEGER, interval_ns INTEGER, host_id TEXT,"
		     " cpus INTEGER, cpu_busy_pct REAL);");
	for (int t = 9; t <= 15; t++) {
		char sql[600];
		/* package-0: 10 J per second; package-1: 5 J per second from 989 J, wrapping at
		 * 1000 J (range 1000000000 uJ); psys: 100 J per second. */
		long long p1 = (989000000LL + 5000000LL * (t - 9)) % 1000000001LL;
		snprintf(sql, sizeof(sql),
			 "INSERT INTO energy_samples VALUES (%lld, 'h', 0, 'package-0', %lld, "
			 "1000000000000);"
			 "INSERT INTO energy_samples VALUES (%lld, 'h', 1, 'package-1', %lld, "
			 "1000000000);"
			 "INSERT INTO energy_samples VALUES (%lld, 'h', 2, 'psys', %lld, NULL);"
			 "INSERT INTO host_samples VALUES (%lld, %lld, 'h', 4, 50.0);",
			 (long long)(t * s), 10000000LL * t, (long long)(t * s), p1,
			 (long long)(t * s), 100000000LL * t, (long long)(t * s), (long long)s);
		exec_sql(db, sql);
	}
	/* The span 10.5 .. 13.5 s: bracketed by the readings at 10 and 14 s: 4 s of both
	 * packages; package-1 wraps between 11 and 12 s (999 J, then 4 J less one uJ). */
	assert_int_equal(rapl_measure(db, "h", 10 * s + s / 2, 13 * s + s / 2, 1.0, &m), 1);
	assert_int_equal(m.zones, 2);
	assert_int_equal(m.from_ns, 10 * s);
	assert_int_equal(m.to_ns, 14 * s);
	/* What the generator put in: 10 J/s and 5 J/s for 4 s, the wrap costing nothing. */
	assert_float_equal(m.joules, 60.0, 1e-9);
	assert_float_equal(m.host_cpu_s, 4 * 2.0, 1e-9); /* 4 s x 2 busy CPUs */
	assert_float_equal(m.watts_per_cpu_s, m.joules / 8.0, 1e-9);
	/* A run that used more CPU than the host samples saw shares by its own. */
	assert_int_equal(rapl_measure(db, "h", 10 * s + s / 2, 13 * s + s / 2, 16.0, &m), 1);
	assert_float_equal(m.watts_per_cpu_s, m.joules / 16.0, 1e-9);
	/* Another host, or a span the readings do not reach: not measured. */
	assert_int_equal(rapl_measure(db, "other", 10 * s, 12 * s, 1.0, &m), 0);
	assert_int_equal(rapl_measure(db, "h", 14 * s, 30 * s, 1.0, &m), 0);
	sqlite3_close(db);
}

static void test_instance_table(void **state)
{
	const char *entry, *source;

	(void)state;
	assert_float_equal(energy_instance_table("c6i.4xlarge", &entry, &source), 3.97, 1e-9);
	assert_non_null(strstr(entry, "Ice Lake"));
	assert_non_null(strstr(source, "Cloud Carbon Footprint"));
	assert_float_equal(energy_instance_table("m5.large", &entry, &source), 4.19, 1e-9);
	assert_float_equal(energy_instance_table("c7g.2xlarge", &entry, &source), 1.69, 1e-9);
	assert_float_equal(energy_instance_table("n2-standard-4", &entry, &source), 3.97, 1e-9);
	assert_float_equal(
	    energy_instance_table("projects/12/machineTypes/c2-standard-8", &entry, &source), 3.97,
	    1e-9);
	assert_float_equal(energy_instance_table("n2d-highmem-8", &entry, &source), 1.69, 1e-9);
	assert_float_equal(energy_instance_table("Standard_D4s_v5", &entry, &source), 3.97, 1e-9);
	assert_float_equal(energy_instance_table("Standard_E8as_v5", &entry, &source), 1.69, 1e-9);
	assert_float_equal(energy_instance_table("Standard_F16s_v2", &entry, &source), 4.19, 1e-9);
	assert_float_equal(energy_instance_table("x2iedn.xlarge", &entry, &source), 0, 0);
}

/* config > instance-type table > CPU model table > default, each saying so. */
static void test_cpu_precedence(void **state)
{
	struct energy_model m;
	char err[600];
	const char *cpuinfo =
	    tmpdir_write("cpuinfo2", "model name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\n");
	const char *empty = tmpdir_write("empty.conf", "");
	struct energy_options o = {.conf_path = empty,
				   .cpuinfo_path = cpuinfo,
				   .cpu_is_this_host = true,
				   .instance_type = "r6i.large",
				   .instance_source = "IMDSv2"};

	(void)state;
	assert_int_equal(energy_model_resolve(&o, &m, err, sizeof(err)), 0);
	assert_float_equal(m.cpu_w_per_core, 3.97, 1e-9);
	assert_string_equal(m.cpu_kind, "instance-type table");
	assert_non_null(strstr(m.cpu_source, "r6i.large (IMDSv2)"));
	o.instance_type = "x2iedn.xlarge"; /* no family: the CPU model's */
	assert_int_equal(energy_model_resolve(&o, &m, err, sizeof(err)), 0);
	assert_float_equal(m.cpu_w_per_core, 7.5, 1e-9);
	assert_string_equal(m.cpu_kind, "CPU model table");
	o.conf_path = tmpdir_write("it.conf", "[energy]\ninstance-type = c7g.large\n");
	assert_int_equal(energy_model_resolve(&o, &m, err, sizeof(err)), 0);
	assert_float_equal(m.cpu_w_per_core, 1.69, 1e-9);
	assert_non_null(strstr(m.cpu_source, "energy.conf"));
	o.conf_path = tmpdir_write("w.conf", "[energy]\ninstance-type = c7g.large\n"
					     "cpu-watts-per-core = 9\n");
	assert_int_equal(energy_model_resolve(&o, &m, err, sizeof(err)), 0);
	assert_float_equal(m.cpu_w_per_core, 9, 1e-9);
	assert_string_equal(m.cpu_kind, "config");
	o.conf_path = empty;
	o.instance_type = NULL;
	o.cpu_is_this_host = false;
	assert_int_equal(energy_model_resolve(&o, &m, err, sizeof(err)), 0);
	assert_string_equal(m.cpu_kind, "default");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_arithmetic),	   cmocka_unit_test(test_configured),
	    cmocka_unit_test(test_bad_files),	   cmocka_unit_test(test_rapl_wrap),
	    cmocka_unit_test(test_rapl_measure),   cmocka_unit_test(test_instance_table),
	    cmocka_unit_test(test_cpu_precedence),
	};
	if (tmpdir_make("energy") != 0)
		return 1;
	return tmpdir_done(cmocka_run_group_tests(tests, NULL, NULL));
}
