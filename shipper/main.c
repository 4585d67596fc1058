/*
 * tracer-shipper: delivers the outbox to ClickHouse or an HTTP(S) endpoint.
 * Reads batches in order (by count, bytes and age), uploads them compressed,
 * and forgets a batch only after the sink acknowledged it. Network errors,
 * 5xx, 408 and 429 are retried forever with exponential backoff and full
 * jitter (Retry-After honoured); other 4xx set the batch aside in
 * dead_letters so it never blocks the queue. Unprivileged; needs no access to
 * the collector socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <ini.h>

#include "common/confkey.h"
#include "common/hostinfo.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/privdrop.h"
#include "common/sdnotify.h"
#include "common/timeutil.h"
#include "common/version.h"
#include "shipper/credentials.h"
#include "shipper/outbox_reader.h"
#include "shipper/retry.h"
#include "shipper/sink.h"

struct shipper_options {
	const char *db_path, *state_path, *sink_url, *credentials_path, *ca_file, *user, *host_id;
	bool once;
	size_t batch_records, batch_bytes;
	long batch_age_ms, poll_ms, timeout_ms, once_timeout_ms, retry_max_ms;
};

static volatile sig_atomic_t stop_requested, reload_requested;

static void on_signal(int sig)
{
	stop_requested = sig;
}

static void on_hup(int sig)
{
	(void)sig;
	reload_requested = 1;
}

static struct http_options http_options_for(const struct shipper_options *opt,
					    const struct credentials *cred)
{
	return (struct http_options){.ca_file = opt->ca_file,
				     .user = cred->user[0] ? cred->user : NULL,
				     .password = cred->password,
				     .bearer = cred->token[0] ? cred->token : NULL,
				     .timeout_ms = opt->timeout_ms,
				     .connect_timeout_ms =
					 opt->timeout_ms < 10000 ? opt->timeout_ms : 10000};
}

/* SIGHUP: rotated credentials take effect without a restart. A bad file keeps the
 * old credentials (and says why); the sink's connection is rebuilt either way. */
static struct sink *reload_credentials(const struct shipper_options *opt, struct credentials *cred,
				       struct sink *sink)
{
	struct credentials fresh = {0};
	char err[512];

	if (!opt->credentials_path) {
		log_info("SIGHUP: no credentials file to reread");
		return sink;
	}
	if (credentials_load(opt->credentials_path, &fresh, err, sizeof(err)) != 0) {
		log_error("SIGHUP: keeping the previous credentials: %s", err);
		credentials_wipe(&fresh);
		return sink;
	}
	sink_free(sink);
	credentials_wipe(cred);
	*cred = fresh;
	credentials_wipe(&fresh);
	struct http_options ho = http_options_for(opt, cred);
	sink = sink_open(opt->sink_url, &ho, err, sizeof(err));
	if (!sink)
		log_error("SIGHUP: %s", err);
	else
		log_info("SIGHUP: credentials reread from %s", opt->credentials_path);
	return sink;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: tracer-shipper --sink URL [options]\n"
		"  --db PATH              the aggregator's database, whose outbox is shipped\n"
		"                         (default " TRACER_DEFAULT_DB ")\n"
		"  --state PATH           this shipper's progress and dead letters (default\n"
		"                         " TRACER_DEFAULT_SHIPPER_STATE ", the aggregator's\n"
		"                         --shipper-state default; created if missing)\n"
		"  --sink URL             clickhouse://HOST:PORT/DATABASE (HTTP interface;\n"
		"                         ?secure=1 for HTTPS) or an http(s):// endpoint\n"
		"  --credentials FILE     user/password or token (mode 0600, this user's)\n"
		"  --ca-file FILE         CA certificates for TLS (default: the system's)\n"
		"  --once                 deliver what is pending and exit: 0 only if all of it\n"
		"                         was acknowledged\n"
		"  --once-timeout-s N     give up retrying after N s in --once mode (default 120)\n"
		"  --batch-records N      at most N records per batch (default 5000)\n"
		"  --batch-kib N          at most N KiB of records per batch (default 4096)\n"
		"  --batch-age-ms N       wait up to N ms to fill a batch (default 2000)\n"
		"  --timeout-ms N         per request (default 30000)\n"
		"  --retry-max-ms N       longest wait between retries (default 60000)\n"
		"  --host-id ID           the records' host (default: from the database)\n"
		"  --user NAME            when started as root, run as this user\n"
		"  --log-level LEVEL      error, warn, info (default) or debug\n"
		"  --version              print the version and exit\n"
		"  --config FILE          the [shipper] section of an INI file: the same settings\n"
		"                         by their long names (db, state, sink, credentials, "
		"ca-file, user,\n"
		"                         host-id, batch-records, batch-kib, batch-age-ms, "
		"timeout-ms,\n"
		"                         retry-max-ms)\n"
		"  SIGHUP rereads the credentials file\n");
}

