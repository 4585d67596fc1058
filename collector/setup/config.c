#include "collector/setup/config.h"
#include "collector/setup/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ini.h>

#include "common/confkey.h"
#include "common/paths.h"

static const char *const group_names[PROBE_GROUPS] = {
    [PROBE_PROCESS] = "process",   [PROBE_SCHEDULER] = "scheduler",
    [PROBE_SYSCALLS] = "syscalls", [PROBE_NETWORK] = "network",
    [PROBE_OOM] = "oom",	   [PROBE_RECLAIM] = "reclaim",
    [PROBE_FILES] = "files",	   [PROBE_CGROUPS] = "cgroups",
    [PROBE_SAMPLES] = "samples",
};

const char *probe_group_name(enum probe_group g)
{
	return (unsigned)g < PROBE_GROUPS ? group_names[g] : "?";
}

int probe_group_by_name(const char *name)
{
	for (int g = 0; g < PROBE_GROUPS; g++)
		if (strcmp(name, group_names[g]) == 0)
			return g;
	return -1;
}

void collector_config_defaults(struct collector_config *c)
{
	memset(c, 0, sizeof(*c));
	c->socket_path = TRACER_DEFAULT_SOCKET;
	/*
	 * Each frame wakes several threads in both daemons. 200 ms (the
	 * aggregator's commit interval) cost ~40% less daemon CPU in an exec
	 * storm than 50 ms did, for a p99 exit-to-row of ~380 ms instead of ~180.
	 */
	c->flush_ms = 200;
	c->ring_mb = 16;
	c->queue_mb = 64;
	c->sample_ms = 1000;
	for (int g = 0; g < PROBE_GROUPS; g++)
		c->enabled[g] = true;
	/* A BPF call on every syscall: worth it only when asked for. */
	c->enabled[PROBE_SYSCALLS] = false;
	collector_config_set_excludes(c, "/proc/,/sys/,/dev/,/usr/lib/locale/,/usr/share/locale/");
	c->exclude_shared_libs = true;
}

int collector_config_set_excludes(struct collector_config *c, const char *list)
{
	char buf[TRACER_FILE_PREFIXES * TRACER_FILE_PREFIX_LEN * 2];
	unsigned n = 0;

	if (strlen(list) >= sizeof(buf))
		return -1;
	strcpy(buf, list);
	for (char *tok = strtok(buf, ", \t"); tok; tok = strtok(NULL, ", \t")) {
		if (n == TRACER_FILE_PREFIXES || strlen(tok) >= TRACER_FILE_PREFIX_LEN)
			return -1;
		snprintf(c->file_exclude[n++], TRACER_FILE_PREFIX_LEN, "%s", tok);
	}
	for (unsigned i = n; i < TRACER_FILE_PREFIXES; i++)
		c->file_exclude[i][0] = '\0';
	c->n_file_exclude = n;
	return 0;
}

unsigned file_skip_kinds(const struct collector_config *c)
{
	static const struct {
		const char *prefix;
		unsigned kind;
	} kinds[] = {{"/proc/", TRACER_SKIP_PROC}, {"/proc", TRACER_SKIP_PROC},
		     {"/sys/", TRACER_SKIP_SYS},   {"/sys", TRACER_SKIP_SYS},
		     {"/dev/", TRACER_SKIP_DEV},   {"/dev", TRACER_SKIP_DEV}};
	unsigned skip = 0;

	for (unsigned i = 0; i < c->n_file_exclude; i++)
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			if (!strcmp(c->file_exclude[i], kinds[k].prefix))
				skip |= kinds[k].kind;
	return skip;
}

struct load_state {
	struct collector_config *c;
	char *err;
	unsigned size;
	const char *path;
};

static int parse_bool(const char *v, bool *out)
{
	if (!strcasecmp(v, "on") || !strcasecmp(v, "yes") || !strcasecmp(v, "true") ||
	    !strcmp(v, "1")) {
		*out = true;
		return 0;
	}
	if (!strcasecmp(v, "off") || !strcasecmp(v, "no") || !strcasecmp(v, "false") ||
	    !strcmp(v, "0")) {
		*out = false;
		return 0;
	}
	return -1;
}

