/* Argv redaction: secrets never survive; ordinary arguments are untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "collector/redact/redact.h"

struct redacted {
	char buf[8192];
	char *argv[64];
	unsigned count;
};

static void run(struct redacted *r, char **argv, unsigned argc)
{
	r->count = redact_argv(NULL, argv, argc, r->buf, sizeof(r->buf), r->argv);
}

static void test_flag_forms(void **state)
{
	struct redacted r;
	char *argv[] = {"mysqlx",     "--password=hunter2", "--token", "abc123",
			"--user=bob", "--api-key",	    "K1",      "--max-tokens=200"};

	run(&r, argv, 8);
	assert_string_equal(r.argv[1], "--password=***");
	assert_string_equal(r.argv[2], "--token");
	assert_string_equal(r.argv[3], "***");
	assert_string_equal(r.argv[4], "--user=bob");
	assert_string_equal(r.argv[6], "***");
	assert_string_equal(r.argv[7], "--max-tokens=200");
	assert_int_equal(r.count, 3);
}

/* Found by fuzzing: a long key named its secret past the first 64 characters. */
static void test_long_keys(void **state)
{
	struct redacted r;
	char long_key[400], very_long[400];
	(void)state;
	snprintf(long_key, sizeof(long_key), "--%s-database-password=hunter2",
		 "a-very-long-option-name-that-goes-on-and-on-for-more-than-sixty-four-chars");
	memset(very_long, 'x', 300);
	snprintf(very_long + 300, sizeof(very_long) - 300, "=plain");
	char *argv[] = {"tool", long_key, very_long};
	run(&r, argv, 3);
	assert_non_null(strstr(r.argv[1], "-password=***"));
	assert_null(strstr(r.argv[1], "hunter2"));
	/* Past 256 characters we cannot tell: redacted. */
	assert_null(strstr(r.argv[2], "plain"));
}

/* Found by fuzzing: "tokeniz" in a key excused the whole key, secret word and all. */
static void test_tokenizer_does_not_excuse_a_password(void **state)
{
	struct redacted r;
	char *argv[] = {"tool", "-tokeniz--password=hunter2", "--tokenizer-password=hunter2",
			"--tokenizer=bpe", "--tokenizer-path=/models/t.json"};
	(void)state;
	run(&r, argv, 5);
	assert_string_equal(r.argv[1], "-tokeniz--password=***");
	assert_string_equal(r.argv[2], "--tokenizer-password=***");
	assert_string_equal(r.argv[3], "--tokenizer=bpe");
	assert_string_equal(r.argv[4], "--tokenizer-path=/models/t.json");
}

static void test_env_style_and_lists(void **state)
{
	struct redacted r;
	char *argv[] = {
	    "env", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI", "GITHUB_TOKEN=ghp_x", "PATH=/usr/bin",
	    "-o",  "username=me,password=pw,ro"};

	run(&r, argv, 6);
	assert_string_equal(r.argv[1], "AWS_SECRET_ACCESS_KEY=***");
	assert_string_equal(r.argv[2], "GITHUB_TOKEN=***");
	assert_string_equal(r.argv[3], "PATH=/usr/bin");
	assert_string_equal(r.argv[5], "username=me,password=***,ro");
}

static void test_urls(void **state)
{
	struct redacted r;
	char *argv[] = {"git",
			"clone",
			"https://user:s3cret@github.com/o/r.git",
			"https://ghp_token@github.com/o/r",
			"ssh://git@github.com/o/r",
			"https://x.s3.amazonaws.com/f?X-Amz-Signature=abc&X-Amz-Date=1&token=t9"};

	run(&r, argv, 6);
	assert_string_equal(r.argv[2], "https://user:***@github.com/o/r.git");
	assert_string_equal(r.argv[3], "https://***@github.com/o/r");
	assert_string_equal(r.argv[4], "ssh://git@github.com/o/r");
	assert_string_equal(
	    r.argv[5], "https://x.s3.amazonaws.com/f?X-Amz-Signature=***&X-Amz-Date=1&token=***");
	assert_null(strstr(r.buf, "s3cret"));
	assert_null(strstr(r.buf, "ghp_token"));
}

static void test_headers_and_tools(void **state)
{
	struct redacted r;
	char *curl[] = {
	    "/usr/bin/curl",	  "-H", "Authorization: Bearer eyJhbGciOi", "-u", "alice:pw1",
	    "https://example.org"};
	char *mysql[] = {"mysql", "-uroot", "-psecretpw", "db"};
	char *ssl[] = {"openssl", "rsa", "-passin", "pass:topsecret", "-pass", "pass:x"};

	run(&r, curl, 6);
	assert_string_equal(r.argv[2], "Authorization: ***");
	assert_string_equal(r.argv[4], "alice:***");
	/* Found by fuzz_redact: a user part that itself holds a secret goes whole. */
	char *odd_user[] = {"curl", "-u", "x--password=s3cret:pw", "https://example.org"};
	run(&r, odd_user, 4);
	assert_string_equal(r.argv[2], "***");
	assert_null(strstr(r.buf, "s3cret"));
	run(&r, mysql, 4);
	assert_string_equal(r.argv[1], "-uroot");
	assert_string_equal(r.argv[2], "-p***");
	run(&r, ssl, 6);
	assert_string_equal(r.argv[3], "pass:***");
	assert_string_equal(r.argv[5], "***"); /* after -pass the whole value goes */
}

static void test_harmless_untouched(void **state)
{
	struct redacted r;
	char *argv[] = {"samtools", "sort",   "-@",   "4",  "-o",  "out.bam",	 "--password-file",
			"/etc/pw",  "in.bam", "sort", "-k", "2,2", "--author=me"};

	run(&r, argv, 13);
	assert_int_equal(r.count, 0);
	for (unsigned i = 0; i < 13; i++)
		assert_string_equal(r.argv[i], argv[i]);
}

static void test_no_room_fails_closed(void **state)
{
	char buf[16];
	char *out[2];
	char *argv[] = {"x", "--password=a-very-long-secret-value"};
	unsigned n = redact_argv(NULL, argv, 2, buf, sizeof(buf), out);

	assert_true(n >= 1);
	assert_null(strstr(out[1], "secret"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_flag_forms),
	    cmocka_unit_test(test_long_keys),
	    cmocka_unit_test(test_env_style_and_lists),
	    cmocka_unit_test(test_urls),
	    cmocka_unit_test(test_tokenizer_does_not_excuse_a_password),
	    cmocka_unit_test(test_headers_and_tools),
	    cmocka_unit_test(test_harmless_untouched),
	    cmocka_unit_test(test_no_room_fails_closed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
