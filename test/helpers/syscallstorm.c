/*
 * syscallstorm N FILE: N rounds of open, 64-byte read, 64-byte write to
 * /dev/null, close: a syscall-heavy workload of many small operations.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[64];
	int null_fd = open("/dev/null", O_WRONLY);

	if (argc != 3 || null_fd < 0)
		return 2;
	for (long i = 0, n = atol(argv[1]); i < n; i++) {
		int fd = open(argv[2], O_RDONLY);
		if (fd < 0)
			return 1;
		if (read(fd, buf, sizeof(buf)) < 0 || write(null_fd, buf, sizeof(buf)) < 0)
			return 1;
		close(fd);
	}
	return 0;
}
