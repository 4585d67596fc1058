#include "aggregator/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/receive/peers.h"
#include "aggregator/receive/receiver.h"
#include "common/paths.h"
#include "common/version.h"

#define AGG_FIELD(member) OPT_FIELD(struct aggregator_options, member)
#define TEXT_OF_(x) #x
#define TEXT_OF(x) TEXT_OF_(x)

static int parse_collector_user(void *target, const struct opt *o, const char *value, char *why,
				size_t size)
{
	struct aggregator_options *a = target;

	if (a->n_collector_users == AGGREGATOR_MAX_COLLECTOR_USERS) {
		snprintf(why, size, "at most %d of them", AGGREGATOR_MAX_COLLECTOR_USERS);
		return -1;
	}
	a->collector_users[a->n_collector_users++] = value;
	return 0;
}

static int parse_make_key(void *target, const struct opt *o, const char *value, char *why,
			  size_t size)
{
	exit(peers_make_key(value));
}

static int parse_socket_mode(void *target, const struct opt *o, const char *value, char *why,
			     size_t size)
{
	struct aggregator_options *a = target;
	char *end;
	long mode = strtol(value, &end, 8);

	if (end == value || *end || mode < 0 || mode & ~0777L) {
		snprintf(why, size, "expected octal permissions such as 0660");
		return -1;
	}
	a->socket_mode = (int)mode;
	return 0;
}

static int parse_scope(void *target, const struct opt *o, const char *value, char *why, size_t size)
{
	struct aggregator_options *a = target;

	if (strcmp(value, "all") && strcmp(value, "runs")) {
		snprintf(why, size, "expected all or runs");
		return -1;
	}
	a->scope = strcmp(value, "all") == 0 ? SCOPE_ALL : SCOPE_RUNS;
	return 0;
}

static int parse_scope_cgroup(void *target, const struct opt *o, const char *value, char *why,
			      size_t size)
{
	struct aggregator_options *a = target;

	if (value[0] != '/' || strlen(value) >= sizeof(a->scope_cgroup)) {
		snprintf(why, size, "expected an absolute cgroup path such as /slurm");
		return -1;
	}
	snprintf(a->scope_cgroup, sizeof(a->scope_cgroup), "%s", value);
	return 0;
}

static int parse_host_sample_ms(void *target, const struct opt *o, const char *value, char *why,
				size_t size)
{
	struct aggregator_options *a = target;
	char *end;
	unsigned long ms = strtoul(value, &end, 10);

	if (end == value || *end || value[0] == '-' || (ms && ms < 100) || ms > 4294967295UL) {
		snprintf(why, size, "expected 0, or 100 or more");
		return -1;
	}
	a->host_sample_ms = (unsigned)ms;
	return 0;
}

static int parse_signal(void *target, const struct opt *o, const char *value, char *why,
			size_t size)
{
	struct aggregator_options *a = target;

	return insight_config_set(&a->signals, value, why, size);
}

static int parse_launcher(void *target, const struct opt *o, const char *value, char *why,
			  size_t size)
{
	struct aggregator_options *a = target;
	char *end;
	unsigned long pid = strtoul(value, &end, 10);

	if (*end == ':' && pid > 0 && pid <= 4194304) {
		a->launcher_start_boot_ns = strtoull(end + 1, &end, 10);
		if (!*end) {
			a->launcher_pid = (uint32_t)pid;
			a->has_launcher = true;
			return 0;
		}
	}
	snprintf(why, size, "expected PID:START_NS");
	return -1;
}

static void signal_defaults(void *target)
{
	insight_config_defaults(&((struct aggregator_options *)target)->signals);
}

#define CALL(fn) .kind = OPT_CALL, .parse = fn
#define DAYS_OR_MIB .kind = OPT_UINT, .arg = "N", .max = 1048576

