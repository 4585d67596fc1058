/* A helper's own /proc/self/status fields, the ground truth it reports. */
#ifndef TRACER_TEST_PROCSTATUS_H
#define TRACER_TEST_PROCSTATUS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kB value of a field ("VmRSS:", "VmHWM:"); -1 when unreadable. */
static inline long status_kb(const char *field)
{
	char line[256];
	long v = -1;
	size_t n = strlen(field);
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, field, n) == 0)
			v = strtol(line + n, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

#endif
