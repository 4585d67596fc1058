/*
 * tracer-collector: the only privileged part of tracer. It loads and attaches
 * the BPF programs, snapshots the processes already running, drops to an
 * unprivileged user, then forwards kernel events as frames to the aggregator.
 * It parses nothing another process sends, except a fixed-size ack.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nng/nng.h>

#include "collector/run.h"
#include "collector/setup/rules_open.h"
#include "common/fileutil.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/privdrop.h"
#include "common/sdnotify.h"
#include "common/timeutil.h"
#include "common/version.h"

#define DEFAULT_CONFIG "/etc/tracer/collector.conf"

/*
 * The redaction rules file, opened now, as root, and kept open; it is read
 * after the privilege drop (load_redact_rules), and SIGHUP rereads it from the
 * same descriptor (rules_file.c). Rules named on the command line must open;
 * the default file may be missing (the built-in rules then apply).
 */
static int open_redact_rules(struct redact_rules_file *f, const char *given)
{
	char buf[4200], err[600];
	const char *path = given ? given : redact_rules_file_find(buf, sizeof(buf));

	f->fd = -1;
	f->rules = NULL;
	if (path && redact_rules_file_open_fd(f, path, err, sizeof(err)) < 0) {
		log_error("redaction rules: %s", err);
		return -1;
	}
	return 0;
}

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: tracer-collector [options]\n"
	    "  --config PATH      settings file (default " DEFAULT_CONFIG " if present)\n"
	    "  --socket PATH      aggregator socket (default " TRACER_DEFAULT_SOCKET ")\n"
	    "  --user NAME        user to become after loading BPF (default " TRACER_COLLECTOR_USER
	    ", else nobody)\n"
	    "  --key-file PATH    the collector key, read before dropping root (default\n"
	    "                     " TRACER_DEFAULT_KEY "; the aggregator makes it)\n"
	    "  --key-fd N         read the key from descriptor N instead (tracer run)\n"
	    "  --aggregator-user NAME  send only to a listener running as NAME (or root;\n"
	    "                     default " TRACER_AGGREGATOR_USER ")\n"
	    "  --aggregator-pid PID    send only to a listener that is this process\n"
	    "  --disable GROUP    turn a probe group off: scheduler, network, oom, reclaim,\n"
	    "                     files, cgroups, samples (repeatable)\n"
	    "  --enable GROUP     turn a group on; syscalls is off unless enabled\n"
	    "  --log-level LEVEL  error, warn, info (default) or debug\n"
	    "  --version          print the version and exit\n"
	    "  --flush-ms N       a frame every N ms while events come (default 200)\n"
	    "  --sample-ms N      live process samples every N ms (default 1000)\n"
	    "  --ring-mb N        kernel ring buffer size in MiB, power of two (default 16)\n"
	    "  --queue-mb N       frames kept while the aggregator is away (default 64)\n"
	    "  --ready-fd N       write \"ready\\n\" to fd N once attached and snapshotted\n"
	    "  --exit-with-fd N   stop (as on SIGTERM) when fd N hangs up: the process\n"
	    "                     that started us died (tracer run passes a pipe)\n"
	    "  --redact-rules PATH  per-tool redaction rules (default " REDACT_RULES_DEFAULT "\n"
	    "                     if present, else those built in); SIGHUP rereads them\n"
	    "  --force-tracepoints  use classic tracepoints even where tp_btf exists\n"
	    "  --force-no-kfunc   as on Linux 5.5-6.1 (no bpf_rdonly_cast kfunc): exec on\n"
	    "                     its classic tracepoint, every open reads its path\n"
	    "  --force-perfbuf    use perf buffers even where ring buffers exist\n"
	    "  --force-net-syscalls  count network bytes from socket syscalls (the fallback)\n"
	    "  --scope-pidns PID|INODE  record only the processes of this PID namespace (and\n"
	    "                     those nested in it), numbered as it numbers them\n"
	    "  --test-forbidden-syscall  (tests) make a forbidden syscall once in the steady\n"
	    "                     state: the allow-list must kill the process\n");
}

struct cli {
	const char *config;
	const char *key_file;
	int key_fd;
	const char *aggregator_user;
	pid_t aggregator_pid;
	int ready_fd;
	int lifeline_fd; /* --exit-with-fd */
	bool test_forbidden;
	const char *redact_rules; /* --redact-rules */
};

/* Two passes: the config file first (so the command line wins), then options. */
/* The config-file key behind a numeric option: one validation for both. */
static const char *setting_of_option(int opt)
{
	switch (opt) {
	case 'f':
		return "flush_ms";
	case 'S':
		return "sample_interval_ms";
	case 'r':
		return "ring_mb";
	default:
		return "queue_mb";
	}
}

static int parse_fd(const char *text)
{
	char *end;
	long fd;

	errno = 0;
	fd = strtol(text, &end, 10);
	return errno || end == text || *end || fd < 0 || fd > INT32_MAX ? -1 : (int)fd;
}

