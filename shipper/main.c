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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "common/hostinfo.h"
#include "common/log.h"
#include "common/privdrop.h"
#include "common/sdnotify.h"
#include "common/timeutil.h"
#include "shipper/credentials.h"
#include "shipper/options.h"
#include "shipper/outbox_reader.h"
#include "shipper/retry.h"
#include "shipper/sink.h"

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

/* As root: the state's directory, then the drop to --user. */
static int become_user(const struct shipper_options *opt)
{
	struct run_as who;
	int needed = run_as_needed(opt->user);

	if (needed <= 0)
		return needed;
	bool known = run_as_lookup(opt->user, &who) == 0;
	if (known)
		make_state_dir(opt->state_path, &who);
	if (!known || drop_privileges(&who) != 0) {
		log_error("refusing to run privileged: cannot become %s", opt->user);
		return -1;
	}
	return 0;
}

/* What the delivery loop works with. */
struct delivery {
	const struct shipper_options *opt;
	struct credentials *cred;
	struct sink *sink;
	struct outbox_reader *reader;
	struct batch batch;
	struct backoff backoff;
	uint64_t once_deadline;
	int64_t once_upto; /* --once: what is pending now; records queued meanwhile wait */
	bool rejected_any;
};

/* The sink answered a batch: forget it, set it aside, or wait to retry it. */
static void after_send(struct delivery *d, const struct send_result *res)
{
	struct batch *batch = &d->batch;

	if (res->outcome == SEND_OK) {
		if (reader_delivered(d->reader, batch, d->sink->name, (int64_t)now_realtime_ns()) !=
		    0)
			log_error("delivered records %lld..%lld but could not forget them: they "
				  "will be sent again (harmless at the sink)",
				  (long long)batch->first_id, (long long)batch->last_id);
		log_debug("delivered %zu records (%lld..%lld)", batch->n,
			  (long long)batch->first_id, (long long)batch->last_id);
		backoff_reset(&d->backoff);
	} else if (res->outcome == SEND_REJECTED) {
		note_error(d->reader, "batch refused", res);
		if (reader_dead_letter(d->reader, batch, d->sink->name, res->status, res->answer,
				       d->sink->lines, (int64_t)now_realtime_ns()) != 0) {
			log_error("cannot set the refused batch aside; retrying it");
			nap(backoff_next(&d->backoff, -1));
		} else {
			log_warn("%zu records (%lld..%lld) set aside in dead_letters", batch->n,
				 (long long)batch->first_id, (long long)batch->last_id);
			d->rejected_any = true;
		}
	} else {
		note_error(d->reader, "delivery failed, will retry", res);
		nap(backoff_next(&d->backoff, res->retry_after_ms));
	}
}

/* A SIGHUP's credentials, or --once's deadline: -1 stops the loop with exit 1. */
static int between_batches(struct delivery *d)
{
	if (reload_requested) {
		reload_requested = 0;
		d->sink = reload_credentials(d->opt, d->cred, d->sink);
		if (!d->sink)
			return -1;
	}
	if (d->opt->once && now_boottime_ns() > d->once_deadline) {
		log_error("--once: gave up after %ld s with records still pending",
			  d->opt->once_timeout_ms / 1000);
		return -1;
	}
	return 0;
}

/* Batches to the sink until stopped (or, with --once, until nothing is pending). */
static int deliver(struct delivery *d)
{
	const struct shipper_options *opt = d->opt;
	struct send_result res;

	while (!stop_requested) {
		sdnotify_watchdog(now_boottime_ns());
		if (between_batches(d) != 0)
			return 1;
		sink_prepare(d->sink, d->reader, &res);
		if (res.outcome != SEND_OK) {
			note_error(d->reader, "preparing the sink", &res);
			nap(backoff_next(&d->backoff, res.retry_after_ms));
			continue;
		}
		if (reader_next(d->reader, opt->batch_records, opt->batch_bytes, &d->batch) != 0) {
			log_error("reading the outbox: %s", sqlite3_errmsg(d->reader->db));
			nap(1000);
			continue;
		}
		if (d->batch.n == 0 || (opt->once && d->batch.first_id > d->once_upto)) {
			if (opt->once)
				break;
			nap(SHIPPER_POLL_MS);
			continue;
		}
		/* Not full yet and young: let it fill, unless we are asked to finish. */
		int64_t age_ms = ((int64_t)now_realtime_ns() - d->batch.r[0].created_ns) / 1000000;
		if (!opt->once && d->batch.n < opt->batch_records &&
		    d->batch.bytes < opt->batch_bytes / 2 && age_ms < opt->batch_age_ms) {
			nap(opt->batch_age_ms - age_ms < SHIPPER_POLL_MS
				? opt->batch_age_ms - age_ms
				: SHIPPER_POLL_MS);
			continue;
		}
		if (reader_attempt(d->reader, &d->batch) != 0) {
			log_error("cannot note the batch in %s: %s", opt->state_path,
				  sqlite3_errmsg(d->reader->state));
			nap(backoff_next(&d->backoff, -1));
			continue;
		}
		sink_send(d->sink, &d->batch, d->reader->host_id, &res);
		after_send(d, &res);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct shipper_options opt;
	struct credentials cred = {0};
	struct outbox_reader reader;
	char err[512];
	int exit_code = 1;

	log_init("tracer-shipper");
	sdnotify_init();
	if (options_parse(&shipper_program, argc, argv, &opt) != 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGHUP, on_hup);
	if (become_user(&opt) != 0)
		return 1;
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
	struct delivery d = {.opt = &opt, .cred = &cred, .reader = &reader};
	d.sink = sink_open(opt.sink_url, &ho, err, sizeof(err));
	if (!d.sink) {
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
	log_info("delivering %s to %s as host %s", opt.db_path, d.sink->name, reader.host_id);
	sdnotify_ready();
	backoff_init(&d.backoff, opt.retry_max_ms < 500 ? opt.retry_max_ms : 500, opt.retry_max_ms,
		     (unsigned)getpid() ^ (unsigned)now_realtime_ns());
	d.once_deadline = now_boottime_ns() + (uint64_t)opt.once_timeout_ms * 1000000ULL;
	d.once_upto = opt.once ? reader_last_id(&reader) : 0;
	exit_code = deliver(&d);
	if (opt.once && exit_code == 0 &&
	    (d.rejected_any || reader_pending(&reader, d.once_upto) > 0 || stop_requested))
		exit_code = 1;
	log_info("stopped; %lld records pending", (long long)reader_pending(&reader, 0));
	batch_free(&d.batch);
	reader_close(&reader);
out_lock:
	close(lock);
out_sink:
	sink_free(d.sink);
out_curl:
	curl_global_cleanup();
	credentials_wipe(&cred);
	return exit_code;
}
