/*
 * The per-tool redaction rules: the shipped file parses and is what is built
 * in; a rule a site adds takes effect; a bad line is refused with its number;
 * the collector's copy is reread from its open file (as on SIGHUP after the
 * privilege drop), keeps the old rules when the new text is bad, and says when
 * the file was replaced rather than edited.
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

#include "collector/redact/rules_file.h"

static char *read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = malloc(1 << 20);

	assert_non_null(f);
	assert_non_null(buf);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

/* What `frobctl -z X` becomes under RULES. */
static void redact_frob(const struct redact_rules *rules, char *out, size_t size)
{
	char *argv[] = {"frobctl", "-z", "Frob5ecret", "run"}, *res[4], buf[256];

	redact_argv(rules, argv, 4, buf, sizeof(buf), res);
	snprintf(out, size, "%s %s %s %s", res[0], res[1], res[2], res[3]);
}

static void test_shipped_file_is_the_builtin(void **state)
{
	size_t len;
	char *text = read_text("deploy/etc/redact.rules", &len), err[200];
	(void)state;

	struct redact_rules *r = redact_rules_parse(text, len, err, sizeof(err));
	assert_non_null(r);
	assert_true(redact_rules_count(r) >= 100);
	assert_int_equal(redact_rules_count(r), redact_rules_count(redact_rules_builtin()));
	redact_rules_free(r);
	free(text);
}

static void test_a_site_adds_a_tool(void **state)
{
	size_t len;
	char *text = read_text("deploy/etc/redact.rules", &len), err[200], got[256];
	(void)state;

	redact_frob(NULL, got, sizeof(got));
	assert_string_equal(got, "frobctl -z Frob5ecret run"); /* no rule: nothing to go by */
	text = realloc(text, len + 64);
	strcpy(text + len, "frobctl  -  next  -z\n");
	struct redact_rules *r = redact_rules_parse(text, strlen(text), err, sizeof(err));
	assert_non_null(r);
	redact_frob(r, got, sizeof(got));
	assert_string_equal(got, "frobctl -z *** run");
	redact_rules_free(r);
	free(text);
}

static void test_bad_lines_are_refused(void **state)
{
	static const char *const bad[] = {
	    "mysql - glued\n",	   "# fine\nmysql - sticky -p\n",
	    "isql - position 0\n", "curl - next -u ::\n",
	    "a b c d e f\n",
	};
	static const char *const where[] = {"line 1", "line 2", "line 1", "line 1", "line 1"};
	char err[200];
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		err[0] = '\0';
		assert_null(redact_rules_parse(bad[i], strlen(bad[i]), err, sizeof(err)));
		assert_non_null(strstr(err, where[i]));
	}
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w"); /* truncates in place: the same inode */

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_reread_from_the_open_file(void **state)
{
	char dir[] = "/tmp/redact-rules-XXXXXX", path[64], moved[64], err[600], got[256];
	struct redact_rules_file f;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/redact.rules", dir);
	snprintf(moved, sizeof(moved), "%s/new.rules", dir);
	write_file(path, "mysql - glued -p\n");
	assert_int_equal(redact_rules_file_open(&f, path, err, sizeof(err)), 0);
	assert_ptr_equal(redact_rules_active(), f.rules);
	redact_frob(redact_rules_active(), got, sizeof(got));
	assert_string_equal(got, "frobctl -z Frob5ecret run");

	/* Edited in place: the next reread has the new rule. */
	write_file(path, "mysql - glued -p\nfrobctl - next -z\n");
	assert_int_equal(redact_rules_file_reload(&f, err, sizeof(err)), 0);
	redact_frob(redact_rules_active(), got, sizeof(got));
	assert_string_equal(got, "frobctl -z *** run");

	/* A broken edit keeps the rules in force. */
	write_file(path, "frobctl - sideways -z\n");
	assert_int_equal(redact_rules_file_reload(&f, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "line 1"));
	redact_frob(redact_rules_active(), got, sizeof(got));
	assert_string_equal(got, "frobctl -z *** run");

	/* Replaced by rename: the open file is the old one, and the warning says so. */
	write_file(path, "frobctl - next -z\n");
	write_file(moved, "mysql - glued -p\n");
	assert_int_equal(rename(moved, path), 0);
	assert_int_equal(redact_rules_file_reload(&f, err, sizeof(err)), 1);
	assert_non_null(strstr(err, "replaced"));
	redact_frob(redact_rules_active(), got, sizeof(got));
	assert_string_equal(got, "frobctl -z *** run");

	redact_rules_file_close(&f);
	assert_ptr_equal(redact_rules_active(), redact_rules_builtin());
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_shipped_file_is_the_builtin),
	    cmocka_unit_test(test_a_site_adds_a_tool),
	    cmocka_unit_test(test_bad_lines_are_refused),
	    cmocka_unit_test(test_reread_from_the_open_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
