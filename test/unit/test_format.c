/* The CLI's text cells: fixed-width columns with an ellipsis, and amounts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli/render/format.h"

static void test_columns(void **state)
{
	static const struct {
		const char *in;
		int width;
		const char *out;
	} cases[] = {
	    {"short", 8, "short   "},
	    {"exactly8", 8, "exactly8"},
	    {"nine-long", 8, "nine-lo\xe2\x80\xa6"},
	    {"", 3, "   "},
	    /* UTF-8 counts by character: "é" is one column. */
	    {"caf\xc3\xa9", 5, "caf\xc3\xa9 "},
	    {"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 3, "\xc3\xa9\xc3\xa9\xe2\x80\xa6"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[64];
		format_column(cases[i].in, cases[i].width, out, sizeof(out));
		assert_string_equal(out, cases[i].out);
	}
}

static void test_amounts(void **state)
{
	static const struct {
		double v;
		const char *out;
	} cases[] = {
	    {0, "0"},
	    {12.345, "12.35"},
	    {1, "1.00"},
	    {0.0123, "0.0123"},
	    {0.000123, "0.000123"},
	    {0.00001234, "0.0000123"},
	    {0.00488, "0.00488"},
	    {4.88e-05, "0.0000488"},
	    {1.234e-07, "0.00000012"},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[32];
		format_amount(cases[i].v, out, sizeof(out));
		assert_string_equal(out, cases[i].out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_columns),
					   cmocka_unit_test(test_amounts)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
