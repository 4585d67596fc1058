#include "common/paths.h"

#include <stdio.h>

int socket_url(const char *path, char *url, unsigned size)
{
	int n = snprintf(url, size, "ipc://%s", path);

	return n > 0 && (unsigned)n < size ? 0 : -1;
}
