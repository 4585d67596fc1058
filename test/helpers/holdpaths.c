/*
 * holdpaths PREFIX N: tries to open PREFIX0 .. PREFIX(N-1) (paths that need
 * not exist: failed opens are listed too), writes "ready" to stdout, then
 * stays alive until its stdin closes. A process keeps its paths in tracer's
 * kernel table until it exits: a few of these fill that table on purpose.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096], c;

	if (argc != 3)
		return 2;
	int n = atoi(argv[2]);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s%d", argv[1], i);
		int fd = open(path, O_RDONLY);
		if (fd >= 0)
			close(fd);
	}
	if (printf("ready\n") < 0 || fflush(stdout) != 0)
		return 1;
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
