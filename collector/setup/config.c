#include "collector/setup/config.h"
#include "collector/setup/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "collector/setup/rules_open.h"
#include "common/paths.h"
#include "common/version.h"

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
	options_defaults(&collector_program, c);
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

#define COLLECTOR_FIELD(member) OPT_FIELD(struct collector_config, member)

/* "process = on" is what it is; off is refused. */
static int parse_process(void *target, const struct opt *o, const char *value, char *why,
			 size_t size)
{
	struct collector_config *c = target;

	if (!strcasecmp(value, "on") || !strcasecmp(value, "yes") || !strcasecmp(value, "true") ||
	    !strcmp(value, "1")) {
		c->enabled[PROBE_PROCESS] = true;
		return 0;
	}
	snprintf(why, size, "the process probes cannot be turned off");
	return -1;
}

/* --enable GROUP, --disable GROUP: the [probes] keys from the command line. */
static int parse_switch(void *target, const struct opt *o, const char *value, char *why,
			size_t size)
{
	struct collector_config *c = target;
	int g = probe_group_by_name(value);
	bool on = !strcmp(o->name, "enable");

	if (g < 0 || (!on && g == PROBE_PROCESS)) {
		snprintf(why, size, g < 0 ? "unknown probe group" : "cannot be disabled");
		return -1;
	}
	c->enabled[g] = on;
	return 0;
}

static int parse_ring_mb(void *target, const struct opt *o, const char *value, char *why,
			 size_t size)
{
	struct collector_config *c = target;
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(value, &end, 10);
	if (errno || end == value || *end || n < 1 || n > 1024 || (n & (n - 1))) {
		snprintf(why, size, "expected a power of two up to 1024");
		return -1;
	}
	c->ring_mb = (unsigned)n;
	return 0;
}

static int parse_pidns(void *target, const struct opt *o, const char *value, char *why, size_t size)
{
	struct collector_config *c = target;
	char detail[400];

	if (pidscope_resolve(value, &c->scope_pidns, detail, sizeof(detail)) == 0)
		return 0;
	snprintf(why, size, "no such PID namespace with its own /proc (a PID or an inode)");
	return -1;
}

static int parse_excludes(void *target, const struct opt *o, const char *value, char *why,
			  size_t size)
{
	if (collector_config_set_excludes(target, value) == 0)
		return 0;
	snprintf(why, size, "at most 16 prefixes of under 32 characters");
	return -1;
}

#define PROBE(group, key_, on, text)                                                               \
	{                                                                                          \
		.section = "probes", .key = key_, .kind = OPT_BOOL, .def = on,                     \
		.offset = COLLECTOR_FIELD(enabled[group]), .help = text                            \
	}

