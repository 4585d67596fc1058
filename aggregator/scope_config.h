/*
 * The aggregator's settings file (--config, e.g. /etc/tracer/aggregator.conf):
 * its [scope] section says which processes this host records. Command-line
 * options (--scope-cgroup) override it.
 */
#ifndef TRACER_AGGREGATOR_SCOPE_CONFIG_H
#define TRACER_AGGREGATOR_SCOPE_CONFIG_H

#include <stddef.h>

struct scope_setting {
	char cgroup[256]; /* "": every cgroup */
};

/* One [scope] key. 0, or -1 with the problem in err. */
int scope_setting_set(struct scope_setting *s, const char *name, const char *value, char *err,
		      size_t size);
/* Reads the file's [scope] section (other programs' sections are skipped).
 * 0, or -1 with the file, line and problem in err; s is unchanged on error. */
int scope_setting_load(struct scope_setting *s, const char *path, char *err, size_t size);

#endif
