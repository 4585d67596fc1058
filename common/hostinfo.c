#include "common/hostinfo.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "common/fileutil.h"

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int parse_uuid(const char *text, uint8_t out[16])
{
	unsigned n = 0;

	for (const char *p = text; *p && !isspace((unsigned char)*p); p++) {
		if (*p == '-')
			continue;
		int hi = hex_value(p[0]);
		int lo = p[1] ? hex_value(p[1]) : -1;
		if (hi < 0 || lo < 0 || n >= 16)
			return -1;
		out[n++] = (uint8_t)(hi << 4 | lo);
		p++;
	}
	return n == 16 ? 0 : -1;
}

int read_boot_id(uint8_t out[BOOT_ID_LEN])
{
	char buf[64];

	if (read_small_file("/proc/sys/kernel/random/boot_id", buf, sizeof(buf)) < 0)
		return -1;
	return parse_uuid(buf, out);
}

void read_host_id(char *out, unsigned size)
{
	char buf[64];
	uint8_t id[16];

	out[0] = '\0';
	if (read_small_file("/etc/machine-id", buf, sizeof(buf)) < 0 || parse_uuid(buf, id) < 0)
		return;
	format_hex(id, sizeof(id), out, size);
}

void format_hex(const uint8_t *bytes, unsigned len, char *out, unsigned size)
{
	static const char digits[] = "0123456789abcdef";
	unsigned o = 0;

	for (unsigned i = 0; i < len && o + 2 < size; i++) {
		out[o++] = digits[bytes[i] >> 4];
		out[o++] = digits[bytes[i] & 15];
	}
	if (size)
		out[o < size ? o : size - 1] = '\0';
}
