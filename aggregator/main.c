/*
 * tracer-aggregator: unprivileged. Receives frames from the collector on a
 * Unix socket, checks who is connecting, validates everything, correlates
 * processes into runs and writes SQLite. If started as root it prepares its
 * directories and drops to --user before touching the database or socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aggregator/ingest/ingest.h"
#include "aggregator/outbox/outbox.h"
#include "aggregator/receive/receiver.h"
#include "aggregator/scope_config.h"
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
#include "common/version.h"

struct aggregator_options {
	const char *socket_path;
	const char *db_path;
	const char *user;
	const char *collector_users[4];
	unsigned n_collector_users;
	int socket_mode;
	const char *key_file;	    /* the collector key (common/ipc_auth.h) */
	int key_fd;		    /* or from this descriptor (tracer run) */
	unsigned long socket_group; /* kept beside --user's groups (tracer run), or 0 */
	int ready_fd;
	int lifeline_fd; /* --exit-with-fd */
	enum ingest_scope scope;
	struct scope_setting scope_set; /* [scope] of --config, then --scope-cgroup */
	const char *scope_cgroup_arg;
	unsigned host_sample_ms;
	unsigned commit_ms;
	const char *tools_allow, *tools_deny;
	struct insight_config signals;
	unsigned outbox_mib;	 /* 0: no shipping */
	const char *outbox_when; /* queue only while this file (the shipper's config) exists */
	unsigned retain_days, retain_mib, retain_check_s; /* 0: no limit */
	const char *metrics_file;
	const char *shipper_state;
	/* `tracer run`'s own aggregator: the one launcher whose run it records. */
	bool has_launcher;
	uint32_t launcher_pid;
	uint64_t launcher_start_boot_ns;
};

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

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: tracer-aggregator [options]\n"
	    "  --socket PATH          listen here (default " TRACER_DEFAULT_SOCKET ")\n"
	    "  --db PATH              SQLite database (default " TRACER_DEFAULT_DB ")\n"
	    "  --user NAME            when started as root, run as this user\n"
	    "  --collector-user NAME  accept frames only from this user (repeatable; root\n"
	    "                         always); with none, from any connection that holds the key\n"
	    "  --key-file PATH        the collector key (default " TRACER_DEFAULT_KEY ",\n"
	    "                         made when missing if started as root; 32 bytes, 0600)\n"
	    "  --key-fd N             read the key from descriptor N instead (tracer run)\n"
	    "  --make-key PATH        make the key file if missing (as root) and exit\n"
	    "  --socket-group GID     keep this group after dropping to --user (tracer run's\n"
	    "                         socket directory is root's, writable by this group)\n"
	    "  --socket-mode OCTAL    socket file permissions (default 0660)\n"
	    "  --scope all|runs       record every process (default) or only those in runs\n"
	    "  --scope-cgroup PATH    record only processes of this cgroup subtree (/slurm,\n"
	    "                         /machine.slice/x.scope; docs/operations.md)\n"
	    "  --config PATH          settings file with a [scope] section (cgroup = PATH)\n"
	    "  --host-sample-ms N     whole-host samples every N ms (default 1000; 0: off)\n"
	    "  --commit-ms N          commit received frames at most every N ms (default "
	    "%d; 0..1000)\n"
	    "  --tools-allow PATH     known tools and categories (default "
	    "/etc/tracer/tools.allow)\n"
	    "  --tools-deny PATH      programs not recorded (default /etc/tracer/tools.deny)\n"
	    "  SIGHUP rereads the tool lists\n"
	    "  --signal NAME=VALUE    a failure-signal threshold (repeatable; docs/insight.md):\n"
	    "                         stall-seconds, io-wait-seconds, io-wait-share, "
	    "runq-seconds,\n"
	    "                         runq-share, reclaim-seconds, near-limit-share, slow-factor,\n"
	    "                         slow-min-extra-seconds, slow-min-history\n"
	    "  --launcher PID:START   record only the run of this `tracer run` (its pid and\n"
	    "                         start, CLOCK_BOOTTIME ns as /proc shows it; tracer run's\n"
	    "                         own aggregator); other tracer runs are not runs here\n"
	    "  --outbox-mib N         queue records for the shipper, at most N MiB (0: off)\n"
	    "  --outbox-when PATH     ... only while PATH exists (the shipper's configuration):\n"
	    "                         no queue nobody reads; checked at every commit\n"
	    "  --retain-days N        delete finished runs, processes and samples older than\n"
	    "                         N days (default 30; 0: keep for ever)\n"
	    "  --retain-mib N         then delete the oldest until the data fits in N MiB\n"
	    "                         (default 4096; 0: no bound); never undelivered outbox\n"
	    "                         records or anything running\n"
	    "  --retain-check-s N     apply those every N s (default 300)\n"
	    "  --metrics-file PATH    write the health counters (tracer status) every 10 s\n"
	    "                         in Prometheus text format, for node_exporter's\n"
	    "                         textfile collector (default: off)\n"
	    "  --shipper-state PATH   the shipper's state database "
	    "(default " TRACER_DEFAULT_SHIPPER_STATE ")\n"
	    "  --log-level LEVEL      error, warn, info (default) or debug\n"
	    "  --version              print the version and exit\n"
	    "  --ready-fd N           write \"ready\\n\" to fd N once listening\n"
	    "  --exit-with-fd N       stop (as on SIGTERM) when fd N hangs up: the process\n"
	    "                         that started us died (tracer run passes a pipe)\n",
	    RECEIVER_COMMIT_EVERY_MS);
}

