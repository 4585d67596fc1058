/* gzip in memory (zlib), for request bodies. */
#ifndef TRACER_SHIPPER_GZIP_H
#define TRACER_SHIPPER_GZIP_H

#include <stddef.h>

/* A malloc'd gzip stream of in; NULL on failure. */
unsigned char *gzip_compress(const void *in, size_t len, size_t *out_len);

#endif
