/*
 * tracer-aggregator: unprivileged. Receives frames from the collector on a
 * Unix socket, checks who is connecting, validates everything, correlates
 * processes into runs and writes SQLite. If started as root it prepares its
 * directories and drops to --user before touching the database or socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aggregator/ingest/ingest.h"
#include "aggregator/options.h"
#include "aggregator/outbox/outbox.h"
#include "aggregator/receive/receiver.h"
#include "aggregator/store/dblock.h"
#include "aggregator/store/schema.h"
#include "aggregator/store/store.h"
#include "common/fileutil.h"
#include "common/ipc.h"
#include "common/ipc_auth.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/privdrop.h"
#include "common/sdnotify.h"
#include "common/timeutil.h"

static volatile sig_atomic_t stop_requested, reload_requested;
/* The receiver polls the read end: a signal may land on any of nng's threads. */
static int wake_pipe[2] = {-1, -1};

static void wake_receiver(void)
{
	int saved = errno;

	if (wake_pipe[1] >= 0 && write(wake_pipe[1], "", 1) < 0) {
		/* Full (a wake-up is already pending) or closed: nothing to add. */
	}
	errno = saved;
}

static void on_signal(int sig)
{
	stop_requested = sig;
	wake_receiver();
}

static void on_hup(int sig)
{
	(void)sig;
	reload_requested = 1;
	wake_receiver();
}

/*
 * The tool lists: as given, else /etc/tracer, else the ones shipped beside
 * the binary (a source tree's deploy/etc, an install's share/tracer).
 */
static const char *find_list(const char *given, const char *name, char *buf, size_t size)
{
	char exe[4096], dir[4096];
	ssize_t n;
	const char *rel[] = {"../deploy/etc", "../../deploy/etc", "../share/tracer"};

	if (given)
		return given;
	snprintf(buf, size, "/etc/tracer/%s", name);
	if (access(buf, R_OK) == 0)
		return buf;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	path_dirname(exe, dir, sizeof(dir));
	for (size_t i = 0; i < sizeof(rel) / sizeof(*rel); i++) {
		snprintf(buf, size, "%s/%s/%s", dir, rel[i], name);
		if (access(buf, R_OK) == 0)
			return buf;
	}
	return NULL;
}

/*
 * Beside the socket, the database we write (SOCKET.db): `tracer run` with
 * another --db is refused at once, naming this one. NULL removes it.
 */
