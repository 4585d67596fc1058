#include "cli/model/provpath.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

/* lib.so, lib.so.6, lib.so.1.2.3: ".so" ending the name or followed by version numbers. */
static bool is_shared_library(const char *path)
{
	const char *name = strrchr(path, '/');

	name = name ? name + 1 : path;
	if (!strcmp(name, "ld.so.cache") || !strcmp(name, "ld.so.preload"))
		return true;
	for (const char *so = strstr(name, ".so"); so; so = strstr(so + 1, ".so")) {
		const char *t = so + 3;
		while (*t == '.' && t[1] >= '0' && t[1] <= '9') {
			t++;
			while (*t >= '0' && *t <= '9')
				t++;
		}
		if (*t == '\0')
			return so > name;
	}
	return false;
}

bool prov_path_is_system(const char *path)
{
	static const char *const dirs[] = {"/proc", "/sys", "/dev", "/usr/lib/locale",
					   "/usr/share/locale"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (under(path, dirs[i]))
			return true;
	return is_shared_library(path);
}

static bool unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

static bool escape_into(const char *text, bool keep_slash, char *out, size_t size)
{
	size_t o = strlen(out);

	for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
		if (o + 4 > size) {
			out[0] = '\0';
			return false;
		}
		if (unreserved(*c) || (keep_slash && *c == '/'))
			out[o++] = (char)*c;
		else
			o += (size_t)snprintf(out + o, size - o, "%%%02X", *c);
	}
	out[o] = '\0';
	return true;
}

bool prov_file_uri(const char *path, char *out, size_t size)
{
	if (size < 8) {
		if (size)
			out[0] = '\0';
		return false;
	}
	strcpy(out, "file://");
	return escape_into(path, true, out, size);
}

bool prov_escape(const char *text, char *out, size_t size)
{
	if (!size)
		return false;
	out[0] = '\0';
	return escape_into(text, false, out, size);
}

void prov_iso_time(long long epoch_ns, char *out, size_t size)
{
	time_t secs = (time_t)(epoch_ns / 1000000000LL);
	struct tm tm;
	char day[32];

	gmtime_r(&secs, &tm);
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, size, "%s.%03lldZ", day, (epoch_ns % 1000000000LL) / 1000000LL);
}
