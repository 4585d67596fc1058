/*
 * tracer run [options] -- CMD ARGS...
 *
 * Runs CMD (as the sudo user when started through sudo), records every
 * process it starts, waits until all of them are committed to SQLite, prints
 * the run report and exits with CMD's status. Uses the daemons if they are
 * listening on the socket; otherwise starts a collector (root, drops to an
 * unprivileged user after loading BPF) and an aggregator (unprivileged) for
 * the duration of the run.
 */
#include <errno.h>
#include <glob.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "aggregator/store/dblock.h"
#include "cli/db/clidb.h"
#include "cli/launch/command.h"
#include "cli/launch/launch.h"
#include "cli/launch/runuser.h"
#include "cli/launch/selfhosted.h"
#include "cli/model/health.h"
#include "cli/model/runreport.h"
#include "cli/render/format.h"
#include "cli/render/termsafe.h"
#include "cli/verbs/commands.h"
#include "common/exitstatus.h"
#include "common/fileutil.h"
#include "common/hostinfo.h"
#include "common/ipc.h"
#include "common/ipc_auth.h"
#include "common/paths.h"
#include "common/privdrop.h"
#include "common/timeutil.h"

#define COMMIT_WAIT_NS (30 * NSEC_PER_SEC)
/* How far the collector's watermark trails its drain (collector/drain.c), plus a margin. */
#define COLLECTOR_WATERMARK_LAG_NS (8 * NSEC_PER_MSEC)

struct run_options {
	const char *db_path;
	bool db_given;
	const char *socket_path;
	bool socket_given;
	const char *json_out; /* --json-out FILE; with --json alone: stderr */
	const char *aggregator_user;
	const char *log_level;
	bool json;
	char **command;
};

static volatile sig_atomic_t forwarded_signal;
static pid_t command_pid;

static void forward_signal(int sig)
{
	forwarded_signal = sig;
	if (command_pid > 0)
		kill(command_pid, sig);
}

static void run_usage(FILE *out)
{
	fprintf(out,
		"usage: tracer run [options] [--] CMD [ARGS...]\n"
		"  --pipeline NAME     pipeline this run belongs to\n"
		"  --run NAME          name of this run (default: CMD-date)\n"
		"  --db PATH           database (default $TRACER_DB, else " TRACER_DEFAULT_DB ")\n"
		"  --socket PATH       daemons' socket (default " TRACER_DEFAULT_SOCKET ")\n"
		"  --user NAME         user for a self-started aggregator\n"
		"  --log-level LEVEL   for self-started daemons (default warn)\n"
		"  --json              the report as JSON, on stderr (CMD keeps stdout)\n"
		"  --json-out FILE     the JSON report into FILE\n"
		"Runs CMD under watch (starting private daemons when none listen on the\n"
		"socket) and prints the run's report to stderr when it ends.\n"
		"Exit status: CMD's; 128+N if CMD was killed by signal N; 1 if tracer\n"
		"could not start watching (CMD not run); 127 if CMD was not found.\n");
}

static int parse_run_options(int argc, char **argv, struct run_options *o)
{
	/* Keep valued options in step with aggregator/ingest/runmark.c. */
	static const struct option longopts[] = {
	    {"pipeline", required_argument, 0, 'p'}, {"run", required_argument, 0, 'r'},
	    {"db", required_argument, 0, 'd'},	     {"socket", required_argument, 0, 's'},
	    {"user", required_argument, 0, 'u'},     {"log-level", required_argument, 0, 'l'},
	    {"json", no_argument, 0, 'j'},	     {"json-out", required_argument, 0, 'J'},
	    {"help", no_argument, 0, 'h'},	     {0, 0, 0, 0},
	};
	int c;

	*o = (struct run_options){
	    .db_path = cli_default_db(), .socket_path = TRACER_DEFAULT_SOCKET, .log_level = "warn"};
	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
		case 'r':
			break; /* read back by the aggregator from our argv */
		case 'd':
			o->db_path = optarg;
			o->db_given = true;
			break;
		case 's':
			o->socket_path = optarg;
			o->socket_given = true;
			break;
		case 'u':
			o->aggregator_user = optarg;
			break;
		case 'l':
			o->log_level = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case 'J':
			o->json = true;
			o->json_out = optarg;
			break;
		case 'h':
			run_usage(stdout);
			exit(0);
		default:
			run_usage(stderr);
			return -1;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "tracer run: no command given\n");
		run_usage(stderr);
		return -1;
	}
	o->command = argv + optind;
	return 0;
}

