/*
 * threadio OUT: four threads each write 1 MiB to /dev/null and exit; main
 * joins them, then copies /proc/self/io (which includes dead threads' I/O and,
 * having no children, nothing else) to OUT. Built with -pthread.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void *writer(void *arg)
{
	static char buf[65536];
	int fd = open("/dev/null", O_WRONLY);

	for (int i = 0; i < 16; i++)
		if (write(fd, buf, sizeof(buf)) < 0)
			break;
	close(fd);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t[4];
	char io[1024];

	if (argc != 2)
		return 2;
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, writer, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	int fd = open("/proc/self/io", O_RDONLY);
	ssize_t n = read(fd, io, sizeof(io) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	io[n] = '\0';
	FILE *out = fopen(argv[1], "w");
	if (!out)
		return 1;
	fputs(io, out);
	fclose(out);
	return 0;
}
