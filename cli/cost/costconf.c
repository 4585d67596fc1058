#include "cli/cost/costconf.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/confkey.h"

struct conf_parse {
	struct cost_conf *c;
	char *err;
	size_t err_size;
};

static int set_string(char *dst, size_t size, const char *value, struct conf_parse *p,
		      const char *name)
{
	if (strlen(value) >= size) {
		snprintf(p->err, p->err_size, "%s is too long", name);
		return 0;
	}
	snprintf(dst, size, "%s", value);
	return 1;
}

static int conf_line(void *user, const char *section, const char *name, const char *value)
{
	struct conf_parse *p = user;
	struct cost_conf *c = p->c;

	if (strcmp(section, "cost") != 0) {
		if (section[0])
			snprintf(p->err, p->err_size, "unknown section [%s] (only [cost])",
				 section);
		else
			snprintf(p->err, p->err_size, "%s: a setting outside [cost]", name);
		return 0;
	}
	if (config_key_is(name, "rate")) {
		char *end;
		errno = 0;
		double v = strtod(value, &end);
		if (end == value || *end || errno || !(v > 0)) {
			snprintf(p->err, p->err_size,
				 "rate is USD per hour (a number above 0), got '%s'", value);
			return 0;
		}
		return set_string(c->rate, sizeof(c->rate), value, p, "rate");
	}
	if (config_key_is(name, "instance-type"))
		return set_string(c->instance_type, sizeof(c->instance_type), value, p, name);
	if (config_key_is(name, "region"))
		return set_string(c->region, sizeof(c->region), value, p, name);
	if (config_key_is(name, "lifecycle")) {
		if (strcmp(value, "on-demand") && strcmp(value, "spot")) {
			snprintf(p->err, p->err_size, "lifecycle is on-demand or spot, got '%s'",
				 value);
			return 0;
		}
		return set_string(c->lifecycle, sizeof(c->lifecycle), value, p, name);
	}
	if (config_key_is(name, "detect")) {
		if (!strcmp(value, "auto"))
			c->detect = DETECT_AUTO;
		else if (!strcmp(value, "yes"))
			c->detect = DETECT_YES;
		else if (!strcmp(value, "no"))
			c->detect = DETECT_NO;
		else {
			snprintf(p->err, p->err_size, "detect is auto, yes or no, got '%s'", value);
			return 0;
		}
		return 1;
	}
	snprintf(p->err, p->err_size, "unknown key '%s'", name);
	return 0;
}

int cost_conf_load(struct cost_conf *c, const char *path, char *err, size_t err_size)
{
	char why[256] = "";
	struct conf_parse p = {c, why, sizeof(why)};
	bool given = path != NULL;

	memset(c, 0, sizeof(*c));
	c->detect = DETECT_AUTO;
	if (!path)
		path = COST_CONF_PATH;
	FILE *f = fopen(path, "re");
	if (!f) {
		if (!given && errno == ENOENT)
			return 0;
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return -1;
	}
	int line = ini_parse_file(f, conf_line, &p);
	fclose(f);
	if (line != 0) {
		snprintf(err, err_size, "%s:%d: %s", path, line,
			 why[0] ? why : "expected KEY = VALUE or [cost]");
		return -1;
	}
	snprintf(c->path, sizeof(c->path), "%s", path);
	return 0;
}

/* The first line of dir/name, lower-cased; "" if unreadable. */
static void read_lower(const char *dir, const char *name, char *out, size_t size)
{
	char path[512];

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	if (!fgets(out, (int)size, f))
		out[0] = '\0';
	fclose(f);
	for (char *s = out; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

const char *cost_firmware_cloud(const char *dmi_dir)
{
	static const char *const files[] = {"sys_vendor", "product_name", "bios_vendor",
					    "bios_version"};
	char v[256];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		read_lower(dmi_dir, files[i], v, sizeof(v));
		/* Nitro: "Amazon EC2"; Xen-based: bios_version "4.11.amazon". */
		if (strstr(v, "amazon"))
			return "aws";
		if (strstr(v, "google"))
			return "gcp";
	}
	return NULL;
}
