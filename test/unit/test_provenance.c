/*
 * Provenance pieces that need no database: which paths a crate leaves out as
 * the system's, how a path becomes a file: URI, ISO times, and the package
 * that owns an executable, from a dpkg database and a conda environment
 * written here the way dpkg and conda write theirs.
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

#include "cli/model/pkgowner.h"
#include "cli/model/provpath.h"

static void make_dir(const char *rel)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

static void test_system_paths(void **state)
{
	(void)state;
	assert_true(prov_path_is_system("/proc/self/status"));
	assert_true(prov_path_is_system("/proc"));
	assert_true(prov_path_is_system("/dev/null"));
	assert_true(prov_path_is_system("/sys/fs/cgroup/x"));
	assert_true(prov_path_is_system("/usr/lib/locale/C.utf8/LC_CTYPE"));
	assert_true(prov_path_is_system("/lib/x86_64-linux-gnu/libc.so.6"));
	assert_true(prov_path_is_system("/opt/x/libfoo.so"));
	assert_true(prov_path_is_system("/opt/x/libfoo.so.1.2.3"));
	assert_true(prov_path_is_system("/etc/ld.so.cache"));
	/* Work files that merely look alike stay. */
	assert_false(prov_path_is_system("/process/data.txt"));
	assert_false(prov_path_is_system("/devel/x"));
	assert_false(prov_path_is_system("/data/reads.sorted"));
	assert_false(prov_path_is_system("/data/x.so.txt"));
	assert_false(prov_path_is_system("/data/.so"));
	assert_false(prov_path_is_system("/run/app.sock"));
}

static void test_file_uris(void **state)
{
	char out[64];

	(void)state;
	assert_true(prov_file_uri("/data/a b#1%.txt", out, sizeof(out)));
	assert_string_equal(out, "file:///data/a%20b%231%25.txt");
	assert_true(prov_file_uri("/d/\xc3\xa9", out, sizeof(out)));
	assert_string_equal(out, "file:///d/%C3%A9");
	assert_false(prov_file_uri("/a/very/long/path/that/does/not/fit/in/sixty/four/bytes/x", out,
				   sizeof(out)));
	assert_string_equal(out, "");
	assert_true(prov_escape("bwa mem/x", out, sizeof(out)));
	assert_string_equal(out, "bwa%20mem%2Fx");
}

static void test_iso_time(void **state)
{
	char out[40];

	(void)state;
	prov_iso_time(1796175351380123456LL, out, sizeof(out));
	assert_string_equal(out, "2026-12-02T01:35:51.380Z");
	prov_iso_time(0, out, sizeof(out));
	assert_string_equal(out, "1970-01-01T00:00:00.000Z");
}

static void test_owners(void **state)
{
	char dpkg[512], exe[512], conda_exe[512], missing[512];

	(void)state;
	make_dir("dpkg");
	make_dir("dpkg/info");
	tmpdir_write("dpkg/info/coreutils.list", "/.\n/bin\n/bin/sort\n/usr/bin/wc\n");
	tmpdir_write("dpkg/info/bwa:amd64.list", "/usr/bin/bwa\n");
	tmpdir_write("dpkg/info/bwa.md5sums", "00  usr/bin/sort\n");
	tmpdir_write("dpkg/status",
		     "Package: bwa\nStatus: install ok installed\nVersion: 0.7.17-7\n\n"
		     "Package: coreutils\nVersion: 9.1-1\n");
	make_dir("env");
	make_dir("env/bin");
	make_dir("env/conda-meta");
	tmpdir_write("env/conda-meta/samtools-1.17-h00cdaf9_0.json",
		     "{\"name\": \"samtools\", \"version\": \"1.17\", \"build\": \"h00cdaf9_0\","
		     " \"files\": [\"bin/samtools\", \"share/man/samtools.1\"]}");
	tmpdir_write("env/conda-meta/other.json",
		     "{\"name\": \"zlib\", \"files\": [\"lib/libz.so\"]}");
	snprintf(dpkg, sizeof(dpkg), "%s/dpkg", tmpdir);
	snprintf(conda_exe, sizeof(conda_exe), "%s/env/bin/samtools", tmpdir);
	snprintf(exe, sizeof(exe), "%s/env/bin/unlisted", tmpdir);
	snprintf(missing, sizeof(missing), "/usr/bin/nosuchtool");
	json_t *exes = json_pack("{s:n, s:n, s:n, s:n, s:n, s:n}", "/usr/bin/sort", "/usr/bin/wc",
				 "/usr/bin/bwa", conda_exe, exe, missing);

	assert_int_equal(pkg_owners(exes, dpkg), 4);
	json_t *sort = json_object_get(exes, "/usr/bin/sort"); /* listed as /bin/sort */
	assert_string_equal(json_string_value(json_object_get(sort, "name")), "coreutils");
	assert_string_equal(json_string_value(json_object_get(sort, "version")), "9.1-1");
	json_t *bwa = json_object_get(exes, "/usr/bin/bwa");
	assert_string_equal(json_string_value(json_object_get(bwa, "name")), "bwa");
	assert_string_equal(json_string_value(json_object_get(bwa, "version")), "0.7.17-7");
	json_t *st = json_object_get(exes, conda_exe);
	assert_string_equal(json_string_value(json_object_get(st, "manager")), "conda");
	assert_string_equal(json_string_value(json_object_get(st, "version")), "1.17");
	assert_string_equal(json_string_value(json_object_get(st, "build")), "h00cdaf9_0");
	assert_true(json_is_null(json_object_get(exes, exe)));
	assert_true(json_is_null(json_object_get(exes, missing)));
	json_decref(exes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_system_paths),
	    cmocka_unit_test(test_file_uris),
	    cmocka_unit_test(test_iso_time),
	    cmocka_unit_test(test_owners),
	};
	if (tmpdir_make("provenance") != 0)
		return 1;
	return tmpdir_done(cmocka_run_group_tests(tests, NULL, NULL));
}