static int parse_uint(const char *v, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || end == v || n < lo || n > hi)
		return -1;
	*out = (unsigned)n;
	return 0;
}

static const char *const collector_sections[] = {"collector", "probes", "files", NULL};

/* inih calls this per key; returning 0 stops with that line's number. */
static int on_entry(void *user, const char *section, const char *name, const char *value)
{
	struct load_state *st = user;
	struct collector_config *c = st->c;
	bool mine;
	const char *why = config_section_check(section, collector_sections, &mine);

	if (!why && !mine)
		return 1; /* another program's section in a shared file */
	if (why) {
		/* A typo'd section would otherwise drop its settings silently. */
		snprintf(st->err, st->size,
			 "%s%s%s%s = %s: %s (the collector reads [collector], [probes], [files])",
			 section[0] ? "[" : "", section, section[0] ? "] " : "", name, value, why);
		return 0;
	}
	if (!strcmp(section, "probes")) {
		int g = probe_group_by_name(name);
		if (g < 0)
			why = "unknown probe group";
		else if (g == PROBE_PROCESS)
			why = "the process probes cannot be turned off";
		else if (parse_bool(value, &c->enabled[g]))
			why = "expected on or off";
	} else if (!strcmp(section, "collector")) {
		if (config_key_is(name, "flush-ms")) {
			if (parse_uint(value, 1, 10000, &c->flush_ms))
				why = "expected 1..10000";
		} else if (config_key_is(name, "ring-mb")) {
			if (parse_uint(value, 1, 1024, &c->ring_mb) ||
			    (c->ring_mb & (c->ring_mb - 1)))
				why = "expected a power of two up to 1024";
		} else if (config_key_is(name, "queue-mb")) {
			if (parse_uint(value, 1, 65536, &c->queue_mb))
				why = "expected 1..65536";
		} else if (config_key_is(name, "scope-pidns")) {
			char detail[400];
			if (pidscope_resolve(value, &c->scope_pidns, detail, sizeof(detail)))
				why =
				    "no such PID namespace with its own /proc (a PID or an inode)";
		} else if (config_key_is(name, "sample-ms") ||
			   config_key_is(name, "sample-interval-ms")) { /* the older name */
			if (parse_uint(value, 100, 3600000, &c->sample_ms))
				why = "expected 100..3600000";
		} else {
			why = "unknown setting";
		}
	} else {
		if (config_key_is(name, "exclude-prefixes")) {
			if (collector_config_set_excludes(c, value))
				why = "at most 16 prefixes of under 32 characters";
		} else if (config_key_is(name, "exclude-shared-libraries")) {
			if (parse_bool(value, &c->exclude_shared_libs))
				why = "expected yes or no";
		} else {
			why = "unknown setting";
		}
	}
	if (why) {
		snprintf(st->err, st->size, "[%s] %s = %s: %s", section, name, value, why);
		return 0;
	}
	return 1;
}

int collector_config_set(struct collector_config *c, const char *section, const char *name,
			 const char *value, char *err, unsigned size)
{
	struct load_state st = {.c = c, .err = err, .size = size, .path = NULL};

	err[0] = '\0';
	return on_entry(&st, section, name, value) ? 0 : -1;
}

int collector_config_load(struct collector_config *c, const char *path, char *err, unsigned size)
{
	struct collector_config copy = *c;
	struct load_state st = {.c = &copy, .err = err, .size = size, .path = path};
	char detail[256] = "";
	int line;

	err[0] = '\0';
	st.err = detail;
	st.size = sizeof(detail);
	line = ini_parse(path, on_entry, &st);
	if (line < 0) {
		snprintf(err, size, "%s: cannot read: %s", path, strerror(errno));
		return -1;
	}
	if (line > 0) {
		snprintf(err, size, "%s:%d: %s", path, line, detail[0] ? detail : "syntax error");
		return -1;
	}
	*c = copy;
	return 0;
}
