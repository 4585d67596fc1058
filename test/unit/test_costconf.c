/*
 * The site's cost settings: every key read, a bad line named by number, a
 * missing default file meaning defaults, and the firmware check that decides
 * whether a cloud's metadata service may be asked, on DMI files written here
 * the way AWS (Nitro and Xen), Google and an on-prem server show them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "test/unit/tmpdir.h"

#include "cli/cost/costconf.h"

static void test_every_key_is_read(void **state)
{
	struct cost_conf c;
	char err[256];

	(void)state;
	const char *p = tmpdir_write("good.conf", "# site\n[cost]\nrate = 1.25 ; all in\n"
						  "instance_type = m6i.large\nregion = eu-west-1\n"
						  "lifecycle = spot\ndetect = no\n");
	assert_int_equal(cost_conf_load(&c, p, err, sizeof(err)), 0);
	assert_string_equal(c.rate, "1.25");
	assert_string_equal(c.instance_type, "m6i.large");
	assert_string_equal(c.region, "eu-west-1");
	assert_string_equal(c.lifecycle, "spot");
	assert_int_equal(c.detect, DETECT_NO);
	assert_string_equal(c.path, p);
}

static void test_bad_lines_are_named(void **state)
{
	static const struct {
		const char *text, *says;
	} bad[] = {
	    {"[cost]\nrate = cheap\n", ":2: rate is USD per hour"},
	    {"[cost]\nrate = -3\n", ":2: rate is USD per hour"},
	    {"[cost]\n\nprice = 3\n", ":3: unknown key 'price'"},
	    {"[costs]\nrate = 3\n", ":2: unknown section [costs]"},
	    {"[cost]\ndetect = maybe\n", ":2: detect is auto, yes or no"},
	    {"[cost]\nlifecycle = reserved\n", ":2: lifecycle is on-demand or spot"},
	    {"[cost]\nthis line has no equals sign\n", ":2:"},
	};
	struct cost_conf c;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *p = tmpdir_write("bad.conf", bad[i].text);
		assert_int_equal(cost_conf_load(&c, p, err, sizeof(err)), -1);
		if (!strstr(err, bad[i].says))
			fail_msg("'%s' gave '%s', not '%s'", bad[i].text, err, bad[i].says);
	}
}

static void test_missing_file(void **state)
{
	struct cost_conf c;
	char err[256], path[300];

	(void)state;
	snprintf(path, sizeof(path), "%s/none.conf", tmpdir);
	/* Asked for by name: an error. The default one absent: defaults. */
	assert_int_equal(cost_conf_load(&c, path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "No such file"));
	if (access(COST_CONF_PATH, F_OK) != 0) {
		assert_int_equal(cost_conf_load(&c, NULL, err, sizeof(err)), 0);
		assert_int_equal(c.detect, DETECT_AUTO);
		assert_string_equal(c.rate, "");
	}
}

static const char *dmi(const char *name, const char *sys_vendor, const char *product,
		       const char *bios_vendor, const char *bios_version)
{
	static char d[300];
	char sub[64];
	snprintf(sub, sizeof(sub), "%s", name);
	snprintf(d, sizeof(d), "%s/%s", tmpdir, sub);
	mkdir(d, 0755);
	const char *values[] = {sys_vendor, product, bios_vendor, bios_version};
	const char *files[] = {"sys_vendor", "product_name", "bios_vendor", "bios_version"};
	for (int i = 0; i < 4; i++) {
		char rel[128];
		snprintf(rel, sizeof(rel), "%s/%s", sub, files[i]);
		if (values[i])
			tmpdir_write(rel, values[i]);
	}
	return d;
}

static void test_firmware_names_the_cloud(void **state)
{
	(void)state;
	assert_string_equal(cost_firmware_cloud(dmi("nitro", "Amazon EC2\n", "m6i.large\n",
						    "Amazon EC2\n", "1.0\n")),
			    "aws");
	assert_string_equal(
	    cost_firmware_cloud(dmi("xen", "Xen\n", "HVM domU\n", "Xen\n", "4.11.amazon\n")),
	    "aws");
	assert_string_equal(cost_firmware_cloud(dmi("gce", "Google\n", "Google Compute Engine\n",
						    "Google\n", "Google\n")),
			    "gcp");
	assert_null(cost_firmware_cloud(
	    dmi("onprem", "Dell Inc.\n", "PowerEdge R740\n", "Dell Inc.\n", "2.12.2\n")));
	assert_null(cost_firmware_cloud(
	    dmi("kvm", "QEMU\n", "Standard PC (Q35 + ICH9, 2009)\n", "SeaBIOS\n", NULL)));
	/* No DMI at all (a container, this test machine): not a cloud we can tell. */
	assert_null(cost_firmware_cloud("/nonexistent/dmi"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_key_is_read),
	    cmocka_unit_test(test_bad_lines_are_named),
	    cmocka_unit_test(test_missing_file),
	    cmocka_unit_test(test_firmware_names_the_cloud),
	};
	if (tmpdir_make("costconf") != 0)
		return 1;
	return tmpdir_done(cmocka_run_group_tests(tests, NULL, NULL));
}