static void announce_db(const char *socket_path, const char *db_path)
{
	char path[4200], real[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s.db", socket_path);
	if (!db_path) {
		unlink(path);
		return;
	}
	if (!realpath(db_path, real) || !(f = fopen(path, "we"))) {
		log_warn("cannot write %s: tracer run cannot check its --db", path);
		return;
	}
	fprintf(f, "%s\n", real);
	fclose(f);
}

/* As root: make the directories the unprivileged user will need. */
static int prepare_directory(const char *file, const struct run_as *who, mode_t mode)
{
	char dir[4096];
	struct stat st;

	path_dirname(file, dir, sizeof(dir));
	if (stat(dir, &st) == 0)
		return 0;
	if (mkdir_parents(dir, mode) != 0 || chown(dir, who->uid, who->gid) != 0) {
		log_error("cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* As root: the directories, then the drop to --user (keeping --socket-group). */
static int become_user(const struct aggregator_options *opt)
{
	struct run_as who;
	int needed = run_as_needed(opt->user);

	if (needed <= 0)
		return needed;
	if (run_as_lookup(opt->user, &who) != 0) {
		log_error("unknown user '%s'", opt->user);
		return -1;
	}
	who.extra_group = (gid_t)opt->socket_group;
	if (prepare_directory(opt->db_path, &who, 0750) != 0 ||
	    prepare_directory(opt->socket_path, &who, 0750) != 0)
		return -1;
	if (drop_privileges(&who) != 0) {
		log_error("refusing to run privileged: privilege drop to %s failed", who.name);
		return -1;
	}
	return 0;
}

/* One writer per database: another aggregator's lock is refused. */
static int lock_database(const char *db_path)
{
	pid_t holder;
	int db_lock = dblock_take(db_path, &holder);
	if (db_lock < 0 && (errno == EWOULDBLOCK || holder)) {
		log_error("%s is being written by another tracer-aggregator (pid %d): one "
			  "writer per database; use another --db",
			  db_path, (int)holder);
		return -1;
	}
	if (db_lock < 0) /* a directory we cannot create files in: write, unguarded */
		log_warn("cannot lock %s.lock (%s): a second writer would not be refused", db_path,
			 strerror(errno));
	return 0;
}

/* --outbox-mib: the queue for the shipper, on while --outbox-when's file exists. */
static int open_outbox(struct outbox *outbox, struct store *store,
		       const struct aggregator_options *opt)
{
	if (outbox_open(outbox, store->db, (uint64_t)opt->outbox_mib << 20, opt->shipper_state) !=
	    0)
		return -1;
	store->outbox = outbox_gate_open(opt->outbox_when) ? outbox : NULL;
	if (store->outbox)
		log_info("outbox on: at most %u MiB queued for the shipper", opt->outbox_mib);
	else
		log_info("outbox off: no shipper configured (no %s); on once it exists",
			 opt->outbox_when);
	return 0;
}

/* The tool lists, the scope, the state of runs still going, `tracer run`'s launcher. */
static int start_ingest(struct ingest *ingest, struct store *store,
			const struct aggregator_options *opt)
{
	char allow_buf[4200], deny_buf[4200];
	const char *allow =
	    find_list(opt->tools_allow, "tools.allow", allow_buf, sizeof(allow_buf));
	const char *deny = find_list(opt->tools_deny, "tools.deny", deny_buf, sizeof(deny_buf));
	if (!allow || !deny)
		log_warn("tool lists not found: tools are not categorised%s",
			 deny ? "" : ", system noise is recorded");
	if (ingest_init(ingest, store, opt->scope, allow, deny, &opt->signals) != 0) {
		log_error("cannot start: see the message above");
		return -1;
	}
	if (opt->scope_cgroup[0]) {
		char err[512];
		if (correlate_set_scope_cgroup(&ingest->corr, opt->scope_cgroup, err,
					       sizeof(err)) != 0) {
			log_error("scope: %s", err);
			return -1;
		}
		log_info("scope: only processes in cgroup %s (and under it)", opt->scope_cgroup);
	}
	if (ingest_load_state(ingest) != 0) {
		log_error("cannot load state from %s", opt->db_path);
		return -1;
	}
	if (opt->has_launcher) {
		ingest->own_launcher = true;
		ingest->own_launcher_pid = opt->launcher_pid;
		ingest->own_launcher_start_boot_ns = opt->launcher_start_boot_ns;
	}
	return 0;
}

static void configure_receiver(struct receiver *r, const struct aggregator_options *opt,
			       struct outbox *opened)
{
	r->host_every_ns = (uint64_t)opt->host_sample_ms * NSEC_PER_MSEC;
	r->lifeline_fd = opt->lifeline_fd;
	r->commit_every_ns = (uint64_t)opt->commit_ms * NSEC_PER_MSEC;
	r->retention = (struct retention){.max_age_ns = (int64_t)opt->retain_days * 86400 *
							(int64_t)NSEC_PER_SEC,
					  .max_bytes = (int64_t)opt->retain_mib << 20};
	r->prune_every_ns = (uint64_t)opt->retain_check_s * NSEC_PER_SEC;
	r->metrics_path = opt->metrics_file;
	r->shipper_state = opt->shipper_state;
	r->outbox = opened;
	r->outbox_when = opt->outbox_when;
	/* The first check one period after the start: a restart loop does not prune each time. */
	r->next_prune_ns = now_boottime_ns() + r->prune_every_ns;
	r->reload = &reload_requested;
	r->wake_fd = wake_pipe[0];
}

static void signal_ready(int fd)
{
	if (fd < 0)
		return;
	if (write(fd, "ready\n", 6) != 6)
		log_warn("cannot signal readiness: %s", strerror(errno));
	close(fd);
}

/* Stopped: what is held goes out, then exit (nng left as it is, see below). */
static _Noreturn void stop(struct receiver *r, struct ingest *ingest, struct store *store,
			   struct outbox *opened, const struct aggregator_options *opt,
			   int exit_code)
{
	/* Held samples go out now: a fork child's exec seen by the next aggregator
	 * keeps the pre-exec image as a row of its own. */
	if (store->outbox && outbox_release_held(store->outbox) != 0)
		exit_code = 1;
	sdnotify_stopping();
	log_info("stopped (signal %d); %llu events, %llu bad frames, %llu refused peers",
		 (int)stop_requested, (unsigned long long)ingest->stats.events,
		 (unsigned long long)r->agg.bad_frames, (unsigned long long)r->agg.refused_peers);
	/*
	 * nng is left as it is, not closed nor finished: tearing it down while a
	 * peer's handshake is in flight panics nng 1.5.2 in a task thread
	 * ("pthread_mutex_lock: Invalid argument", about 1 in 1000 stops right
	 * after start-up; closing could also hang, nng#1543). Everything
	 * acknowledged is committed; the kernel closes the connections at exit,
	 * and a collector resends what we did not acknowledge. The receiver stays
	 * allocated: nng's threads may still call into its peer policy.
	 */
	unlink(opt->socket_path);
	announce_db(opt->socket_path, NULL);
	ingest_free(ingest);
	if (opened)
		outbox_close(opened);
	store_close(store);
	exit(exit_code);
}

int main(int argc, char **argv)
{
	struct aggregator_options opt;
	struct store store;
	struct ingest ingest;
	struct receiver receiver;
	uint8_t key[IPC_KEY_LEN];
	int rv, exit_code = 1;

	log_init("tracer-aggregator");
	sdnotify_init();
	/* The database holds every user's command lines: its group (tracer) reads it, no one else.
	 */
	umask(027);
	if (options_parse(&aggregator_program, argc, argv, &opt) != 0)
		return 2;
	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
		log_error("pipe: %s", strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGHUP, on_hup);

	if (peers_load_key(opt.key_file, opt.key_fd, key) != 0)
		return 1;
	if (become_user(&opt) != 0)
		return 1;
	if (lock_database(opt.db_path) != 0)
		return 1;
	if (store_open(&store, opt.db_path) != 0)
		return 1;
	struct outbox outbox, *opened = NULL;
	if (opt.outbox_mib && open_outbox(&outbox, &store, &opt) != 0)
		goto out_store;
	if (opt.outbox_mib)
		opened = &outbox;
	if (start_ingest(&ingest, &store, &opt) != 0)
		goto out_store;
	receiver_init(&receiver, &ingest, &store);
	peers_init(&receiver.peers, key);
	memset(key, 0, sizeof(key));
	configure_receiver(&receiver, &opt, opened);
	if (peers_allow_users(opt.collector_users, opt.n_collector_users, &receiver.policy) != 0)
		goto out_ingest;
	rv = ipc_listen(&receiver.server, opt.socket_path, opt.socket_mode, &receiver.policy);
	if (rv != 0) {
		log_error("cannot listen on %s: %s", opt.socket_path, nng_strerror(rv));
		goto out_ingest;
	}
	log_info("listening on %s, writing %s (schema v%d, scope %s)", opt.socket_path, opt.db_path,
		 schema_latest_version(), opt.scope == SCOPE_ALL ? "all" : "runs");
	announce_db(opt.socket_path, opt.db_path);
	signal_ready(opt.ready_fd);
	sdnotify_ready();
	exit_code = receiver_run(&receiver, &stop_requested) == 0 ? 0 : 1;
	stop(&receiver, &ingest, &store, opened, &opt, exit_code);
out_ingest:
	ingest_free(&ingest);
out_store:
	if (opened)
		outbox_close(opened);
	store_close(&store);
	nng_fini(); /* not listening yet: nothing of nng is in flight */
	return exit_code;
}
