/*
 * memhog MIB EXIT_CODE OUT: touches MIB of memory, writes its own VmHWM
 * (kB, from /proc/self/status) to OUT just before exiting with EXIT_CODE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procstatus.h"

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	size_t bytes = strtoul(argv[1], NULL, 10) << 20;
	char *p = malloc(bytes);
	for (size_t i = 0; i < bytes; i += 4096)
		p[i] = (char)i;
	long hwm = status_kb("VmHWM:");
	FILE *out = fopen(argv[3], "w");
	if (!out)
		return 1;
	fprintf(out, "{\"vmhwm_kb\": %ld, \"touched\": %d}\n", hwm, p[bytes / 2]);
	fclose(out);
	free(p);
	return atoi(argv[2]);
}