static const struct opt aggregator_opts[] = {
    {.name = "socket",
     .arg = "PATH",
     .kind = OPT_TEXT,
     .def = TRACER_DEFAULT_SOCKET,
     .offset = AGG_FIELD(socket_path),
     .help = "listen here"},
    {.name = "db",
     .arg = "PATH",
     .kind = OPT_TEXT,
     .def = TRACER_DEFAULT_DB,
     .offset = AGG_FIELD(db_path),
     .help = "SQLite database"},
    {.name = "user",
     .arg = "NAME",
     .kind = OPT_TEXT,
     .offset = AGG_FIELD(user),
     .help = "when started as root, run as this user"},
    {.name = "collector-user",
     .arg = "NAME",
     CALL(parse_collector_user),
     .help = "accept frames only from this user (repeatable, at most 4; root always); with "
	     "none, from any connection that holds the key"},
    {.name = "key-file",
     .arg = "PATH",
     .kind = OPT_TEXT,
     .def = TRACER_DEFAULT_KEY,
     .offset = AGG_FIELD(key_file),
     .help = "the collector key, made when missing if started as root (32 bytes, 0600)"},
    {.name = "key-fd",
     .arg = "N",
     .kind = OPT_FD,
     .offset = AGG_FIELD(key_fd),
     .help = "read the key from descriptor N instead (tracer run)"},
    {.name = "make-key",
     .arg = "PATH",
     CALL(parse_make_key),
     .help = "make the key file if missing (as root) and exit"},
    {.name = "socket-group",
     .arg = "GID",
     .kind = OPT_UINT,
     .min = 1,
     .max = 4294967294UL,
     .offset = AGG_FIELD(socket_group),
     .why = "expected a gid",
     .help = "keep this group after dropping to --user (tracer run's socket directory is "
	     "root's, writable by this group)"},
    {.name = "socket-mode",
     .arg = "OCTAL",
     CALL(parse_socket_mode),
     .def = "0660",
     .help = "socket file permissions"},
    {.name = "scope",
     .arg = "all|runs",
     CALL(parse_scope),
     .def = "all",
     .help = "record every process or only those in runs"},
    {.name = "scope-cgroup",
     .section = "scope",
     .key = "cgroup",
     .alias = "scope-cgroup",
     .arg = "PATH",
     CALL(parse_scope_cgroup),
     .example = "/slurm",
     .help = "record only the processes of this cgroup subtree (/slurm, "
	     "/machine.slice/x.scope; docs/operations.md, \"Scope\"), the path as under "
	     "/sys/fs/cgroup/memory (a hybrid host) or the cgroup2 root; unset: every process "
	     "on the host"},
    {.name = "host-sample-ms",
     .arg = "N",
     CALL(parse_host_sample_ms),
     .def = "1000",
     .help = "whole-host samples every N ms (0: off)"},
    {.name = "commit-ms",
     .arg = "N",
     .kind = OPT_UINT,
     .max = 1000,
     .def = TEXT_OF(RECEIVER_COMMIT_EVERY_MS),
     .offset = AGG_FIELD(commit_ms),
     .help = "commit received frames at most every N ms"},
    {.name = "tools-allow",
     .arg = "PATH",
     .kind = OPT_TEXT,
     .offset = AGG_FIELD(tools_allow),
     .shown = "/etc/tracer/tools.allow, else the one beside the program",
     .help = "known tools and categories"},
    {.name = "tools-deny",
     .arg = "PATH",
     .kind = OPT_TEXT,
     .offset = AGG_FIELD(tools_deny),
     .shown = "/etc/tracer/tools.deny, else the one beside the program",
     .help = "programs not recorded"},
    {.name = "signal",
     .arg = "NAME=VALUE",
     CALL(parse_signal),
     .help = "a failure-signal threshold (repeatable; docs/insight.md): stall-seconds, "
	     "io-wait-seconds, io-wait-share, runq-seconds, runq-share, reclaim-seconds, "
	     "near-limit-share, slow-factor, slow-min-extra-seconds, slow-min-history"},
    {.name = "launcher",
     .arg = "PID:START",
     CALL(parse_launcher),
     .help = "record only the run of this `tracer run` (its pid and start, CLOCK_BOOTTIME ns "
	     "as /proc shows it; tracer run's own aggregator); other tracer runs are not runs "
	     "here"},
    {.name = "outbox-mib",
     DAYS_OR_MIB,
     .def = "0",
     .offset = AGG_FIELD(outbox_mib),
     .help = "queue records for the shipper, at most N MiB (0: off)"},
    {.name = "outbox-when",
     .arg = "PATH",
     .kind = OPT_TEXT,
     .offset = AGG_FIELD(outbox_when),
     .help = "... only while PATH exists (the shipper's configuration): no queue nobody reads; "
	     "checked at every commit"},
    {.name = "retain-days",
     DAYS_OR_MIB,
     .def = "30",
     .offset = AGG_FIELD(retain_days),
     .help = "delete finished runs, processes and samples older than N days (0: keep for "
	     "ever)"},
    {.name = "retain-mib",
     DAYS_OR_MIB,
     .def = "4096",
     .offset = AGG_FIELD(retain_mib),
     .help = "then delete the oldest until the data fits in N MiB (0: no bound); never "
	     "undelivered outbox records or anything running"},
    {.name = "retain-check-s",
     DAYS_OR_MIB,
     .min = 1,
     .def = "300",
     .offset = AGG_FIELD(retain_check_s),
     .help = "apply those every N s"},
    {.name = "metrics-file",
     .arg = "PATH",
     .kind = OPT_TEXT,
     .offset = AGG_FIELD(metrics_file),
     .shown = "off",
     .help = "write the health counters (tracer status) every 10 s in Prometheus text "
	     "format, for node_exporter's textfile collector"},
    {.name = "shipper-state",
     .arg = "PATH",
     .kind = OPT_TEXT,
     .def = TRACER_DEFAULT_SHIPPER_STATE,
     .offset = AGG_FIELD(shipper_state),
     .help = "the shipper's state database"},
    OPT_LOG_LEVEL,
    {.name = "ready-fd",
     .arg = "N",
     .kind = OPT_FD,
     .offset = AGG_FIELD(ready_fd),
     .help = "write \"ready\\n\" to fd N once listening"},
    {.name = "exit-with-fd",
     .arg = "N",
     .kind = OPT_FD,
     .offset = AGG_FIELD(lifeline_fd),
     .help = "stop (as on SIGTERM) when fd N hangs up: the process that started us died "
	     "(tracer run passes a pipe)"},
};

static const struct opt_section aggregator_sections[] = {{.name = "scope"}};

const struct opt_program aggregator_program = {
    .name = "tracer-aggregator",
    .usage = "tracer-aggregator [options]",
    .version = TRACER_VERSION,
    .opts = aggregator_opts,
    .n_opts = sizeof(aggregator_opts) / sizeof(*aggregator_opts),
    .sections = aggregator_sections,
    .n_sections = 1,
    .target_size = sizeof(struct aggregator_options),
    .init = signal_defaults,
    .notes = "  SIGHUP rereads the tool lists\n",
    .config_header =
	"# tracer-aggregator settings (/etc/tracer/aggregator.conf, read with --config):\n"
	"# what `tracer-aggregator --print-config` prints. Command-line options override\n"
	"# what is here. Unknown keys are errors.\n",
};
