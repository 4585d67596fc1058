#include "common/strutil.h"

#include <string.h>

size_t copy_string(char *dst, size_t size, const char *src)
{
	if (size == 0)
		return 0;
	size_t n = src ? strnlen(src, size - 1) : 0;
	memmove(dst, src ? src : "", n);
	dst[n] = '\0';
	return n;
}
