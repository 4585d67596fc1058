/* tracer run's own daemons: a private socket, the aggregator, then the collector. */
#include "cli/launch/selfhosted.h"

#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/launch/runuser.h"
#include "common/fileutil.h"
#include "common/timeutil.h"

/* Our start, CLOCK_BOOTTIME ns at clock-tick resolution, as the collector's /proc
 * snapshot sees it: with our pid, the identity our aggregator accepts. */
uint64_t own_start_boot_ns(void)
{
	char text[1024], *close_paren;
	unsigned long long ticks = 0;
	long hz = sysconf(_SC_CLK_TCK);

	if (read_small_file("/proc/self/stat", text, sizeof(text)) < 0 ||
	    !(close_paren = strrchr(text, ')')))
		return 0;
	/* Field 22, starttime; fields 3.. follow the ") ". */
	const char *f = close_paren + 2;
	for (int field = 3; field < 22 && f; field++) {
		f = strchr(f, ' ');
		if (f)
			f++;
	}
	if (f)
		ticks = strtoull(f, NULL, 10);
	return hz > 0 ? ticks * (NSEC_PER_SEC / (uint64_t)hz) : 0;
}

/*
 * Socket directories of earlier runs that were killed before they could
 * remove them. Their aggregator removed its socket when it stopped, so they
 * are empty: rmdir takes only those (a live run's holds its socket), and only
 * past a minute old (one being set up this moment is left alone).
 */
static void sweep_stale_socket_dirs(void)
{
	glob_t g;
	struct stat st;
	time_t now = time(NULL);

	if (glob("/run/tracer-run.*", GLOB_NOSORT, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++)
		if (lstat(g.gl_pathv[i], &st) == 0 && S_ISDIR(st.st_mode) && now - st.st_mtime > 60)
			rmdir(g.gl_pathv[i]);
	globfree(&g);
}

/*
 * A private socket: nothing else can talk to these daemons. Root's, writable by
 * a group only our daemons have: not even the aggregator's user (the owner of
 * the --db directory, maybe) can replace the socket. Set-group-id: the socket
 * is that group's, so the collector can reconnect after its drop.
 */
static int private_socket(struct self_hosted *h)
{
	sweep_stale_socket_dirs();
	snprintf(h->socket_dir, sizeof(h->socket_dir), "/run/tracer-run.XXXXXX");
	if (!mkdtemp(h->socket_dir)) {
		snprintf(h->socket_dir, sizeof(h->socket_dir), "/tmp/tracer-run.XXXXXX");
		if (!mkdtemp(h->socket_dir)) {
			perror("tracer run: mkdtemp");
			return -1;
		}
	}
	if (chown(h->socket_dir, 0, h->own_id) != 0 || chmod(h->socket_dir, 02730) != 0) {
		perror("tracer run: socket directory");
		return -1;
	}
	snprintf(h->socket_path, sizeof(h->socket_path), "%s/collector.sock", h->socket_dir);
	return 0;
}

/* Our own aggregator records our run alone, never another tracer run's. */
static int start_aggregator(const struct self_hosted_options *o, struct self_hosted *h,
			    const char *dir, struct run_as *agg_user)
{
	char agg_path[4200], launcher[64], group[16];

	snprintf(agg_path, sizeof(agg_path), "%s/tracer-aggregator", dir);
	snprintf(launcher, sizeof(launcher), "%d:%llu", (int)getpid(),
		 (unsigned long long)own_start_boot_ns());
	snprintf(group, sizeof(group), "%u", h->own_id);
	char *agg_argv[] = {agg_path, "--socket", h->socket_path, "--db", (char *)o->db_path,
			    "--user", agg_user->name, "--scope", "runs", "--launcher", launcher,
			    /* A run's report waits for the last commit: make it soon. */
			    "--commit-ms", "20", "--log-level", (char *)o->log_level,
			    h->socket_dir[0] ? "--socket-group" : NULL, group, NULL};
	return daemon_start(&h->aggregator, "tracer-aggregator", agg_argv, 10000, h->key);
}

/* The collector sends to our aggregator's process only, whoever holds the socket's
 * name, and runs as an id no other process holds: no one else may signal it. */
static int start_collector(const struct self_hosted_options *o, struct self_hosted *h,
			   const char *dir)
{
	char col_path[4200], agg_pid[16], col_user[32];

	snprintf(col_path, sizeof(col_path), "%s/tracer-collector", dir);
	snprintf(agg_pid, sizeof(agg_pid), "%d", (int)h->aggregator.pid);
	snprintf(col_user, sizeof(col_user), "%u:%u", h->own_id, h->own_id);
	char *col_argv[] = {
	    col_path, "--socket", h->socket_path,     "--log-level", (char *)o->log_level,
	    "--user", col_user,	  "--aggregator-pid", agg_pid,	     NULL};
	/* Loading the BPF programs takes seconds on a busy host: say so on a terminal. */
	bool tty = isatty(STDERR_FILENO);
	if (tty)
		fprintf(stderr, "tracer run: loading the kernel probes...");
	int rc = daemon_start(&h->collector, "tracer-collector", col_argv, 30000, h->key);
	if (tty)
		fprintf(stderr, "\r\033[K");
	return rc;
}

int self_hosted_start(const struct self_hosted_options *o, struct self_hosted *h)
{
	char dir[4096];
	struct run_as agg_user;

	if (daemons_directory(dir, sizeof(dir)) != 0) {
		fprintf(stderr,
			"tracer run: cannot find tracer-aggregator beside tracer, in "
			"../libexec/tracer or in %s\n",
			dir);
		return -1;
	}
	if (pick_aggregator_user(o->aggregator_user, o->db_path, &agg_user) != 0)
		return -1;
	if (!(h->own_id = unused_id())) {
		fprintf(stderr, "tracer run: no unused id for the collector\n");
		return -1;
	}
	/* The key both daemons prove each other with: root's, through pipes only. */
	if (getrandom(h->key, sizeof(h->key), 0) != (ssize_t)sizeof(h->key)) {
		perror("tracer run: getrandom");
		return -1;
	}
	if (o->socket_path)
		snprintf(h->socket_path, sizeof(h->socket_path), "%s", o->socket_path);
	else if (private_socket(h) != 0)
		return -1;
	if (prepare_db_directory(o->db_path, &agg_user) != 0)
		return -1;
	/* Should this process be killed, its daemons stop instead of tracing on. */
	if (daemon_lifeline() < 0) {
		perror("tracer run: pipe");
		return -1;
	}
	if (start_aggregator(o, h, dir, &agg_user) != 0)
		return -1;
	int rc = start_collector(o, h, dir);
	memset(h->key, 0, sizeof(h->key));
	if (rc != 0) {
		daemon_stop(&h->aggregator, 5000);
		return -1;
	}
	return 0;
}

void self_hosted_stop(struct self_hosted *h)
{
	int st = daemon_stop(&h->collector, 10000);

	if (st != 0)
		fprintf(stderr, "tracer run: collector exited with status %d\n", st);
	st = daemon_stop(&h->aggregator, 10000);
	if (st != 0)
		fprintf(stderr, "tracer run: aggregator exited with status %d\n", st);
	if (h->socket_dir[0]) {
		unlink(h->socket_path);
		rmdir(h->socket_dir);
	}
}
