/*
 * manyfiles DIR N: creates DIR/f0 .. DIR/f(N-1), then opens each of them
 * again for reading, from another buffer. A process past tracer's per-process
 * file limit: the listed files and the count of the others must both be exact.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int open_close(const char *path, int flags)
{
	int fd = open(path, flags, 0644);

	if (fd < 0) {
		perror(path);
		return -1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	char create[4096], reopen[4096];

	if (argc != 3)
		return 2;
	int n = atoi(argv[2]);
	for (int i = 0; i < n; i++) {
		snprintf(create, sizeof(create), "%s/f%d", argv[1], i);
		if (open_close(create, O_WRONLY | O_CREAT | O_TRUNC) != 0)
			return 1;
	}
	for (int i = 0; i < n; i++) {
		snprintf(reopen, sizeof(reopen), "%s/f%d", argv[1], i);
		if (open_close(reopen, O_RDONLY) != 0)
			return 1;
	}
	return 0;
}