/* [shipper] keys in the config file: the long option names. */
struct config_ctx {
	struct shipper_options *o;
	char *strings[16];
	size_t n;
	char err[256];
};

static int config_value(struct config_ctx *c, const char *value, const char **out)
{
	if (c->n == sizeof(c->strings) / sizeof(*c->strings) || !(c->strings[c->n] = strdup(value)))
		return 0;
	*out = c->strings[c->n++];
	return 1;
}

static const char *const shipper_sections[] = {"shipper", NULL};

static int config_line(void *user, const char *section, const char *name, const char *value)
{
	struct config_ctx *c = user;
	struct shipper_options *o = c->o;
	char *end;
	long v;
	bool mine;
	const char *why = config_section_check(section, shipper_sections, &mine);

	if (why) {
		snprintf(c->err, sizeof(c->err), "%s%s%s%s: %s (the shipper reads [shipper])",
			 section[0] ? "[" : "", section, section[0] ? "] " : "", name, why);
		return 0;
	}
	if (!mine)
		return 1; /* another program's section in a shared file */
	if (config_key_is(name, "db"))
		return config_value(c, value, &o->db_path);
	if (config_key_is(name, "state"))
		return config_value(c, value, &o->state_path);
	if (config_key_is(name, "sink"))
		return config_value(c, value, &o->sink_url);
	if (config_key_is(name, "credentials"))
		return config_value(c, value, &o->credentials_path);
	if (config_key_is(name, "ca-file"))
		return config_value(c, value, &o->ca_file);
	if (config_key_is(name, "user"))
		return config_value(c, value, &o->user);
	if (config_key_is(name, "host-id"))
		return config_value(c, value, &o->host_id);
	v = strtol(value, &end, 10);
	if (*end || v <= 0 || v > 100000000) {
		snprintf(c->err, sizeof(c->err), "%s: expected a positive number, got '%s'", name,
			 value);
		return 0;
	}
	if (config_key_is(name, "batch-records"))
		o->batch_records = (size_t)v;
	else if (config_key_is(name, "batch-kib"))
		o->batch_bytes = (size_t)v * 1024;
	else if (config_key_is(name, "batch-age-ms"))
		o->batch_age_ms = v;
	else if (config_key_is(name, "timeout-ms"))
		o->timeout_ms = v;
	else if (config_key_is(name, "retry-max-ms"))
		o->retry_max_ms = v;
	else {
		snprintf(c->err, sizeof(c->err), "unknown key '%s'", name);
		return 0;
	}
	return 1;
}

static struct config_ctx config;

static int load_config(const char *path, struct shipper_options *o)
{
	config.o = o;
	int line = ini_parse(path, config_line, &config);
	if (line < 0) {
		fprintf(stderr, "tracer-shipper: cannot read %s\n", path);
		return -1;
	}
	if (line > 0) {
		fprintf(stderr, "tracer-shipper: %s:%d: %s\n", path, line,
			config.err[0] ? config.err : "bad line");
		return -1;
	}
	return 0;
}