/* Who typed the command: the sudo user, else ourselves. */
static int invoking_user(struct run_as *who)
{
	const char *sudo_uid = getenv("SUDO_UID");

	if (geteuid() == 0 && sudo_uid && *sudo_uid && strcmp(sudo_uid, "0") != 0)
		return run_as_lookup(sudo_uid, who);
	return run_as_lookup("0", who) == 0 && geteuid() == 0 ? 0 : -1;
}

/*
 * Every event before `until` (CLOCK_BOOTTIME) is in the database: a collector
 * of this boot has a watermark past it. Of this boot: its boot id is ours, or
 * it was heard from since our command started (`since`, wall clock). The
 * second is needed in a container: systemd-nspawn mounts a boot id of its own
 * over /proc/sys/kernel/random/boot_id, which the installed daemons do not see
 * (ProtectKernelTunables= gives them a fresh /proc/sys with the kernel's), so
 * their stream's boot id is never the one we read, while the clock is the
 * same. A watermark ahead of our clock is another boot's, whatever its id.
 */
static int wait_committed(const char *db_path, uint64_t until, int64_t since)
{
	uint8_t boot[BOOT_ID_LEN];
	char boot_hex[33];
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	uint64_t deadline = now_monotonic_ns() + COMMIT_WAIT_NS;
	int rc = -1;

	if (read_boot_id(boot) == 0)
		format_hex(boot, sizeof(boot), boot_hex, sizeof(boot_hex));
	else
		boot_hex[0] = '\0';
	while (now_monotonic_ns() < deadline) {
		if (!db && sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
			sqlite3_close(db);
			db = NULL;
		}
		if (db && !st &&
		    sqlite3_prepare_v2(
			db,
			"SELECT coalesce(max(watermark_boot_ns), 0) FROM collector_stats "
			"WHERE (boot_id = ?1 OR last_seen_ns >= ?2) AND "
			"watermark_boot_ns <= ?3",
			-1, &st, NULL) != SQLITE_OK)
			st = NULL;
		if (st) {
			sqlite3_bind_text(st, 1, boot_hex, -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, 2, since);
			sqlite3_bind_int64(st, 3,
					   (sqlite3_int64)(now_boottime_ns() + NSEC_PER_SEC));
			uint64_t mark = 0;
			if (sqlite3_step(st) == SQLITE_ROW)
				mark = (uint64_t)sqlite3_column_int64(st, 0);
			sqlite3_reset(st);
			if (mark >= until) {
				rc = 0;
				break;
			}
		}
		sleep_ns(20 * NSEC_PER_MSEC);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}

/* Our run: launched by this process (pid and start, so never a reused pid's). */
static int64_t find_my_run(sqlite3 *db)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db,
			       "SELECT id FROM runs WHERE launcher_pid = ?1 AND "
			       "abs(launcher_start_ns - ?2) < 11000000 ORDER BY id DESC LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(st, 1, getpid());
	sqlite3_bind_int64(st, 2, (sqlite3_int64)own_start_boot_ns());
	return cli_first_id(st);
}

/*
 * Where the report goes: CMD keeps stdout, so text and --json go to stderr.
 * Text for people passes the terminal filter: argv is other users' bytes.
 */
static FILE *report_stream(const struct run_options *o)
{
	FILE *f;

	if (!o->json_out && !o->json) {
		f = termsafe_open(STDERR_FILENO);
		return f ? f : stderr;
	}
	if (!o->json_out)
		return stderr;
	if (!(f = fopen(o->json_out, "we"))) {
		fprintf(stderr, "tracer run: cannot write %s: %s; the report goes to stderr\n",
			o->json_out, strerror(errno));
		return stderr;
	}
	return f;
}

