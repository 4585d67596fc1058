/*
 * opener DIR: opens a known set of files so a test can check exactly which
 * paths tracer lists: creates DIR/a.txt, reads DIR/b.txt three times, fails
 * to open DIR/missing.txt twice, and opens filtered paths (/proc, /dev, /sys).
 * Then the cases tracer's cache of repeat opens must get right: DIR/c.txt
 * named from two buffers; one buffer naming DIR/d.txt, then DIR/e.txt;
 * DIR/f.txt created, deleted and created again from one buffer; a filtered
 * path opened from one buffer, then a listed one from the same buffer.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void touch_open(const char *path, int flags)
{
	int fd = open(path, flags, 0644);

	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	char a[4096], b[4096], missing[4096], c1[4096], c2[4096], reuse[4096];

	if (argc != 2)
		return 2;
	snprintf(a, sizeof(a), "%s/a.txt", argv[1]);
	snprintf(b, sizeof(b), "%s/b.txt", argv[1]);
	snprintf(missing, sizeof(missing), "%s/missing.txt", argv[1]);
	touch_open(a, O_WRONLY | O_CREAT | O_TRUNC);
	for (int i = 0; i < 3; i++)
		touch_open(b, O_RDONLY);
	touch_open(missing, O_RDONLY);
	touch_open(missing, O_RDONLY);
	touch_open("/proc/self/status", O_RDONLY);
	touch_open("/dev/null", O_WRONLY);
	touch_open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY);

	snprintf(c1, sizeof(c1), "%s/c.txt", argv[1]);
	strcpy(c2, c1);
	touch_open(c1, O_WRONLY | O_CREAT);
	touch_open(c2, O_RDONLY);
	touch_open(c1, O_RDONLY);
	snprintf(reuse, sizeof(reuse), "%s/d.txt", argv[1]);
	touch_open(reuse, O_WRONLY | O_CREAT);
	touch_open(reuse, O_RDONLY);
	snprintf(reuse, sizeof(reuse), "%s/e.txt", argv[1]);
	touch_open(reuse, O_WRONLY | O_CREAT);
	snprintf(reuse, sizeof(reuse), "%s/f.txt", argv[1]);
	touch_open(reuse, O_WRONLY | O_CREAT);
	unlink(reuse);
	touch_open(reuse, O_WRONLY | O_CREAT);
	touch_open(reuse, O_RDONLY);
	strcpy(reuse, "/proc/self/stat");
	touch_open(reuse, O_RDONLY);
	touch_open(reuse, O_RDONLY);
	snprintf(reuse, sizeof(reuse), "%s/g.txt", argv[1]);
	touch_open(reuse, O_WRONLY | O_CREAT);
	return 0;
}
