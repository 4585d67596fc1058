#include "aggregator/scope_config.h"

#include <errno.h>
#include <ini.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/confkey.h"

int scope_setting_set(struct scope_setting *s, const char *name, const char *value, char *err,
		      size_t size)
{
	if (config_key_is(name, "cgroup") || config_key_is(name, "scope-cgroup")) {
		if (value[0] != '/' || strlen(value) >= sizeof(s->cgroup)) {
			snprintf(err, size,
				 "cgroup = %s: expected an absolute cgroup path such as "
				 "/slurm",
				 value);
			return -1;
		}
		snprintf(s->cgroup, sizeof(s->cgroup), "%s", value);
		return 0;
	}
	snprintf(err, size, "%s = %s: unknown setting (the aggregator reads [scope] cgroup)", name,
		 value);
	return -1;
}

struct load_state {
	struct scope_setting *s;
	char *err;
	size_t size;
};

static const char *const aggregator_sections[] = {"scope", NULL};

/* inih calls this per key; returning 0 stops with that line's number. */
static int on_entry(void *user, const char *section, const char *name, const char *value)
{
	struct load_state *st = user;
	bool mine;
	const char *why = config_section_check(section, aggregator_sections, &mine);

	if (why) {
		snprintf(st->err, st->size, "%s = %s: %s (the aggregator reads [scope])", name,
			 value, why);
		return 0;
	}
	if (!mine)
		return 1; /* another program's section in a shared file */
	return scope_setting_set(st->s, name, value, st->err, st->size) == 0;
}

int scope_setting_load(struct scope_setting *s, const char *path, char *err, size_t size)
{
	struct scope_setting copy = *s;
	char detail[300] = "";
	struct load_state st = {.s = &copy, .err = detail, .size = sizeof(detail)};
	int line = ini_parse(path, on_entry, &st);

	if (line < 0) {
		snprintf(err, size, "%s: cannot read: %s", path, strerror(errno));
		return -1;
	}
	if (line > 0) {
		snprintf(err, size, "%s:%d: %s", path, line, detail[0] ? detail : "syntax error");
		return -1;
	}
	*s = copy;
	return 0;
}
