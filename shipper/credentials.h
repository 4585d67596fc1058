/*
 * Sink credentials from a file readable by the shipper's user only (never
 * argv or the environment): lines `user = NAME`, `password = SECRET`,
 * `token = BEARER` (INI, no section).
 */
#ifndef TRACER_CREDENTIALS_H
#define TRACER_CREDENTIALS_H

#include <stddef.h>

struct credentials {
	char user[128], password[256], token[1024];
};

/* -1 with the reason in err: unreadable, readable by others, a bad line. */
int credentials_load(const char *path, struct credentials *c, char *err, size_t err_size);
void credentials_wipe(struct credentials *c);

#endif
