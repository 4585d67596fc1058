/*
 * memramp STEPS MIB_PER_STEP MS_PER_STEP OUT: grows its memory step by step
 * and records its own VmRSS (kB) after each step in OUT, one per line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "procstatus.h"

int main(int argc, char **argv)
{
	if (argc != 5)
		return 2;
	int steps = atoi(argv[1]);
	size_t chunk = strtoul(argv[2], NULL, 10) << 20;
	long ms = atol(argv[3]);
	struct timespec pause = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
	FILE *out = fopen(argv[4], "w");

	if (!out)
		return 1;
	for (int i = 0; i < steps; i++) {
		char *p = malloc(chunk);
		memset(p, i + 1, chunk); /* keep it: the ramp is the point */
		fprintf(out, "%ld\n", status_kb("VmRSS:"));
		fflush(out);
		nanosleep(&pause, NULL);
	}
	fclose(out);
	return 0;
}
