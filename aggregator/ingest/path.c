#include "aggregator/ingest/path.h"

#include <string.h>

void path_normalize(char *path)
{
	char *out = path; /* where the next component goes */
	const char *in = path;

	if (path[0] != '/')
		return;
	while (*in) {
		while (*in == '/')
			in++;
		size_t n = strcspn(in, "/");
		if (n == 0)
			break;
		if (n == 1 && in[0] == '.') {
			in += n;
			continue;
		}
		if (n == 2 && in[0] == '.' && in[1] == '.') {
			/* Back to the slash before the last component written. */
			while (out > path && *--out != '/')
				;
			in += n;
			continue;
		}
		*out++ = '/';
		memmove(out, in, n);
		out += n;
		in += n;
	}
	if (out == path)
		*out++ = '/';
	*out = '\0';
}
