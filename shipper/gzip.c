#include "shipper/gzip.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ZLIB_CONST /* next_in is const: no cast away from the caller's buffer */
#include <zlib.h>

unsigned char *gzip_compress(const void *in, size_t len, size_t *out_len)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	/* windowBits 15 + 16: a gzip header and trailer, not raw zlib. */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	size_t cap = deflateBound(&z, (uLong)len) + 32;
	unsigned char *out = malloc(cap);
	if (!out) {
		deflateEnd(&z);
		return NULL;
	}
	z.next_in = in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	int rc = deflate(&z, Z_FINISH);
	*out_len = z.total_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	return out;
}
