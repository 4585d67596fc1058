#include "common/taskdir.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

bool nextflow_task_key(const char *dir, char *key, size_t size)
{
	size_t n = dir ? strlen(dir) : 0;

	if (n < 34 || dir[n - 31] != '/' || dir[n - 34] != '/' || !all_hex(dir + n - 33, 2) ||
	    !all_hex(dir + n - 30, 30))
		return false;
	snprintf(key, size, "%.2s/%.30s", dir + n - 33, dir + n - 30);
	return true;
}
