/* Lexical normalisation of recorded file paths, case by case. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "aggregator/ingest/path.h"

static void test_normalize(void **state)
{
	static const char *const cases[][2] = {
	    {"/x/files/../f4.txt", "/x/f4.txt"},
	    {"/a/./b//c/", "/a/b/c"},
	    {"/../../etc/passwd", "/etc/passwd"},
	    {"/a/b/../../..", "/"},
	    {"/", "/"},
	    {"//", "/"},
	    {"/a/..b/c", "/a/..b/c"},
	    {"/a/.hidden/./x", "/a/.hidden/x"},
	    {"relative/../x", "relative/../x"},
	    {"/w/data/../data/./r1.fq.gz", "/w/data/r1.fq.gz"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[128];
		snprintf(buf, sizeof(buf), "%s", cases[i][0]);
		path_normalize(buf);
		if (strcmp(buf, cases[i][1]) != 0)
			fail_msg("%s -> %s, expected %s", cases[i][0], buf, cases[i][1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_normalize)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
