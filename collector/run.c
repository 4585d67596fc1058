/*
 * The collector's life after the privilege drop (main.c does what needs
 * root): connect, read both snapshots and the rules, enter the syscall
 * allow-list, then the loop that drains the kernel and sends frames, and the
 * last frames at exit. Nothing here runs as root.
 */
#include "collector/run.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "collector/convert/snapshot.h"
#include "collector/redact/rules_file.h"
#include "collector/setup/sandbox.h"
#include "common/fileutil.h"
#include "common/log.h"
#include "common/sdnotify.h"
#include "common/timeutil.h"

/*
 * An empty frame still costs the aggregator a commit (~12 KiB written), so an
 * idle collector sends one a second. The tick after a frame with events sends
 * one too: its watermark says those events are complete (`tracer run` waits for
 * it) without waiting for the heartbeat.
 */
#define HEARTBEAT_NS (1000 * NSEC_PER_MSEC)
#define SHUTDOWN_GRACE_NS (5 * NSEC_PER_SEC)
/* Our starter died: its aggregator takes our last frames for a second, then stops too. */
#define ORPHAN_GRACE_NS (NSEC_PER_SEC)

static volatile sig_atomic_t stop_requested, hup_received, flush_requested;

/* SIGHUP (e.g. `pkill -HUP tracer`) rereads the redaction rules; it must not
 * kill the collector, which holds no privilege to re-attach probes, so probe
 * settings change on restart; say so. */
static void on_hup(int sig)
{
	(void)sig;
	hup_received = 1;
}

/* Unprivileged: the rules file opened before the drop, parsed now. It may not be broken. */
static int load_redact_rules(struct redact_rules_file *f)
{
	char err[600];

	if (f->fd < 0) {
		log_warn("no %s: redacting with the %u rules built in", REDACT_RULES_DEFAULT,
			 redact_rules_count(redact_rules_builtin()));
		return 0;
	}
	int r = redact_rules_file_reload(f, err, sizeof(err));
	if (r < 0) {
		log_error("redaction rules: %s", err);
		return -1;
	}
	log_info("redaction rules: %u from %s", redact_rules_count(f->rules), f->path);
	return 0;
}

static void reload_redact_rules(struct redact_rules_file *f)
{
	char err[600];

	if (f->fd < 0) {
		log_info("SIGHUP: no redaction rules file to reread; probe settings apply on "
			 "restart");
		return;
	}
	int r = redact_rules_file_reload(f, err, sizeof(err));
	if (r < 0)
		log_error("SIGHUP: %s", err);
	else if (r > 0)
		log_warn("SIGHUP: %s", err);
	if (r >= 0)
		log_info("SIGHUP: %u redaction rules reread from %s; probe settings apply on "
			 "restart",
			 redact_rules_count(f->rules), f->path);
}

static void on_signal(int sig)
{
	stop_requested = sig;
}

/* SIGUSR1: send what the kernel has now, without waiting for the next flush
 * (`tracer run` asks when its command ended, to report sooner). */
static void on_flush(int sig)
{
	(void)sig;
	flush_requested = 1;
}

/* Existing cgroups: walked unprivileged, before the allow-list (it has no open). */
static void snapshot_existing_cgroups(struct collector *c)
{
	struct cgroup_mounts mounts;

	if (c->probes.status[PROBE_CGROUPS].state != PROBE_ACTIVE)
		return;
	cgroup_mounts_find(&mounts);
	int groups = snapshot_cgroups(&mounts, drain_add_event, &c->drain);
	if (groups < 0)
		log_warn("cannot walk the cgroup hierarchies");
	else
		log_info("snapshot: %d cgroups", groups);
}

/* The processes already running: the iterator root created, read now, converted as events. */
static void snapshot_running_processes(struct collector *c)
{
	c->snapshot_fd = probes_snapshot_open(&c->probes);
	int n = c->snapshot_fd < 0 ? 0
				   : snapshot_read_processes(c->snapshot_fd, c->probes.attached_ns,
							     drain_add_record, &c->drain);
	if (n < 0) {
		log_warn("the snapshot of running processes failed: %s", strerror(errno));
		n = 0;
	}
	if (c->snapshot_fd >= 0)
		close(c->snapshot_fd);
	c->snapshot_fd = -1;
	probes_snapshot_close(&c->probes);
	c->drain.snapshot_processes = (uint64_t)n;
	log_info("snapshot: %d processes already running", n);
}