/*
 * Work handed to a batch scheduler runs under its daemons, out of this run's
 * process tree: the jobs that ran on this host are part of the run (schema
 * v15, batch_jobs); say where the rest went, when the run executed a
 * submitter at any depth (a script calling `sbatch --wait` as much as
 * `tracer run -- srun ...`).
 */
static void scheduler_hint(sqlite3 *db, int64_t run_id, FILE *out)
{
	sqlite3_stmt *q;
	char names[128] = "";
	size_t used = 0;
	int linked = 0;

	if (sqlite3_prepare_v2(
		db,
		"SELECT submitter, sum(jobs > 0), sum(jobs = 0) FROM batch_submissions "
		"WHERE run_id = ?1 GROUP BY submitter ORDER BY submitter",
		-1, &q, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(q, 1, run_id);
	while (sqlite3_step(q) == SQLITE_ROW) {
		linked += sqlite3_column_int(q, 1);
		if (sqlite3_column_int(q, 2) && used < sizeof(names) - 16)
			used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s",
						 used ? ", " : "",
						 (const char *)sqlite3_column_text(q, 0));
	}
	sqlite3_finalize(q);
	if (linked)
		fprintf(
		    out,
		    "tracer run: %d batch submission%s ran on this host and %s part of this run "
		    "(tracer show lists the jobs)\n",
		    linked, linked == 1 ? "" : "s", linked == 1 ? "is" : "are");
	if (used)
		fprintf(
		    out,
		    "tracer run: this run handed work to a batch scheduler (%s) that did not "
		    "run on this host: it ran under the scheduler's daemons elsewhere (or not "
		    "yet), and this run holds its clients only. Record the jobs where they run: "
		    "the tracer daemons on the compute nodes (docs/operations.md)\n",
		    names);
}

/* watch_ended: our own daemons stopped, so a process the command left running is never counted. */
static void print_report(const struct run_options *o, bool watch_ended)
{
	sqlite3 *db;
	/* Any run in a screenful: a summary past it, the rest with tracer show. */
	struct report_opts ro = {.json = o->json,
				 .width = 0,
				 .max_lines = REPORT_SCREENFUL,
				 .db_path = o->db_path,
				 .watch_ended = watch_ended};

	ro.width = format_terminal_columns(STDERR_FILENO);
	if (sqlite3_open_v2(o->db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		fprintf(stderr, "tracer run: cannot open %s: %s\n", o->db_path, sqlite3_errmsg(db));
		sqlite3_close(db);
		return;
	}
	int64_t id = find_my_run(db);
	if (id <= 0) {
		fprintf(stderr, "tracer run: the run was not recorded (see messages above)\n");
	} else {
		FILE *out = report_stream(o);
		report_print_run(db, id, &ro, out);
		/* --json on stderr: the document is all stderr holds. */
		bool json_on_stderr = o->json && !o->json_out;
		FILE *text = out != stderr && !o->json_out ? out : stderr;
		if (!json_on_stderr) {
			fprintf(text, "tracer run: run %lld in %s (tracer show --db %s %lld)\n",
				(long long)id, o->db_path, o->db_path, (long long)id);
			scheduler_hint(db, id, text);
		}
		fflush(text);
		if (o->json_out && out != stderr)
			fclose(out);
	}
	sqlite3_close(db);
}

/* Self-hosted: another aggregator writing our --db would store every process twice. */
static bool db_taken(const struct run_options *o)
{
	pid_t holder;

	if (dblock_probe(o->db_path, &holder) != 0)
		return false;
	fprintf(stderr,
		"tracer run: %s is being written by another tracer run or the tracer daemons "
		"(tracer-aggregator pid %d): one writer per database. Use another --db, or let "
		"the daemons record this run (--socket to theirs)\n",
		o->db_path, (int)holder);
	return true;
}

/*
 * With the daemons: they write their own database, whatever --db says. Without
 * --db, theirs is ours; a --db that is not theirs is refused.
 */
static bool db_not_the_daemons(struct run_options *o)
{
	static char theirs[4096];
	char mine[4096];

	if (!cli_announced_db(o->socket_path, theirs, sizeof(theirs)))
		return false; /* an older aggregator: it does not say */
	if (!o->db_given) {
		o->db_path = theirs;
		return false;
	}
	if (realpath(o->db_path, mine) && !strcmp(mine, theirs))
		return false;
	fprintf(stderr,
		"tracer run: the tracer daemons on %s write %s, not %s: drop --db to record "
		"there, or pass --socket with a path of your own to start private daemons\n",
		o->socket_path, theirs, o->db_path);
	return true;
}

/*
 * Installed daemons keep their socket (in /run/tracer, 2750) to their
 * collector: a user may not even see it. Whether they run is in the database
 * the tracer group may read: a collector heard from within the last minute.
 * The run needs no socket: the aggregator knows it from `tracer run`'s exec.
 */
static bool daemons_seen_in_db(const struct run_options *o)
{
	sqlite3 *db = NULL;

	if (geteuid() == 0 ||
	    sqlite3_open_v2(o->db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(db);
		return false;
	}
	bool writing = health_collector_writing(db) == 1;
	sqlite3_close(db);
	return writing;
}

int cmd_run(int argc, char **argv)
{
	struct run_options o;
	struct self_hosted hosted = {0};
	struct run_as user;
	bool self_host;
	int status;

	if (parse_run_options(argc, argv, &o) != 0)
		return 2;
	if (!command_exists(o.command[0])) {
		fprintf(stderr, "tracer run: %s: command not found (nothing recorded)\n",
			o.command[0]);
		return 127;
	}
	self_host = !ipc_probe(o.socket_path) && !daemons_seen_in_db(&o);
	if (self_host && geteuid() != 0) {
		fprintf(stderr,
			"tracer run: no tracer daemons listen on %s (nor has a collector "
			"written to %s in the last minute), and starting our own needs root "
			"to load BPF programs: use sudo, or join the tracer group if the "
			"installed daemons run here\n",
			o.socket_path, o.db_path);
		return 1;
	}
	bool have_user = invoking_user(&user) == 0;
	if (self_host ? db_taken(&o) : db_not_the_daemons(&o))
		return 1;
	struct self_hosted_options own = {.db_path = o.db_path,
					  .aggregator_user = o.aggregator_user,
					  .socket_path = o.socket_given ? o.socket_path : NULL,
					  .log_level = o.log_level};
	if (self_host && self_hosted_start(&own, &hosted) != 0)
		return 1;

	signal(SIGINT, SIG_IGN); /* the command gets the terminal's signals itself */
	signal(SIGQUIT, SIG_IGN);
	signal(SIGTERM, forward_signal);
	signal(SIGHUP, forward_signal);
	int64_t started = (int64_t)now_realtime_ns(); /* wait_committed: streams heard since */
	command_pid = start_command(o.command, have_user ? &user : NULL);
	if (command_pid < 0) {
		perror("tracer run: fork");
		if (self_host)
			self_hosted_stop(&hosted);
		return 1;
	}
	while (waitpid(command_pid, &status, 0) < 0 && errno == EINTR)
		;
	uint64_t ended = now_boottime_ns();
	/* Our own collector sends the command's end now, not at its next flush; the
	 * wait lets its watermark (a few ms behind its drain) pass the end. */
	if (self_host && hosted.collector.pid > 0) {
		sleep_ns(COLLECTOR_WATERMARK_LAG_NS);
		kill(hosted.collector.pid, SIGUSR1);
	}

	if (wait_committed(o.db_path, ended, started) != 0)
		fprintf(stderr,
			"tracer run: not every event reached %s within %llus; "
			"the report may be incomplete\n",
			o.db_path, (unsigned long long)(COMMIT_WAIT_NS / NSEC_PER_SEC));
	if (self_host)
		self_hosted_stop(&hosted);
	print_report(&o, self_host);
	return exit_status_shell(exit_status_decode(status));
}