/* A descriptor number given on the command line, or -1. */
static int descriptor(const char *text)
{
	char *tail;
	long fd = strtol(text, &tail, 10);

	return tail == text || *tail || fd < 0 || fd > 65535 ? -1 : (int)fd;
}

static int parse_options(int argc, char **argv, struct aggregator_options *o)
{
	static const struct option longopts[] = {
	    {"socket", required_argument, 0, 's'},
	    {"db", required_argument, 0, 'd'},
	    {"user", required_argument, 0, 'u'},
	    {"collector-user", required_argument, 0, 'c'},
	    {"key-file", required_argument, 0, 'k'},
	    {"key-fd", required_argument, 0, 'y'},
	    {"make-key", required_argument, 0, 'Y'},
	    {"socket-group", required_argument, 0, 'g'},
	    {"socket-mode", required_argument, 0, 'm'},
	    {"scope", required_argument, 0, 'S'},
	    {"scope-cgroup", required_argument, 0, 'B'},
	    {"config", required_argument, 0, 'f'},
	    {"log-level", required_argument, 0, 'l'},
	    {"ready-fd", required_argument, 0, 'R'},
	    {"exit-with-fd", required_argument, 0, 'W'},
	    {"host-sample-ms", required_argument, 0, 'H'},
	    {"commit-ms", required_argument, 0, 'C'},
	    {"tools-allow", required_argument, 0, 'A'},
	    {"tools-deny", required_argument, 0, 'N'},
	    {"signal", required_argument, 0, 'G'},
	    {"outbox-mib", required_argument, 0, 'O'},
	    {"outbox-when", required_argument, 0, 'w'},
	    {"retain-days", required_argument, 0, 'D'},
	    {"retain-mib", required_argument, 0, 'M'},
	    {"retain-check-s", required_argument, 0, 'K'},
	    {"metrics-file", required_argument, 0, 'F'},
	    {"shipper-state", required_argument, 0, 'P'},
	    {"launcher", required_argument, 0, 'L'},
	    {"help", no_argument, 0, 'h'},
	    {"version", no_argument, 0, 'V'},
	    {0, 0, 0, 0},
	};
	int c;
	char *end;

	*o = (struct aggregator_options){.socket_path = TRACER_DEFAULT_SOCKET,
					 .db_path = TRACER_DEFAULT_DB,
					 .socket_mode = 0660,
					 .key_file = TRACER_DEFAULT_KEY,
					 .key_fd = -1,
					 .ready_fd = -1,
					 .lifeline_fd = -1,
					 .scope = SCOPE_ALL,
					 .host_sample_ms = 1000,
					 .commit_ms = RECEIVER_COMMIT_EVERY_MS,
					 .shipper_state = TRACER_DEFAULT_SHIPPER_STATE,
					 .retain_days = 30,
					 .retain_mib = 4096,
					 .retain_check_s = 300};
	insight_config_defaults(&o->signals);
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->socket_path = optarg;
			break;
		case 'd':
			o->db_path = optarg;
			break;
		case 'u':
			o->user = optarg;
			break;
		case 'c':
			if (o->n_collector_users == 4) {
				fprintf(stderr, "tracer-aggregator: at most 4 --collector-user\n");
				return -1;
			}
			o->collector_users[o->n_collector_users++] = optarg;
			break;
		case 'k':
			o->key_file = optarg;
			break;
		case 'y':
			if ((o->key_fd = descriptor(optarg)) < 0) {
				fprintf(stderr,
					"tracer-aggregator: --key-fd: bad descriptor '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'Y':
			exit(peers_make_key(optarg));
		case 'g':
			o->socket_group = strtoul(optarg, &end, 10);
			if (*end || !*optarg || o->socket_group == 0 ||
			    o->socket_group > 4294967294UL) {
				fprintf(stderr, "tracer-aggregator: --socket-group is a gid\n");
				return -1;
			}
			break;
		case 'm':
			o->socket_mode = (int)strtol(optarg, &end, 8);
			if (*end || o->socket_mode & ~0777) {
				fprintf(stderr, "tracer-aggregator: bad --socket-mode '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'S':
			if (strcmp(optarg, "all") == 0)
				o->scope = SCOPE_ALL;
			else if (strcmp(optarg, "runs") == 0)
				o->scope = SCOPE_RUNS;
			else {
				fprintf(stderr, "tracer-aggregator: --scope is all or runs\n");
				return -1;
			}
			break;
		case 'B':
			o->scope_cgroup_arg = optarg;
			break;
		case 'f': {
			char err[512];
			if (scope_setting_load(&o->scope_set, optarg, err, sizeof(err)) != 0) {
				fprintf(stderr, "tracer-aggregator: %s\n", err);
				return -1;
			}
			break;
		}
		case 'l':
			if (log_set_level_name(optarg) != 0) {
				fprintf(stderr, "tracer-aggregator: unknown log level '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'R':
		case 'W': {
			int fd = descriptor(optarg);
			if (fd < 0) {
				fprintf(stderr, "tracer-aggregator: --%s: bad descriptor '%s'\n",
					c == 'R' ? "ready-fd" : "exit-with-fd", optarg);
				return -1;
			}
			*(c == 'R' ? &o->ready_fd : &o->lifeline_fd) = fd;
			break;
		}
		case 'L': {
			unsigned long pid = strtoul(optarg, &end, 10);
			if (*end != ':' || pid == 0 || pid > 4194304) {
				fprintf(stderr, "tracer-aggregator: --launcher is PID:START_NS\n");
				return -1;
			}
			o->launcher_start_boot_ns = strtoull(end + 1, &end, 10);
			if (*end) {
				fprintf(stderr, "tracer-aggregator: --launcher is PID:START_NS\n");
				return -1;
			}
			o->launcher_pid = (uint32_t)pid;
			o->has_launcher = true;
			break;
		}
		case 'A':
			o->tools_allow = optarg;
			break;
		case 'N':
			o->tools_deny = optarg;
			break;
		case 'P':
			o->shipper_state = optarg;
			break;
		case 'F':
			o->metrics_file = optarg;
			break;
		case 'w':
			o->outbox_when = optarg;
			break;
		case 'O':
			o->outbox_mib = (unsigned)strtoul(optarg, &end, 10);
			if (*end || o->outbox_mib > 1048576) {
				fprintf(stderr,
					"tracer-aggregator: --outbox-mib is 0 to 1048576\n");
				return -1;
			}
			break;
		case 'D':
		case 'M':
		case 'K': {
			unsigned long v = strtoul(optarg, &end, 10);
			const char *name = c == 'D'   ? "retain-days"
					   : c == 'M' ? "retain-mib"
						      : "retain-check-s";
			if (*end || !*optarg || v > 1048576 || (c == 'K' && v == 0)) {
				fprintf(stderr, "tracer-aggregator: --%s is %s to 1048576\n", name,
					c == 'K' ? "1" : "0");
				return -1;
			}
			*(c == 'D'   ? &o->retain_days
			  : c == 'M' ? &o->retain_mib
				     : &o->retain_check_s) = (unsigned)v;
			break;
		}
		case 'G': {
			char err[256];
			if (insight_config_set(&o->signals, optarg, err, sizeof(err)) != 0) {
				fprintf(stderr, "tracer-aggregator: --signal %s\n", err);
				return -1;
			}
			break;
		}
		case 'H':
			o->host_sample_ms = (unsigned)strtoul(optarg, &end, 10);
			if (*end || (o->host_sample_ms && o->host_sample_ms < 100)) {
				fprintf(stderr,
					"tracer-aggregator: --host-sample-ms is 0 or >= 100\n");
				return -1;
			}
			break;
		case 'C':
			o->commit_ms = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !*optarg || o->commit_ms > 1000) {
				fprintf(stderr, "tracer-aggregator: --commit-ms is 0 to 1000\n");
				return -1;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("tracer-aggregator %s\n", TRACER_VERSION);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "tracer-aggregator: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (o->scope_cgroup_arg) {
		char err[512];
		if (scope_setting_set(&o->scope_set, "cgroup", o->scope_cgroup_arg, err,
				      sizeof(err)) != 0) {
			fprintf(stderr, "tracer-aggregator: --scope-%s\n", err);
			return -1;
		}
	}
	return 0;
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

int main(int argc, char **argv)
{
	struct aggregator_options opt;
	struct store store;
	struct ingest ingest;
	struct receiver receiver;
	struct run_as who;
	uint8_t key[IPC_KEY_LEN];
	int rv, exit_code = 1;

	log_init("tracer-aggregator");
	sdnotify_init();
	/* The database holds every user's command lines: its group (tracer) reads it, no one else.
	 */
	umask(027);
	if (parse_options(argc, argv, &opt) != 0)
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
	if (geteuid() == 0) {
		if (!opt.user) {
			log_error("refusing to run as root: pass --user NAME");
			return 1;
		}
		if (run_as_lookup(opt.user, &who) != 0) {
			log_error("unknown user '%s'", opt.user);
			return 1;
		}
		who.extra_group = (gid_t)opt.socket_group;
		if (prepare_directory(opt.db_path, &who, 0750) != 0 ||
		    prepare_directory(opt.socket_path, &who, 0750) != 0)
			return 1;
		if (drop_privileges(&who) != 0) {
			log_error("refusing to run privileged: privilege drop to %s failed",
				  who.name);
			return 1;
		}
	}
	pid_t holder;
	int db_lock = dblock_take(opt.db_path, &holder);
	if (db_lock < 0 && (errno == EWOULDBLOCK || holder)) {
		log_error("%s is being written by another tracer-aggregator (pid %d): one "
			  "writer per database; use another --db",
			  opt.db_path, (int)holder);
		return 1;
	}
	if (db_lock < 0) /* a directory we cannot create files in: write, unguarded */
		log_warn("cannot lock %s.lock (%s): a second writer would not be refused",
			 opt.db_path, strerror(errno));
	if (store_open(&store, opt.db_path) != 0)
		return 1;
	struct outbox outbox, *opened = NULL;
	if (opt.outbox_mib) {
		if (outbox_open(&outbox, store.db, (uint64_t)opt.outbox_mib << 20,
				opt.shipper_state) != 0)
			goto out_store;
		opened = &outbox;
		store.outbox = outbox_gate_open(opt.outbox_when) ? &outbox : NULL;
		if (store.outbox)
			log_info("outbox on: at most %u MiB queued for the shipper",
				 opt.outbox_mib);
		else
			log_info("outbox off: no shipper configured (no %s); on once it exists",
				 opt.outbox_when);
	}
	char allow_buf[4200], deny_buf[4200];
	const char *allow = find_list(opt.tools_allow, "tools.allow", allow_buf, sizeof(allow_buf));
	const char *deny = find_list(opt.tools_deny, "tools.deny", deny_buf, sizeof(deny_buf));
	if (!allow || !deny)
		log_warn("tool lists not found: tools are not categorised%s",
			 deny ? "" : ", system noise is recorded");
	if (ingest_init(&ingest, &store, opt.scope, allow, deny, &opt.signals) != 0) {
		log_error("cannot start: see the message above");
		goto out_store;
	}
	if (opt.scope_set.cgroup[0]) {
		char err[512];
		if (correlate_set_scope_cgroup(&ingest.corr, opt.scope_set.cgroup, err,
					       sizeof(err)) != 0) {
			log_error("scope: %s", err);
			goto out_store;
		}
		log_info("scope: only processes in cgroup %s (and under it)", opt.scope_set.cgroup);
	}
	if (ingest_load_state(&ingest) != 0) {
		log_error("cannot load state from %s", opt.db_path);
		goto out_store;
	}
	if (opt.has_launcher) {
		ingest.own_launcher = true;
		ingest.own_launcher_pid = opt.launcher_pid;
		ingest.own_launcher_start_boot_ns = opt.launcher_start_boot_ns;
	}
	receiver_init(&receiver, &ingest, &store);
	peers_init(&receiver.peers, key);
	memset(key, 0, sizeof(key));
	receiver.host_every_ns = (uint64_t)opt.host_sample_ms * NSEC_PER_MSEC;
	receiver.lifeline_fd = opt.lifeline_fd;
	receiver.commit_every_ns = (uint64_t)opt.commit_ms * NSEC_PER_MSEC;
	receiver.retention = (struct retention){.max_age_ns = (int64_t)opt.retain_days * 86400 *
							      (int64_t)NSEC_PER_SEC,
						.max_bytes = (int64_t)opt.retain_mib << 20};
	receiver.prune_every_ns = (uint64_t)opt.retain_check_s * NSEC_PER_SEC;
	receiver.metrics_path = opt.metrics_file;
	receiver.shipper_state = opt.shipper_state;
	receiver.outbox = opened;
	receiver.outbox_when = opt.outbox_when;
	/* The first check one period after the start: a restart loop does not prune each time. */
	receiver.next_prune_ns = now_boottime_ns() + receiver.prune_every_ns;
	receiver.reload = &reload_requested;
	receiver.wake_fd = wake_pipe[0];
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
	if (opt.ready_fd >= 0) {
		if (write(opt.ready_fd, "ready\n", 6) != 6)
			log_warn("cannot signal readiness: %s", strerror(errno));
		close(opt.ready_fd);
	}
	sdnotify_ready();
	exit_code = receiver_run(&receiver, &stop_requested) == 0 ? 0 : 1;
	/* Held samples go out now: a fork child's exec seen by the next aggregator
	 * keeps the pre-exec image as a row of its own. */
	if (store.outbox && outbox_release_held(store.outbox) != 0)
		exit_code = 1;
	sdnotify_stopping();
	log_info("stopped (signal %d); %llu events, %llu bad frames, %llu refused peers",
		 (int)stop_requested, (unsigned long long)ingest.stats.events,
		 (unsigned long long)receiver.agg.bad_frames,
		 (unsigned long long)receiver.agg.refused_peers);
	/*
	 * nng is left as it is, not closed nor finished: tearing it down while a
	 * peer's handshake is in flight panics nng 1.5.2 in a task thread
	 * ("pthread_mutex_lock: Invalid argument", about 1 in 1000 stops right
	 * after start-up; closing could also hang, nng#1543). Everything
	 * acknowledged is committed; the kernel closes the connections at exit,
	 * and a collector resends what we did not acknowledge. The receiver stays
	 * allocated: nng's threads may still call into its peer policy.
	 */
	unlink(opt.socket_path);
	announce_db(opt.socket_path, NULL);
	ingest_free(&ingest);
	if (opened)
		outbox_close(opened);
	store_close(&store);
	exit(exit_code);
out_ingest:
	ingest_free(&ingest);
out_store:
	if (opened)
		outbox_close(opened);
	store_close(&store);
	nng_fini(); /* not listening yet: nothing of nng is in flight */
	return exit_code;
}