static const struct opt collector_opts[] = {
    {.name = "socket",
     .arg = "PATH",
     .kind = OPT_TEXT,
     .def = TRACER_DEFAULT_SOCKET,
     .offset = COLLECTOR_FIELD(socket_path),
     .help = "the aggregator's socket"},
    {.name = "user",
     .arg = "NAME",
     .kind = OPT_TEXT,
     .offset = COLLECTOR_FIELD(user),
     .shown = TRACER_COLLECTOR_USER ", else nobody",
     .help = "user to become after loading BPF"},
    {.name = "key-file",
     .arg = "PATH",
     .kind = OPT_TEXT,
     .def = TRACER_DEFAULT_KEY,
     .offset = COLLECTOR_FIELD(start.key_file),
     .help = "the collector key, read before dropping root; the aggregator makes it"},
    {.name = "key-fd",
     .arg = "N",
     .kind = OPT_FD,
     .offset = COLLECTOR_FIELD(start.key_fd),
     .help = "read the key from descriptor N instead (tracer run)"},
    {.name = "aggregator-user",
     .arg = "NAME",
     .kind = OPT_TEXT,
     .offset = COLLECTOR_FIELD(start.aggregator_user),
     .shown = TRACER_AGGREGATOR_USER,
     .help = "send only to a listener running as NAME (or root)"},
    {.name = "aggregator-pid",
     .arg = "PID",
     .kind = OPT_UINT,
     .min = 1,
     .max = 4194304,
     .offset = COLLECTOR_FIELD(start.aggregator_pid),
     .help = "send only to a listener that is this process"},
    {.name = "disable",
     .arg = "GROUP",
     .kind = OPT_CALL,
     .parse = parse_switch,
     .help = "turn a probe group off: scheduler, network, oom, reclaim, files, cgroups, "
	     "samples (repeatable; the [probes] keys)"},
    {.name = "enable",
     .arg = "GROUP",
     .kind = OPT_CALL,
     .parse = parse_switch,
     .help = "turn a group on; syscalls is off unless enabled"},
    OPT_LOG_LEVEL,
    {.name = "flush-ms",
     .section = "collector",
     .arg = "N",
     .kind = OPT_UINT,
     .min = 1,
     .max = 10000,
     .def = "200",
     .offset = COLLECTOR_FIELD(flush_ms),
     .help = "drain the kernel buffer and send a frame every N ms while events come"},
    {.name = "sample-ms",
     .section = "collector",
     .alias = "sample-interval-ms",
     .arg = "N",
     .kind = OPT_UINT,
     .min = 100,
     .max = 3600000,
     .def = "1000",
     .offset = COLLECTOR_FIELD(sample_ms),
     .help = "live samples of running processes every N ms"},
    {.name = "ring-mb",
     .section = "collector",
     .arg = "N",
     .kind = OPT_CALL,
     .parse = parse_ring_mb,
     .def = "16",
     .help = "the kernel ring buffer in MiB, a power of two"},
    {.name = "queue-mb",
     .section = "collector",
     .arg = "N",
     .kind = OPT_UINT,
     .min = 1,
     .max = 65536,
     .def = "64",
     .offset = COLLECTOR_FIELD(queue_mb),
     .help = "frames kept while the aggregator is unreachable, in MiB"},
    {.name = "keep-pinned",
     .section = "collector",
     .kind = OPT_BOOL,
     .def = "no",
     .why = "expected yes or no",
     .offset = COLLECTOR_FIELD(keep_pinned),
     .help = "pin the programs and buffers under /sys/fs/bpf/tracer: they stay attached "
	     "when this collector exits, the next one with this socket drains what waited "
	     "and counts what overflowed (docs/operations.md, \"Restarts\")"},
    {.name = "unpin",
     .kind = OPT_FLAG,
     .offset = COLLECTOR_FIELD(start.unpin),
     .help = "remove the pinned programs and buffers of --socket's collector, then exit"},
    {.name = "scope-pidns",
     .section = "collector",
     .arg = "PID|INODE",
     .kind = OPT_CALL,
     .parse = parse_pidns,
     .example = "4026532190",
     .help = "record only the processes of this PID namespace (a PID in it, or its inode) "
	     "and those nested in it, numbered as it numbers them (docs/operations.md, "
	     "\"Scope\"); unset: every process the collector can see"},
    {.name = "ready-fd",
     .arg = "N",
     .kind = OPT_FD,
     .offset = COLLECTOR_FIELD(start.ready_fd),
     .help = "write \"ready\\n\" to fd N once attached and snapshotted"},
    {.name = "exit-with-fd",
     .arg = "N",
     .kind = OPT_FD,
     .offset = COLLECTOR_FIELD(start.lifeline_fd),
     .help = "stop (as on SIGTERM) when fd N hangs up: the process that started us died "
	     "(tracer run passes a pipe)"},
    {.name = "redact-rules",
     .arg = "PATH",
     .kind = OPT_TEXT,
     .offset = COLLECTOR_FIELD(start.redact_rules),
     .shown = REDACT_RULES_DEFAULT " if present, else those built in",
     .help = "per-tool redaction rules; SIGHUP rereads them"},
    {.name = "force-tracepoints",
     .kind = OPT_FLAG,
     .offset = COLLECTOR_FIELD(force_tracepoints),
     .help = "use classic tracepoints even where tp_btf exists"},
    {.name = "force-no-kfunc",
     .kind = OPT_FLAG,
     .offset = COLLECTOR_FIELD(force_no_kfunc),
     .help = "as on Linux 5.5-6.1 (no bpf_rdonly_cast kfunc): exec on its classic tracepoint, "
	     "every open reads its path"},
    {.name = "force-perfbuf",
     .kind = OPT_FLAG,
     .offset = COLLECTOR_FIELD(force_perfbuf),
     .help = "use perf buffers even where ring buffers exist"},
    {.name = "force-net-syscalls",
     .kind = OPT_FLAG,
     .offset = COLLECTOR_FIELD(force_net_syscalls),
     .help = "count network bytes from socket syscalls (the fallback)"},
    {.name = "test-forbidden-syscall",
     .kind = OPT_FLAG,
     .offset = COLLECTOR_FIELD(start.test_forbidden),
     .help = "(tests) make a forbidden syscall once in the steady state: the allow-list must "
	     "kill the process"},
    {.name = "test-powercap-root",
     .arg = "DIR",
     .kind = OPT_TEXT,
     .offset = COLLECTOR_FIELD(start.test_powercap_root),
     .help = "(tests) read RAPL counters from DIR/intel-rapl:N instead of "
	     "/sys/class/powercap"},
    {.section = "probes",
     .key = "process",
     .kind = OPT_CALL,
     .parse = parse_process,
     .def = "on",
     .help = "fork, exec and exit: always on"},
    PROBE(PROBE_SCHEDULER, "scheduler", "on", "I/O wait"),
    PROBE(PROBE_SYSCALLS, "syscalls", "off",
	  "syscall counts by class: a BPF call on every syscall, off by "
	  "default"),
    PROBE(PROBE_NETWORK, "network", "on", "bytes sent and received"),
    PROBE(PROBE_OOM, "oom", "on", "OOM kill victims"),
    PROBE(PROBE_RECLAIM, "reclaim", "on", "direct reclaim time"),
    PROBE(PROBE_FILES, "files", "on", "files opened (paths only)"),
    PROBE(PROBE_CGROUPS, "cgroups", "on", "cgroup creation and removal"),
    PROBE(PROBE_SAMPLES, "samples", "on", "live per-process samples"),
    {.section = "files",
     .key = "exclude-prefixes",
     .kind = OPT_CALL,
     .parse = parse_excludes,
     .def = "/proc/, /sys/, /dev/, /usr/lib/locale/, /usr/share/locale/",
     .help = "paths starting with these are never reported (at most 16, each under 32 "
	     "bytes); with /proc/, /sys/ or /dev/ here the kernel also tells such opens by the "
	     "file (procfs, sysfs, a device node) wherever it is reached, without reading the "
	     "path"},
    {.section = "files",
     .key = "exclude-shared-libraries",
     .kind = OPT_BOOL,
     .def = "yes",
     .why = "expected yes or no",
     .offset = COLLECTOR_FIELD(exclude_shared_libs),
     .help = "shared libraries (*.so, *.so.N, ld.so.cache) are the loader's business: once one "
	     "is seen, later opens of the same file are told apart without the path"},
};

