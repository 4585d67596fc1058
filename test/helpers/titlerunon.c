/*
 * titlerunon SECONDS: writes a title over its whole argv area, NULs and all, as
 * setproctitle(3) implementations do, so that the kernel's /proc/PID/cmdline
 * reads on into the environment that follows argv in memory; then sleeps.
 * What tracer stores as its argv must stop where argv's area ends.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static const char title[] = "retitled worker ";

	if (argc < 2)
		return 2;
	unsigned seconds = (unsigned)atoi(argv[1]);
	char *end = argv[argc - 1] + strlen(argv[argc - 1]) + 1; /* past the last NUL */
	for (char *c = argv[0]; c < end; c++)
		*c = title[(size_t)(c - argv[0]) % (sizeof(title) - 1)];
	sleep(seconds);
	return 0;
}
