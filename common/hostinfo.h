/* Identity of this boot and this host, stamped on every frame. */
#ifndef TRACER_HOSTINFO_H
#define TRACER_HOSTINFO_H

#include <stdint.h>

#define BOOT_ID_LEN 16

/* Parses /proc/sys/kernel/random/boot_id. 0 or -1. */
int read_boot_id(uint8_t out[BOOT_ID_LEN]);
/* /etc/machine-id (32 hex chars), or "" when missing. */
void read_host_id(char *out, unsigned size);
/* Parses a textual UUID (with or without dashes) into 16 bytes. 0 or -1. */
int parse_uuid(const char *text, uint8_t out[16]);
void format_hex(const uint8_t *bytes, unsigned len, char *out, unsigned size);

#endif