static int parse_options(int argc, char **argv, struct collector_config *c, struct cli *cli)
{
	static const struct option longopts[] = {
	    {"config", required_argument, 0, 'c'},
	    {"socket", required_argument, 0, 's'},
	    {"user", required_argument, 0, 'u'},
	    {"key-file", required_argument, 0, 'k'},
	    {"key-fd", required_argument, 0, 'K'},
	    {"aggregator-user", required_argument, 0, 'a'},
	    {"aggregator-pid", required_argument, 0, 'A'},
	    {"disable", required_argument, 0, 'D'},
	    {"enable", required_argument, 0, 'E'},
	    {"log-level", required_argument, 0, 'l'},
	    {"flush-ms", required_argument, 0, 'f'},
	    {"sample-ms", required_argument, 0, 'S'},
	    {"ring-mb", required_argument, 0, 'r'},
	    {"queue-mb", required_argument, 0, 'q'},
	    {"ready-fd", required_argument, 0, 'R'},
	    {"exit-with-fd", required_argument, 0, 'W'},
	    {"redact-rules", required_argument, 0, 'J'},
	    {"force-tracepoints", no_argument, 0, 'T'},
	    {"force-no-kfunc", no_argument, 0, 'x'},
	    {"force-perfbuf", no_argument, 0, 'P'},
	    {"force-net-syscalls", no_argument, 0, 'N'},
	    {"scope-pidns", required_argument, 0, 'p'},
	    {"test-forbidden-syscall", no_argument, 0, 'X'},
	    {"help", no_argument, 0, 'h'},
	    {"version", no_argument, 0, 'V'},
	    {0, 0, 0, 0},
	};
	char err[512];
	int opt;

	collector_config_defaults(c);
	cli->config = NULL;
	cli->key_file = TRACER_DEFAULT_KEY;
	cli->key_fd = -1;
	cli->aggregator_user = NULL;
	cli->aggregator_pid = 0;
	cli->ready_fd = -1;
	cli->lifeline_fd = -1;
	cli->test_forbidden = false;
	cli->redact_rules = NULL;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (opt == 'c')
			cli->config = optarg;
		if (opt == 'h') {
			usage(stdout);
			exit(0);
		}
		if (opt == 'V') {
			printf("tracer-collector %s\n", TRACER_VERSION);
			exit(0);
		}
		if (opt == '?') {
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "tracer-collector: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	const char *path = cli->config ? cli->config : DEFAULT_CONFIG;
	if ((cli->config || access(path, F_OK) == 0) &&
	    collector_config_load(c, path, err, sizeof(err)) != 0) {
		fprintf(stderr, "tracer-collector: %s\n", err);
		return -1;
	}
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		int g;
		switch (opt) {
		case 's':
			c->socket_path = optarg;
			break;
		case 'J':
			cli->redact_rules = optarg;
			break;
		case 'u':
			c->user = optarg;
			break;
		case 'k':
			cli->key_file = optarg;
			break;
		case 'a':
			cli->aggregator_user = optarg;
			break;
		case 'K':
		case 'A': {
			int n = parse_fd(optarg);
			if (n < 0 || (opt == 'A' && n == 0)) {
				fprintf(stderr, "tracer-collector: --%s: bad number '%s'\n",
					opt == 'K' ? "key-fd" : "aggregator-pid", optarg);
				return -1;
			}
			*(opt == 'K' ? &cli->key_fd : &cli->aggregator_pid) = n;
			break;
		}
		case 'D':
			g = probe_group_by_name(optarg);
			if (g <= PROBE_PROCESS) {
				fprintf(stderr, "tracer-collector: cannot disable '%s'\n", optarg);
				return -1;
			}
			c->enabled[g] = false;
			break;
		case 'E':
			g = probe_group_by_name(optarg);
			if (g < 0) {
				fprintf(stderr, "tracer-collector: unknown probe group '%s'\n",
					optarg);
				return -1;
			}
			c->enabled[g] = true;
			break;
		case 'l':
			if (log_set_level_name(optarg) != 0) {
				fprintf(stderr, "tracer-collector: unknown log level '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'f':
		case 'S':
		case 'r':
		case 'q':
			if (collector_config_set(c, "collector", setting_of_option(opt), optarg,
						 err, sizeof(err)) != 0) {
				fprintf(stderr, "tracer-collector: %s\n", err);
				return -1;
			}
			break;
		case 'R':
			cli->ready_fd = parse_fd(optarg);
			if (cli->ready_fd < 0) {
				fprintf(stderr,
					"tracer-collector: --ready-fd: bad descriptor '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'W':
			cli->lifeline_fd = parse_fd(optarg);
			if (cli->lifeline_fd < 0) {
				fprintf(stderr,
					"tracer-collector: --exit-with-fd: bad descriptor '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'T':
			c->force_tracepoints = true;
			break;
		case 'x':
			c->force_no_kfunc = true;
			break;
		case 'P':
			c->force_perfbuf = true;
			break;
		case 'N':
			c->force_net_syscalls = true;
			break;
		case 'X':
			cli->test_forbidden = true;
			break;
		case 'p':
			if (collector_config_set(c, "collector", "scope-pidns", optarg, err,
						 sizeof(err)) != 0) {
				fprintf(stderr, "tracer-collector: --%s\n", err);
				return -1;
			}
			break;
		default:
			break;
		}
	}
	return 0;
}

static int resolve_user(const char *requested, struct run_as *who)
{
	if (requested) {
		if (run_as_lookup(requested, who) != 0) {
			log_error("unknown user '%s'", requested);
			return -1;
		}
		return 0;
	}
	if (run_as_lookup(TRACER_COLLECTOR_USER, who) == 0 || run_as_lookup("nobody", who) == 0)
		return 0;
	log_error("neither %s nor nobody exists; pass --user", TRACER_COLLECTOR_USER);
	return -1;
}

/* As root, before the drop: the key, and whom frames may go to. */
static int resolve_trust(const struct cli *cli, struct sender_trust *t)
{
	struct run_as agg;
	char err[512];
	const char *user = cli->aggregator_user ? cli->aggregator_user : TRACER_AGGREGATOR_USER;

	memset(t, 0, sizeof(*t));
	t->listener_pid = cli->aggregator_pid;
	if (!t->listener_pid) {
		if (run_as_lookup(user, &agg) != 0) {
			log_error(
			    "no user '%s' to expect on the socket: pass --aggregator-user NAME "
			    "(the aggregator's --user)",
			    user);
			return -1;
		}
		t->listener_uid = agg.uid;
	}
	if ((cli->key_fd >= 0 ? ipc_key_read_fd(cli->key_fd, t->key, err, sizeof(err))
			      : ipc_key_read_file(cli->key_file, t->key, err, sizeof(err))) != 0) {
		/* Made by the aggregator, not here: the less root does, the better. */
		log_error("%s (the aggregator makes it when it starts as root; or run "
			  "`tracer-aggregator --make-key PATH`)",
			  err);
		return -1;
	}
	return 0;
}

static void signal_ready(int fd)
{
	if (fd < 0)
		return;
	if (write(fd, "ready\n", 6) != 6)
		log_warn("cannot signal readiness on fd %d: %s", fd, strerror(errno));
	close(fd);
}

/*
 * As root, until drop_privileges: the user to become, the key, the rules
 * file's descriptor, the BPF programs loaded and attached, the perf buffers
 * and the snapshot iterator. Nothing here reads what another process wrote
 * (test/lint/root_window.py checks it, and the lines it takes).
 */
int main(int argc, char **argv)
{
	static struct collector c;
	struct cli cli;
	int exit_code = 1;

	log_init("tracer-collector");
	if (parse_options(argc, argv, &c.cfg, &cli) != 0)
		return 2;
	c.lifeline_fd = cli.lifeline_fd;
	collector_signals();
	if (resolve_user(c.cfg.user, &c.who) != 0 || resolve_trust(&cli, &c.trust) != 0)
		return 1;
	if (open_redact_rules(&c.rules, cli.redact_rules) != 0)
		return 1;
	if (probes_start(&c.probes, &c.cfg) != 0)
		return 1;
	/* nng's threads start with the dial: with an empty bounding set, as ours ends. */
	privdrop_empty_bounding_set();
	int rc = sender_connect(&c.sender, c.cfg.socket_path, &c.trust);
	memset(&c.trust, 0, sizeof(c.trust));
	if (rc != 0)
		goto out_probes;
	if (drain_init(&c.drain, &c.probes, &c.sender) != 0)
		goto out_sender;
	if (probes_attach(&c.probes) != 0)
		goto out_drain;
	c.snapshot_fd = probes_snapshot_open(&c.probes);
	if (drop_privileges(&c.who) != 0) {
		log_error("refusing to run privileged: privilege drop to %s failed", c.who.name);
		goto out_drain;
	}
	if (collector_start_unprivileged(&c) != 0)
		goto out_drain;
	signal_ready(cli.ready_fd);
	sdnotify_ready();
	if (cli.test_forbidden) {
		/* Opening a file is not on the list: this must not return. */
		int fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
		log_error("the forbidden open() returned %d: the allow-list is not enforced", fd);
		goto out_drain;
	}
	exit_code = collector_flush_at_exit(&c, collector_run(&c));
out_drain:
	drain_close(&c.drain);
out_sender:
	if (sender_close(&c.sender) != 0) {
		/* nng's threads still hold our memory: stop the probes and leave now. */
		log_warn("the IPC socket did not close within %u ms (nng#1543); exiting without it",
			 SENDER_CLOSE_TIMEOUT_MS);
		probes_stop(&c.probes);
		_exit(exit_code);
	}
out_probes:
	probes_stop(&c.probes);
	nng_fini(); /* pipes are torn down asynchronously: wait for them */
	return exit_code;
}
