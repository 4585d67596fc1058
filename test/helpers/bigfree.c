/*
 * bigfree MIB: touches MIB of anonymous memory, then exits without freeing
 * it. The kernel frees it on the exit path, after the exit tracepoint: a
 * parent's wait4 counts that CPU time (hundreds of ms for gigabytes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
	char *p = malloc(mib << 20);

	if (!p) {
		perror("malloc");
		return 1;
	}
	memset(p, 1, mib << 20);
	return p[mib] == 1 ? 0 : 2;
}