static int parse_options(int argc, char **argv, struct shipper_options *o)
{
	static const struct option longopts[] = {
	    {"db", required_argument, 0, 'd'},
	    {"state", required_argument, 0, 'S'},
	    {"sink", required_argument, 0, 's'},
	    {"credentials", required_argument, 0, 'c'},
	    {"ca-file", required_argument, 0, 'a'},
	    {"once", no_argument, 0, '1'},
	    {"once-timeout-s", required_argument, 0, 'T'},
	    {"batch-records", required_argument, 0, 'r'},
	    {"batch-kib", required_argument, 0, 'k'},
	    {"batch-age-ms", required_argument, 0, 'A'},
	    {"timeout-ms", required_argument, 0, 't'},
	    {"retry-max-ms", required_argument, 0, 'R'},
	    {"host-id", required_argument, 0, 'H'},
	    {"user", required_argument, 0, 'u'},
	    {"log-level", required_argument, 0, 'l'},
	    {"config", required_argument, 0, 'C'},
	    {"help", no_argument, 0, 'h'},
	    {"version", no_argument, 0, 'V'},
	    {0, 0, 0, 0},
	};
	int c;
	char *end;
	long v;

	*o = (struct shipper_options){.db_path = TRACER_DEFAULT_DB,
				      .state_path = TRACER_DEFAULT_SHIPPER_STATE,
				      .batch_records = 5000,
				      .batch_bytes = 4096 * 1024,
				      .batch_age_ms = 2000,
				      .poll_ms = 500,
				      .timeout_ms = 30000,
				      .retry_max_ms = 60000,
				      .once_timeout_ms = 120000};
	/* The config file first, whatever its place: options on the command line win. */
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--config") && load_config(argv[i + 1], o) != 0)
			return -1;
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--config=", 9) && load_config(argv[i] + 9, o) != 0)
			return -1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->db_path = optarg;
			break;
		case 'S':
			o->state_path = optarg;
			break;
		case 's':
			o->sink_url = optarg;
			break;
		case 'c':
			o->credentials_path = optarg;
			break;
		case 'a':
			o->ca_file = optarg;
			break;
		case '1':
			o->once = true;
			break;
		case 'H':
			o->host_id = optarg;
			break;
		case 'u':
			o->user = optarg;
			break;
		case 'l':
			if (log_set_level_name(optarg) != 0) {
				fprintf(stderr, "tracer-shipper: unknown log level '%s'\n", optarg);
				return -1;
			}
			break;
		case 'C':
			break; /* read above */
		case 'r':
		case 'k':
		case 'A':
		case 't':
		case 'T':
		case 'R':
			v = strtol(optarg, &end, 10);
			if (*end || v <= 0 || v > 100000000) {
				fprintf(stderr, "tracer-shipper: bad number '%s'\n", optarg);
				return -1;
			}
			if (c == 'r')
				o->batch_records = (size_t)v;
			else if (c == 'k')
				o->batch_bytes = (size_t)v * 1024;
			else if (c == 'A')
				o->batch_age_ms = v;
			else if (c == 't')
				o->timeout_ms = v;
			else if (c == 'R')
				o->retry_max_ms = v;
			else
				o->once_timeout_ms = v * 1000;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("tracer-shipper %s\n", TRACER_VERSION);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc || !o->sink_url) {
		if (!o->sink_url)
			fprintf(stderr, "tracer-shipper: --sink URL is required\n");
		usage(stderr);
		return -1;
	}
	return 0;
}

/* Sleeps ms, waking early on a stop request. */
static void nap(long ms)
{
	while (ms > 0 && !stop_requested) {
		long step = ms < 100 ? ms : 100;
		sdnotify_watchdog(now_boottime_ns());
		struct timespec ts = {0, step * 1000000L};
		nanosleep(&ts, NULL);
		ms -= step;
	}
}

/*
 * The state's directory, made for the user the shipper becomes (as root,
 * before dropping privileges): the README's first start must not need a
 * mkdir. An existing directory is left as it is.
 */
static void make_state_dir(const char *state_path, const struct run_as *who)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", state_path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	if (mkdir(dir, 0750) == 0 && chown(dir, who->uid, who->gid) != 0)
		log_warn("cannot give %s to %s: %s", dir, who->name, strerror(errno));
}

/* One shipper per state: a second would send everything twice. */
static int lock_database(const char *state_path)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s.lock", state_path);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		log_error("cannot open %s: %s (the state lives beside it; --state PATH "
			  "moves it)",
			  path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		log_error("another tracer-shipper is using %s", state_path);
		close(fd);
		return -1;
	}
	return fd;
}

