/* The CLI's output filter: other users' control sequences never reach a terminal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli/render/termsafe.h"

/* Filters s in pieces of `piece` bytes (a sequence split between writes), then ends. */
static void filter(const char *s, size_t piece, char *out)
{
	struct termsafe_state st;
	size_t len = strlen(s), o = 0;

	memset(&st, 0, sizeof(st));
	for (size_t i = 0; i < len; i += piece) {
		size_t n = len - i < piece ? len - i : piece;
		o += termsafe_filter(&st, s + i, n, out + o);
	}
	o += termsafe_filter(&st, NULL, 0, out + o);
	out[o] = '\0';
}

static void check(const char *in, const char *want)
{
	char out[512];

	for (size_t piece = 1; piece <= strlen(in) + 1; piece++) {
		filter(in, piece, out);
		if (strcmp(out, want) != 0)
			fail_msg("in pieces of %zu: got [%s], want [%s]", piece, out, want);
	}
}

static void test_hostile_sequences_become_marks(void **state)
{
	(void)state;
	check("a\033[2Jb", "a?[2Jb");			       /* clear the screen */
	check("x\033]52;c;aGk=\007y", "x?]52;c;aGk=?y");       /* write the clipboard */
	check("\033[1A\033[2Kfake line", "?[1A?[2Kfake line"); /* forge a line above */
	check("\033[8mhidden", "?[8mhidden");		       /* colours not ours */
	check("bs\b\b\rcr\x7f", "bs???cr?");
	check("c1 \xc2\x9b"
	      "2J",
	      "c1 ??2J"); /* U+009B, the one-byte CSI */
	check("raw \x9b"
	      "2J",
	      "raw ?2J");   /* an 8-bit CSI, not UTF-8 at all */
	check("\033", "?"); /* cut off at the end */
	check("\033\033[0m", "??[0m");
	/* A literal reset or colour in argv is data like any other escape. */
	check("\033[0m\033[1;31mcritical\033[33m", "?[0m?[1;31mcritical?[33m");
	/* The mark alone, or before what is not one of ours, is a mark. */
	check("\xff"
	      "x \xff",
	      "?x ?");
}

static void test_text_and_our_colours_pass(void **state)
{
	(void)state;
	check("plain text\twith tab\n", "plain text\twith tab\n");
	check("a,b\r\nc,d\r\n", "a,b\r\nc,d\r\n"); /* CSV's line ends */
	check("x\ry\r", "x?y?");
	check("caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80 \xc2\xb5s",
	      "caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80 \xc2\xb5s");
	check(TERMSAFE_RED "critical" TERMSAFE_RESET " " TERMSAFE_YELLOW "warn" TERMSAFE_RESET
			   " " TERMSAFE_CYAN "info" TERMSAFE_RESET,
	      "\033[1;31mcritical\033[0m \033[33mwarn\033[0m \033[36minfo\033[0m");
}

static void test_length_is_kept(void **state)
{
	char out[512];
	const char *in = "\033]0;title\007\033[31m\033[0m\x01\x02\x7f\xc2\x85\xff";

	(void)state;
	filter(in, 3, out);
	assert_int_equal(strlen(out), strlen(in));
	assert_null(strchr(out, '\033'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hostile_sequences_become_marks),
	    cmocka_unit_test(test_text_and_our_colours_pass),
	    cmocka_unit_test(test_length_is_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