static const struct opt_section collector_sections[] = {
    {.name = "collector"},
    {.name = "probes",
     .comment = "Each group can be turned off; the process probes cannot.",
     .unknown = "unknown probe group"},
    {.name = "files"},
};

const struct opt_program collector_program = {
    .name = "tracer-collector",
    .usage = "tracer-collector [options]",
    .version = TRACER_VERSION,
    .opts = collector_opts,
    .n_opts = sizeof(collector_opts) / sizeof(*collector_opts),
    .sections = collector_sections,
    .n_sections = sizeof(collector_sections) / sizeof(*collector_sections),
    .target_size = sizeof(struct collector_config),
    .default_config = "/etc/tracer/collector.conf",
    .config_header = "# tracer-collector settings (/etc/tracer/collector.conf): what\n"
		     "# `tracer-collector --print-config` prints. Command-line options override\n"
		     "# what is here; keys are spelt as the options (flush-ms or flush_ms).\n"
		     "# Unknown keys are errors.\n",
};

int collector_config_set(struct collector_config *c, const char *section, const char *name,
			 const char *value, char *err, unsigned size)
{
	return options_set_key(&collector_program, section, name, value, c, err, size);
}

int collector_config_load(struct collector_config *c, const char *path, char *err, unsigned size)
{
	return options_load_file(&collector_program, path, c, err, size);
}
