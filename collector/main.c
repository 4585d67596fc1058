/*
 * tracer-collector: the only privileged part of tracer. It loads and attaches
 * the BPF programs, snapshots the processes already running, drops to an
 * unprivileged user, then forwards kernel events as frames to the aggregator.
 * It parses nothing another process sends, except a fixed-size ack.
 */
#include <errno.h>
#include <fcntl.h>
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
static int resolve_trust(const struct collector_start *cli, struct sender_trust *t)
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
	int exit_code = 1;

	log_init("tracer-collector");
	/* The options and /etc/tracer/collector.conf: setup/config.c's table. */
	if (options_parse(&collector_program, argc, argv, &c.cfg) != 0)
		return 2;
	const struct collector_start *start = &c.cfg.start;
	if (start->unpin) /* every set of this socket's collector, then exit */
		return pins_ready(&c.probes, c.cfg.socket_path)
			   ? pins_remove(&c.probes, NULL, "--unpin")
			   : 1;
	c.lifeline_fd = start->lifeline_fd;
	collector_signals();
	if (resolve_user(c.cfg.user, &c.who) != 0 || resolve_trust(start, &c.trust) != 0)
		return 1;
	if (open_redact_rules(&c.rules, start->redact_rules) != 0)
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
	probes_snapshot_attach(&c.probes);
	rapl_open(&c.rapl, start->test_powercap_root);
	if (drop_privileges(&c.who) != 0) {
		log_error("refusing to run privileged: privilege drop to %s failed", c.who.name);
		goto out_drain;
	}
	if (collector_start_unprivileged(&c) != 0)
		goto out_drain;
	signal_ready(start->ready_fd);
	sdnotify_ready();
	if (start->test_forbidden) {
		/* Opening a file is not on the list: this must not return. */
		int fd = open("/etc/hostname", O_RDONLY | O_CLOEXEC);
		log_error("the forbidden open() returned %d: the allow-list is not enforced", fd);
		goto out_drain;
	}
	exit_code = collector_flush_at_exit(&c, collector_run(&c));
out_drain:
	rapl_close(&c.rapl);
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