int collector_start_unprivileged(struct collector *c)
{
	sdnotify_init();
	probes_describe(&c->probes);
	if (sender_start(&c->sender, (size_t)c->cfg.queue_mb << 20) != 0)
		return -1;
	handover_begin(&c->sender, probes_handover(&c->probes), c->probes.reusing);
	if (drain_start(&c->drain) != 0)
		return -1;
	const struct probe_status *st = c->probes.status;
	convert_set_groups((struct convert_groups){
	    .scheduler = st[PROBE_SCHEDULER].state == PROBE_ACTIVE,
	    .syscalls = st[PROBE_SYSCALLS].state == PROBE_ACTIVE,
	    .network = st[PROBE_NETWORK].state == PROBE_ACTIVE,
	    .reclaim = st[PROBE_RECLAIM].state == PROBE_ACTIVE,
	});
	/* Attached before the snapshots: a process can be in both, never in neither. */
	drain_poll(&c->drain, 0, -1);
	snapshot_existing_cgroups(c);
	c->energy.rapl = &c->rapl;
	if (c->rapl.n)
		c->drain.rapl_read_failures = &c->energy.read_errors;
	else
		log_info("RAPL: no powercap energy counters (energy is estimated: docs/energy.md)");
	if (sandbox_enter() != 0) {
		log_error("refusing to run without the syscall allow-list");
		return -1;
	}
	log_info("running as %s (uid %u), syscall allow-list %s; sending to %s", c->who.name,
		 (unsigned)c->who.uid, sandbox_active() ? "on" : "off", c->cfg.socket_path);
	if (load_redact_rules(&c->rules) != 0)
		return -1;
	snapshot_running_processes(c);
	drain_poll(&c->drain, 0, -1);
	c->drain.snapshot_done_pending = true;
	drain_flush(&c->drain, false);
	return 0;
}

bool collector_run(struct collector *c)
{
	struct drain *drain = &c->drain;
	const uint64_t flush_ns = (uint64_t)c->cfg.flush_ms * NSEC_PER_MSEC;
	uint64_t next_sample = now_boottime_ns();

	while (!stop_requested) {
		sdnotify_watchdog(now_boottime_ns());
		if (fd_hung_up(c->lifeline_fd)) {
			log_warn("the process that started us is gone: stopping");
			stop_requested = SIGTERM;
			return true;
		}
		if (hup_received) {
			hup_received = 0;
			reload_redact_rules(&c->rules);
		}
		uint64_t now = now_boottime_ns();
		if (drain_poll(drain, drain_wait_ms(drain, now, flush_ns),
			       sender_wake_fd(&c->sender)) < 0) {
			log_error("ring buffer poll failed");
			break;
		}
		now = now_boottime_ns();
		if (now >= next_sample) {
			if (probes_sample(&c->probes, drain_add_sample, drain) < 0)
				log_warn("process sampling failed: %s", strerror(errno));
			energy_sample(&c->energy, now, drain_add_event, drain);
			next_sample = now + (uint64_t)c->cfg.sample_ms * NSEC_PER_MSEC;
		}
		bool asked = flush_requested;
		flush_requested = 0;
		if (asked || drain_flush_due(drain, now, flush_ns) ||
		    now - drain->last_flush_ns >= HEARTBEAT_NS)
			drain_flush(drain, false);
		sender_pump(&c->sender);
	}
	return false;
}

int collector_flush_at_exit(struct collector *c, bool orphaned)
{
	struct sender *sender = &c->sender;

	log_info("stopping (signal %d): flushing", (int)stop_requested);
	sdnotify_stopping();
	drain_poll(&c->drain, 0, -1);
	drain_flush(&c->drain, true);
	uint64_t deadline = now_boottime_ns() + (orphaned ? ORPHAN_GRACE_NS : SHUTDOWN_GRACE_NS);
	while (!sender_all_acked(sender) && now_boottime_ns() < deadline) {
		sender_pump(sender);
		/* Back as soon as nng takes more of a backlog; else wait a little for acks. */
		struct pollfd wake = {.fd = sender_wake_fd(sender), .events = POLLIN};
		poll(&wake, 1, 5);
	}
	if (!sender_all_acked(sender))
		log_warn("%zu frames not acknowledged at exit", sender->q_count);
	return sender_all_acked(sender) ? 0 : 1;
}

void collector_signals(void)
{
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGHUP, on_hup);
	signal(SIGUSR1, on_flush);
}
