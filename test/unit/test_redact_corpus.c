/*
 * The redaction corpus (test/unit/redact_corpus.tsv): command lines of real
 * tools with a secret each, which must not survive anywhere in the redacted
 * argv while what makes the line readable does; and harmless look-alikes
 * (docker run -p 8080:80, make PASS=2, --tokens-per-sample 512) that must
 * come out unchanged. Prints how many of each failed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collector/redact/redact.h"

#define CORPUS "test/unit/redact_corpus.tsv"
#define MAX_FIELDS 40

/* Undoes the file's escapes in place: \n, \t, \\. */
static void unescape(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (*s == '\\' && (s[1] == 'n' || s[1] == 't' || s[1] == '\\')) {
			s++;
			*o++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : '\\';
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

static unsigned split_tabs(char *line, char **f)
{
	unsigned n = 0;

	line[strcspn(line, "\n")] = '\0';
	for (char *p = line; n < MAX_FIELDS;) {
		f[n++] = p;
		char *tab = strchr(p, '\t');
		if (!tab)
			break;
		*tab = '\0';
		p = tab + 1;
	}
	for (unsigned i = 0; i < n; i++)
		unescape(f[i]);
	return n;
}

struct tally {
	unsigned leaks, leaked, harmless, changed;
};

static void check_leak(char **f, unsigned n, struct tally *t, unsigned lineno)
{
	char buf[16384], *out[MAX_FIELDS];
	const char *secret = f[1], *keep = strcmp(f[2], "-") ? f[2] : NULL;
	unsigned argc = n - 3;
	bool leaked = false, kept = keep == NULL;

	redact_argv(NULL, f + 3, argc, buf, sizeof(buf), out);
	for (unsigned a = 0; a < argc; a++) {
		leaked |= strstr(out[a], secret) != NULL;
		kept |= keep && strstr(out[a], keep) != NULL;
	}
	t->leaks++;
	if (!leaked && kept)
		return;
	t->leaked++;
	fprintf(stderr, "line %u (%s): %s\n", lineno, f[3],
		leaked ? "the secret survived" : "lost what it must keep");
	for (unsigned a = 0; a < argc; a++)
		fprintf(stderr, "    [%u] %s\n", a, out[a]);
}

static void check_same(char **f, unsigned n, struct tally *t, unsigned lineno)
{
	char buf[16384], *out[MAX_FIELDS];
	unsigned argc = n - 1;
	bool changed = false;

	redact_argv(NULL, f + 1, argc, buf, sizeof(buf), out);
	for (unsigned a = 0; a < argc; a++)
		changed |= strcmp(out[a], f[1 + a]) != 0;
	t->harmless++;
	if (!changed)
		return;
	t->changed++;
	fprintf(stderr, "line %u (%s): a harmless argv was changed\n", lineno, f[1]);
	for (unsigned a = 0; a < argc; a++)
		fprintf(stderr, "    [%u] %s -> %s\n", a, f[1 + a], out[a]);
}

static void test_corpus(void **state)
{
	FILE *in = fopen(CORPUS, "r");
	char line[8192], *f[MAX_FIELDS];
	struct tally t = {0, 0, 0, 0};
	unsigned lineno = 0;
	(void)state;

	assert_non_null(in);
	while (fgets(line, sizeof(line), in)) {
		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		unsigned n = split_tabs(line, f);
		if (!strcmp(f[0], "leak") && n >= 4)
			check_leak(f, n, &t, lineno);
		else if (!strcmp(f[0], "same") && n >= 2)
			check_same(f, n, &t, lineno);
		else
			fail_msg("line %u: neither a leak nor a same row", lineno);
	}
	fclose(in);
	fprintf(stderr,
		"corpus: %u of %u secret shapes leaked or lost their context, %u of %u "
		"harmless command lines changed\n",
		t.leaked, t.leaks, t.changed, t.harmless);
	assert_true(t.leaks >= 100);
	assert_true(t.harmless >= 40);
	assert_int_equal(t.leaked, 0);
	assert_int_equal(t.changed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_corpus)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
