/*
 * chdirloop N DIR_A DIR_B: N chdir() calls alternating between two
 * directories; prints the seconds they took. What following a process's
 * working directory costs it (docs/paths.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec a, b;

	if (argc != 4)
		return 2;
	long n = atol(argv[1]);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		if (chdir(argv[2 + (i & 1)]) != 0)
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.6f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}
