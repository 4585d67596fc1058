/*
 * Collector settings: defaults, then /etc/tracer/collector.conf (or --config),
 * then command-line options. Every probe group can be switched off.
 */
#ifndef TRACER_COLLECTOR_CONFIG_H
#define TRACER_COLLECTOR_CONFIG_H

#include <stdbool.h>

#include <sys/types.h>

#include "bpf/events.h"
#include "collector/setup/pidscope.h"
#include "common/options.h"

enum probe_group {
	PROBE_PROCESS = 0, /* fork, exec, exit: always on */
	PROBE_SCHEDULER,   /* I/O wait */
	PROBE_SYSCALLS,	   /* syscall counts by class */
	PROBE_NETWORK,	   /* bytes sent and received */
	PROBE_OOM,	   /* OOM kill victims */
	PROBE_RECLAIM,	   /* direct reclaim time */
	PROBE_FILES,	   /* files opened */
	PROBE_CGROUPS,	   /* cgroup creation and removal */
	PROBE_SAMPLES,	   /* live per-process samples */
	PROBE_GROUPS,
};

const char *probe_group_name(enum probe_group g);
/* -1 if unknown. */
int probe_group_by_name(const char *name);

/* How this collector was started: command-line options only. */
struct collector_start {
	const char *key_file;
	int key_fd;
	const char *aggregator_user; /* NULL: TRACER_AGGREGATOR_USER */
	pid_t aggregator_pid;
	int ready_fd;
	int lifeline_fd; /* --exit-with-fd */
	bool test_forbidden;
	const char *test_powercap_root; /* (tests) a fake /sys/class/powercap */
	const char *redact_rules;	/* --redact-rules */
	bool unpin;			/* --unpin: remove the pin set and exit */
};

struct collector_config {
	const char *socket_path;
	const char *user;
	unsigned flush_ms;
	unsigned ring_mb;
	unsigned queue_mb;
	unsigned sample_ms;
	bool enabled[PROBE_GROUPS];
	char file_exclude[TRACER_FILE_PREFIXES][TRACER_FILE_PREFIX_LEN];
	unsigned n_file_exclude;
	bool exclude_shared_libs;
	bool force_tracepoints;
	bool force_no_kfunc; /* what Linux 5.5-6.1 get: no bpf_rdonly_cast kfunc */
	bool force_perfbuf;
	bool force_net_syscalls; /* use the socket-syscall fallback even with sock tracepoints */
	bool keep_pinned;	 /* pin the BPF set, reuse it on start (setup/pins.c) */
	struct pidscope scope_pidns; /* record only this PID namespace (inode 0: all) */
	struct collector_start start;
};

/* Every option and setting of the collector (common/options.h). */
extern const struct opt_program collector_program;

void collector_config_defaults(struct collector_config *c);
/*
 * Reads an INI file. Returns 0, or -1 with a message naming the file, line
 * and problem in err (nothing is half-applied to c on error).
 */
int collector_config_load(struct collector_config *c, const char *path, char *err, unsigned size);
/* Parses "/proc/,/sys/,/dev/" style lists. 0 or -1. */
/* One setting (as in the file), validated the same way: command-line options use it.
 * Returns -1 with the problem in err. */
int collector_config_set(struct collector_config *c, const char *section, const char *name,
			 const char *value, char *err, unsigned size);

int collector_config_set_excludes(struct collector_config *c, const char *list);
/*
 * The excluded prefixes the kernel can tell by the file rather than its path
 * (TRACER_SKIP_*): "/proc/" procfs, "/sys/" sysfs, "/dev/" device nodes.
 */
unsigned file_skip_kinds(const struct collector_config *c);

#endif