static void note_error(struct outbox_reader *o, const char *what, const struct send_result *r)
{
	char text[2300], when[32];
	snprintf(text, sizeof(text), "%s: %s%ld %s", what, r->status ? "HTTP " : "", r->status,
		 r->answer);
	for (char *c = text; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	snprintf(when, sizeof(when), "%lld", (long long)now_realtime_ns());
	reader_set_state(o, "last_error", text);
	reader_set_state(o, "last_error_ns", when);
	log_warn("%s", text);
}

int main(int argc, char **argv)
{
	struct shipper_options opt;
	struct credentials cred = {0};
	struct outbox_reader reader;
	struct batch batch = {0};
	struct backoff backoff;
	struct send_result res;
	char err[512];
	int exit_code = 1;

	log_init("tracer-shipper");
	sdnotify_init();
	if (parse_options(argc, argv, &opt) != 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGHUP, on_hup);
	if (geteuid() == 0) {
		struct run_as who;
		if (!opt.user) {
			log_error("refusing to run as root: pass --user NAME");
			return 1;
		}
		bool known = run_as_lookup(opt.user, &who) == 0;
		if (known)
			make_state_dir(opt.state_path, &who);
		if (!known || drop_privileges(&who) != 0) {
			log_error("refusing to run privileged: cannot become %s", opt.user);
			return 1;
		}
	}
	if (opt.credentials_path &&
	    credentials_load(opt.credentials_path, &cred, err, sizeof(err))) {
		log_error("%s", err);
		return 1;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		log_error("cannot initialise libcurl");
		return 1;
	}
	struct http_options ho = http_options_for(&opt, &cred);
	struct sink *sink = sink_open(opt.sink_url, &ho, err, sizeof(err));
	if (!sink) {
		log_error("%s", err);
		goto out_curl;
	}
	int lock = lock_database(opt.state_path);
	if (lock < 0)
		goto out_sink;
	if (reader_open(&reader, opt.db_path, opt.state_path, opt.host_id, err, sizeof(err)) != 0) {
		log_error("%s", err);
		goto out_lock;
	}
	if (!reader.host_id[0])
		read_host_id(reader.host_id, sizeof(reader.host_id));
	log_info("delivering %s to %s as host %s", opt.db_path, sink->name, reader.host_id);
	sdnotify_ready();
	backoff_init(&backoff, opt.retry_max_ms < 500 ? opt.retry_max_ms : 500, opt.retry_max_ms,
		     (unsigned)getpid() ^ (unsigned)now_realtime_ns());
	uint64_t once_deadline = now_boottime_ns() + (uint64_t)opt.once_timeout_ms * 1000000ULL;
	/* --once: what is pending now; records queued meanwhile wait for the next run. */
	int64_t once_upto = opt.once ? reader_last_id(&reader) : 0;
	bool rejected_any = false;
	exit_code = 0;
	while (!stop_requested) {
		sdnotify_watchdog(now_boottime_ns());
		if (reload_requested) {
			reload_requested = 0;
			sink = reload_credentials(&opt, &cred, sink);
			if (!sink) {
				exit_code = 1;
				break;
			}
		}
		if (opt.once && now_boottime_ns() > once_deadline) {
			log_error("--once: gave up after %ld s with records still pending",
				  opt.once_timeout_ms / 1000);
			exit_code = 1;
			break;
		}
		sink_prepare(sink, &reader, &res);
		if (res.outcome != SEND_OK) {
			note_error(&reader, "preparing the sink", &res);
			nap(backoff_next(&backoff, res.retry_after_ms));
			continue;
		}
		if (reader_next(&reader, opt.batch_records, opt.batch_bytes, &batch) != 0) {
			log_error("reading the outbox: %s", sqlite3_errmsg(reader.db));
			nap(1000);
			continue;
		}
		if (batch.n == 0 || (opt.once && batch.first_id > once_upto)) {
			if (opt.once)
				break;
			nap(opt.poll_ms);
			continue;
		}
		/* Not full yet and young: let it fill, unless we are asked to finish. */
		int64_t age_ms = ((int64_t)now_realtime_ns() - batch.r[0].created_ns) / 1000000;
		if (!opt.once && batch.n < opt.batch_records && batch.bytes < opt.batch_bytes / 2 &&
		    age_ms < opt.batch_age_ms) {
			nap(opt.batch_age_ms - age_ms < opt.poll_ms ? opt.batch_age_ms - age_ms
								    : opt.poll_ms);
			continue;
		}
		if (reader_attempt(&reader, &batch) != 0) {
			log_error("cannot note the batch in %s: %s", opt.state_path,
				  sqlite3_errmsg(reader.state));
			nap(backoff_next(&backoff, -1));
			continue;
		}
		sink_send(sink, &batch, reader.host_id, &res);
		if (res.outcome == SEND_OK) {
			if (reader_delivered(&reader, &batch, sink->name,
					     (int64_t)now_realtime_ns()) != 0)
				log_error(
				    "delivered records %lld..%lld but could not forget them: they "
				    "will be sent again (harmless at the sink)",
				    (long long)batch.first_id, (long long)batch.last_id);
			log_debug("delivered %zu records (%lld..%lld)", batch.n,
				  (long long)batch.first_id, (long long)batch.last_id);
			backoff_reset(&backoff);
		} else if (res.outcome == SEND_REJECTED) {
			note_error(&reader, "batch refused", &res);
			if (reader_dead_letter(&reader, &batch, sink->name, res.status, res.answer,
					       sink->lines, (int64_t)now_realtime_ns()) != 0) {
				log_error("cannot set the refused batch aside; retrying it");
				nap(backoff_next(&backoff, -1));
			} else {
				log_warn("%zu records (%lld..%lld) set aside in dead_letters",
					 batch.n, (long long)batch.first_id,
					 (long long)batch.last_id);
				rejected_any = true;
			}
		} else {
			note_error(&reader, "delivery failed, will retry", &res);
			nap(backoff_next(&backoff, res.retry_after_ms));
		}
	}
	if (opt.once && exit_code == 0 &&
	    (rejected_any || reader_pending(&reader, once_upto) > 0 || stop_requested))
		exit_code = 1;
	log_info("stopped; %lld records pending", (long long)reader_pending(&reader, 0));
	batch_free(&batch);
	reader_close(&reader);
out_lock:
	close(lock);
out_sink:
	sink_free(sink);
out_curl:
	curl_global_cleanup();
	credentials_wipe(&cred);
	return exit_code;
}
