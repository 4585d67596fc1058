/*
 * opener DIR: opens a known set of files so a test can check exactly which
 * paths tracer lists: creates DIR/a.txt, reads DIR/b.txt three times, fails
 * to open DIR/missing.txt, and opens filtered paths (/proc, /dev, /sys).
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static void touch_open(const char *path, int flags)
{
	int fd = open(path, flags, 0644);

	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	char a[4096], b[4096], missing[4096];

	if (argc != 2)
		return 2;
	snprintf(a, sizeof(a), "%s/a.txt", argv[1]);
	snprintf(b, sizeof(b), "%s/b.txt", argv[1]);
	snprintf(missing, sizeof(missing), "%s/missing.txt", argv[1]);
	touch_open(a, O_WRONLY | O_CREAT | O_TRUNC);
	for (int i = 0; i < 3; i++)
		touch_open(b, O_RDONLY);
	touch_open(missing, O_RDONLY);
	touch_open("/proc/self/status", O_RDONLY);
	touch_open("/dev/null", O_WRONLY);
	touch_open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY);
	return 0;
}
