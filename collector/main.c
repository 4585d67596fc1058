/*
 * tracer-collector: the only privileged part of tracer. It loads and attaches
 * the BPF programs, snapshots the processes already running, drops to an
 * unprivileged user, then forwards kernel events as frames to the aggregator.
 * It parses nothing another process sends, except a fixed-size ack.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nng/nng.h>

#include "collector/drain.h"
#include "collector/probes.h"
#include "collector/sender.h"
#include "collector/snapshot.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/privdrop.h"
#include "common/timeutil.h"

#define HEARTBEAT_NS (200 * NSEC_PER_MSEC)
#define SHUTDOWN_GRACE_NS (5 * NSEC_PER_SEC)

struct collector_options {
	const char *socket_path;
	const char *user;
	int ready_fd;
	unsigned flush_ms;
	unsigned queue_mb;
	struct probe_options probes;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	stop_requested = sig;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: tracer-collector [options]\n"
		"  --socket PATH      aggregator socket (default " TRACER_DEFAULT_SOCKET ")\n"
		"  --user NAME        user to become after loading BPF (default " TRACER_COLLECTOR_USER
		", else nobody)\n"
		"  --log-level LEVEL  error, warn, info (default) or debug\n"
		"  --flush-ms N       drain and send every N ms (default 50)\n"
		"  --ring-mb N        kernel ring buffer size in MiB, power of two (default 16)\n"
		"  --queue-mb N       frames kept while the aggregator is away (default 64)\n"
		"  --ready-fd N       write \"ready\\n\" to fd N once attached and snapshotted\n"
		"  --force-tracepoints  use classic tracepoints even where tp_btf exists\n"
		"  --force-perfbuf    use perf buffers even where ring buffers exist\n");
}

static int parse_options(int argc, char **argv, struct collector_options *o)
{
	static const struct option longopts[] = {
		{"socket", required_argument, 0, 's'},	{"user", required_argument, 0, 'u'},
		{"log-level", required_argument, 0, 'l'}, {"flush-ms", required_argument, 0, 'f'},
		{"ring-mb", required_argument, 0, 'r'},	{"queue-mb", required_argument, 0, 'q'},
		{"ready-fd", required_argument, 0, 'R'},	{"force-tracepoints", no_argument, 0, 'T'},
		{"force-perfbuf", no_argument, 0, 'P'},
		{"help", no_argument, 0, 'h'},		{0, 0, 0, 0},
	};
	int c;

	*o = (struct collector_options){.socket_path = TRACER_DEFAULT_SOCKET,
					.ready_fd = -1,
					.flush_ms = 50,
					.queue_mb = 64,
					.probes = {.ring_mb = 16}};
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->socket_path = optarg;
			break;
		case 'u':
			o->user = optarg;
			break;
		case 'l':
			if (log_set_level_name(optarg) != 0) {
				fprintf(stderr, "tracer-collector: unknown log level '%s'\n", optarg);
				return -1;
			}
			break;
		case 'f':
			o->flush_ms = (unsigned)atoi(optarg);
			break;
		case 'r':
			o->probes.ring_mb = (unsigned)atoi(optarg);
			break;
		case 'q':
			o->queue_mb = (unsigned)atoi(optarg);
			break;
		case 'R':
			o->ready_fd = atoi(optarg);
			break;
		case 'T':
			o->probes.force_tracepoints = true;
			break;
		case 'P':
			o->probes.force_perfbuf = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "tracer-collector: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	unsigned mb = o->probes.ring_mb;
	if (mb == 0 || (mb & (mb - 1)) != 0 || mb > 1024 || o->flush_ms == 0 ||
	    o->flush_ms > 10000 || o->queue_mb == 0) {
		fprintf(stderr, "tracer-collector: --ring-mb must be a power of two up to 1024, "
				"--flush-ms 1..10000, --queue-mb at least 1\n");
		return -1;
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

static void signal_ready(int fd)
{
	if (fd < 0)
		return;
	if (write(fd, "ready\n", 6) != 6)
		log_warn("cannot signal readiness on fd %d: %s", fd, strerror(errno));
	close(fd);
}

int main(int argc, char **argv)
{
	struct collector_options opt;
	struct probes probes;
	struct sender sender;
	struct drain drain;
	struct cgroup_mounts mounts;
	struct run_as who;
	int exit_code = 1;

	log_init("tracer-collector");
	if (parse_options(argc, argv, &opt) != 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if (resolve_user(opt.user, &who) != 0)
		return 1;

	if (probes_start(&probes, &opt.probes) != 0)
		return 1;
	if (sender_init(&sender, opt.socket_path, (size_t)opt.queue_mb << 20) != 0)
		goto out_probes;
	if (drain_init(&drain, &probes, &sender) != 0)
		goto out_sender;
	if (probes_attach(&probes) != 0)
		goto out_drain;

	/* Attached first, then /proc: a process can be in both, never in neither. */
	drain_poll(&drain, 0);
	cgroup_mounts_find(&mounts);
	int n = snapshot_processes("/proc", &mounts, drain_add_event, &drain, &drain.conv);
	if (n < 0) {
		log_error("cannot read /proc: %s", strerror(errno));
		goto out_drain;
	}
	drain.snapshot_processes = (uint64_t)n;
	log_info("snapshot: %d processes already running", n);
	drain_poll(&drain, 0);
	drain.snapshot_done_pending = true;
	drain_flush(&drain, false);

	if (drop_privileges(&who) != 0) {
		log_error("refusing to run privileged: privilege drop to %s failed", who.name);
		goto out_drain;
	}
	log_info("running as %s (uid %u); sending to %s", who.name, (unsigned)who.uid,
		 opt.socket_path);
	signal_ready(opt.ready_fd);

	while (!stop_requested) {
		if (drain_poll(&drain, (int)opt.flush_ms) < 0) {
			log_error("ring buffer poll failed");
			break;
		}
		uint64_t now = now_boottime_ns();
		if (drain.batch_events > 0 || now - drain.last_flush_ns >= HEARTBEAT_NS)
			drain_flush(&drain, false);
		sender_pump(&sender);
	}

	log_info("stopping (signal %d): flushing", (int)stop_requested);
	drain_poll(&drain, 0);
	drain_flush(&drain, true);
	uint64_t deadline = now_boottime_ns() + SHUTDOWN_GRACE_NS;
	while (!sender_all_acked(&sender) && now_boottime_ns() < deadline) {
		sender_pump(&sender);
		sleep_ns(5 * NSEC_PER_MSEC);
	}
	if (!sender_all_acked(&sender))
		log_warn("%zu frames not acknowledged at exit", sender.q_count);
	exit_code = sender_all_acked(&sender) ? 0 : 1;
out_drain:
	drain_close(&drain);
out_sender:
	sender_close(&sender);
out_probes:
	probes_stop(&probes);
	nng_fini(); /* pipes are torn down asynchronously: wait for them */
	return exit_code;
}
