/*
 * The unit tests' throwaway directory for the files a test writes: made before the
 * tests run, removed with everything in it after (include after cmocka.h).
 */
#ifndef TRACER_TEST_TMPDIR_H
#define TRACER_TEST_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

/* /tmp/tracer-TAG-XXXXXX once tmpdir_make has made it. */
static char tmpdir[64];

/* Writes text to NAME in the directory; its path, valid for the next three calls too. */
static inline const char *tmpdir_write(const char *name, const char *text)
{
	static char path[4][256];
	static int next;
	char *p = path[next++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s", tmpdir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

/* 0, or -1 when the directory could not be made. */
static inline int tmpdir_make(const char *tag)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tracer-%s-XXXXXX", tag);
	return mkdtemp(tmpdir) ? 0 : -1;
}

/* The tests' exit status rc, or 1 when the directory could not be removed. */
static inline int tmpdir_done(int rc)
{
	char cmd[100];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) != 0 ? 1 : rc;
}

#endif
