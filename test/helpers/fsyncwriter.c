/*
 * fsyncwriter PATH BYTES OUT: writes BYTES to PATH in 64 KiB writes, fsyncs,
 * then copies its own /proc/self/io (the kernel's I/O counters) to OUT.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char chunk[65536];
	char io[1024];

	if (argc != 4)
		return 2;
	long long left = atoll(argv[2]);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	memset(chunk, 'x', sizeof(chunk));
	while (left > 0) {
		size_t n = left < (long long)sizeof(chunk) ? (size_t)left : sizeof(chunk);
		if (write(fd, chunk, n) != (ssize_t)n)
			return 1;
		left -= (long long)n;
	}
	if (fsync(fd) != 0 || close(fd) != 0)
		return 1;
	int in = open("/proc/self/io", O_RDONLY);
	ssize_t n = in >= 0 ? read(in, io, sizeof(io) - 1) : -1;
	if (n <= 0)
		return 1;
	close(in);
	io[n] = '\0';
	FILE *out = fopen(argv[3], "w");
	if (!out)
		return 1;
	fputs(io, out);
	fclose(out);
	return 0;
}
