#include "aggregator/receive/receiver.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggregator/outbox/outbox.h"
#include "aggregator/receive/internal.h"
#include "aggregator/receive/metrics.h"
#include "common/frame.h"
#include "common/hostinfo.h"
#include "common/fileutil.h"
#include "common/log.h"
#include "common/sdnotify.h"
#include "common/timeutil.h"

#define BATCH_MAX_EVENTS 200000
#define RETRY_NS (1 * NSEC_PER_SEC)
/*
 * What the aggregator makes itself (host samples, the insight tick's signals) waits
 * for the next frame's commit: at idle the collector's heartbeat brings one every
 * second, and a commit of their own made two commits a second where one does
 * (~10% of an idle host's writes). With no frames coming they go in after this.
 */
#define IDLE_COMMIT_NS (1500 * NSEC_PER_MSEC)
/* Without a receive descriptor nng is asked this often; with one, see wait_ms(). */
#define RECV_WAIT_MS 100
/* The longest wait with nothing due: a signal or a frame ends it sooner. */
#define IDLE_WAIT_MAX_MS 1000

int receiver_init(struct receiver *r, struct ingest *ingest, struct store *store)
{
	memset(r, 0, sizeof(*r));
	r->ingest = ingest;
	r->store = store;
	r->agg.started_epoch_ns = (int64_t)now_realtime_ns();
	r->agg.updated_epoch_ns = r->agg.started_epoch_ns;
	r->agg.pid = (uint32_t)getpid();
	r->agg_dirty = true;
	host_sampler_init(&r->host, "/proc", "/sys/block");
	r->host_every_ns = NSEC_PER_SEC;
	read_host_id(r->host_id, sizeof(r->host_id));
	frame_arena_init(&r->arena);
	r->commit_every_ns = RECEIVER_COMMIT_EVERY_MS * NSEC_PER_MSEC;
	r->wake_fd = -1;
	r->lifeline_fd = -1;
	peers_init(&r->peers, NULL);
	r->policy.on_pipe = peers_on_pipe;
	r->policy.on_pipe_arg = &r->peers;
	return 0;
}

void receiver_free(struct receiver *r)
{
	for (struct stream_state *s = r->streams; s;) {
		struct stream_state *next = s->next;
		free(s);
		s = next;
	}
	r->streams = NULL;
	frame_arena_destroy(&r->arena);
}

static struct stream_state *stream_for(struct receiver *r, const Tracer__Frame *f)
{
	struct stream_state *s;
	char hex[33];

	for (s = r->streams; s; s = s->next)
		if (memcmp(s->id, f->stream_id.data, 16) == 0)
			return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	memcpy(s->id, f->stream_id.data, 16);
	format_hex(s->id, 16, hex, sizeof(hex));
	int found = store_get_stream(r->store, hex, &s->row);
	if (found <= 0) {
		memset(&s->row, 0, sizeof(s->row));
		snprintf(s->row.stream_id, sizeof(s->row.stream_id), "%s", hex);
		s->row.first_seen_epoch_ns = (int64_t)now_realtime_ns();
		s->first_frame_pending = true;
		/* A collector we have never heard from: its snapshot decides who lives. */
		ingest_new_generation(r->ingest);
		log_info("new collector stream %s (pid %u, host %s)", hex, f->collector_pid,
			 f->hostname ? f->hostname : "?");
	} else {
		log_info("collector stream %s resumes after seq %llu", hex,
			 (unsigned long long)s->row.last_seq);
	}
	s->next = r->streams;
	r->streams = s;
	return s;
}

static void note_bad_frame(struct receiver *r, enum frame_error err, const char *why)
{
	r->agg.bad_frames++;
	snprintf(r->agg.last_bad_frame, sizeof(r->agg.last_bad_frame), "%s: %s",
		 frame_error_name(err), why);
	r->agg_dirty = true;
	if (r->agg.bad_frames <= 10 || r->agg.bad_frames % 1000 == 0)
		log_warn("rejected frame #%llu: %s: %s", (unsigned long long)r->agg.bad_frames,
			 frame_error_name(err), why);
}

/* Asks for the missing frame again, at most once a second while it stays missing. */
static void refuse_early_frame(struct receiver *r, struct stream_state *s, uint64_t seq)
{
	uint64_t from = s->row.last_seq + 1, now = now_boottime_ns();
	struct ipc_ack ask = {.seq = s->row.last_seq, .resend = true};
	uint8_t buf[IPC_RESEND_LEN];

	s->early_frames++;
	if (from == s->resend_from && now - s->resend_asked_ns < NSEC_PER_SEC)
		return;
	log_info("stream %s: frame %llu came before %llu; asking for it again (%llu early so far)",
		 s->row.stream_id, (unsigned long long)seq, (unsigned long long)from,
		 (unsigned long long)s->early_frames);
	memcpy(ask.stream_id, s->id, sizeof(ask.stream_id));
	size_t len = ipc_ack_pack(&ask, buf);
	peers_send(r->server.sock, s->pipe, buf, len);
	s->resend_from = from;
	s->resend_asked_ns = now;
}

void receiver_handle(struct receiver *r, const uint8_t *buf, size_t len)
{
	Tracer__Frame *f = NULL;
	char why[256] = "";
	enum frame_error err = frame_decode(&r->arena, buf, len, &f, why, sizeof(why));
	struct stream_state *s;

	r->agg.frames_received++;
	if (err != FRAME_OK) {
		note_bad_frame(r, err, why);
		return;
	}
	s = stream_for(r, f);
	if (!s) {
		log_error("out of memory tracking a stream; frame %llu not applied",
			  (unsigned long long)f->seq);
		frame_arena_reset(&r->arena);
		return;
	}
	s->pipe = r->current_pipe;
	uint64_t expected = s->row.last_seq + 1;
	if (f->has_oldest_seq && f->oldest_seq > expected) {
		/* The collector dropped these from its full queue (and counted their events). */
		uint64_t missing = f->oldest_seq - expected;
		s->row.seq_gaps += missing;
		s->row.last_seq = f->oldest_seq - 1;
		s->dirty = true;
		log_warn("stream %s: %llu frames dropped by the collector before seq %llu",
			 s->row.stream_id, (unsigned long long)missing,
			 (unsigned long long)f->oldest_seq);
		expected = f->oldest_seq;
	}
	if (f->seq < expected) {
		/* Resent after a reconnect: already committed. Ack it again. */
		s->row.duplicate_frames++;
		s->dirty = true;
	} else if (f->seq > expected && f->has_oldest_seq) {
		/* It overtook a resent one: applying it would lose the one still coming. */
		refuse_early_frame(r, s, f->seq);
		frame_arena_reset(&r->arena);
		return;
	} else {
		if (f->seq > expected && s->row.last_seq > 0) {
			/* A collector that does not say what it dropped: count the gap. */
			uint64_t missing = f->seq - expected;
			s->row.seq_gaps += missing;
			log_warn("stream %s: %llu frames missing before seq %llu", s->row.stream_id,
				 (unsigned long long)missing, (unsigned long long)f->seq);
		}
		if (s->first_frame_pending) {
			s->first_frame_pending = false;
			stream_begin_blind_window(r, s, f);
		}
		ingest_set_frame_context(r->ingest, f);
		for (size_t i = 0; i < f->n_events; i++)
			ingest_event(r->ingest, f->events[i]);
		if (f->snapshot_done) {
			if (s->row.has_blind)
				s->row.blind_processes = ingest_end_blind_window(r->ingest);
			ingest_snapshot_done(r->ingest, f->watermark_ns);
		}
		stream_update_stats(s, f);
	}
	s->ack_seq = s->row.last_seq; /* everything up to it is in this commit or earlier */
	s->ack_pending = true;
	frame_arena_reset(&r->arena);
}

static void send_acks(struct receiver *r)
{
	for (struct stream_state *s = r->streams; s; s = s->next) {
		struct ipc_ack ack;
		uint8_t buf[IPC_RESEND_LEN];

		if (!s->ack_pending)
			continue;
		memcpy(ack.stream_id, s->id, 16);
		ack.seq = s->ack_seq;
		ack.resend = false;
		size_t len = ipc_ack_pack(&ack, buf);
		peers_send(r->server.sock, s->pipe, buf, len);
		s->ack_pending = false;
	}
}

/* Tells the collector we are alive even while nothing can be acked (see ipc.h). */
static void send_heartbeat(struct receiver *r)
{
	uint64_t now = now_boottime_ns();
	struct ipc_ack beat = {.seq = 0};
	uint8_t buf[IPC_RESEND_LEN];

	if (now < r->next_heartbeat_ns)
		return;
	size_t len = ipc_ack_pack(&beat, buf);
	peers_broadcast(&r->peers, r->server.sock, buf, len);
	r->next_heartbeat_ns = now + IPC_HEARTBEAT_NS;
}

/*
 * Before a commit (no transaction open): the outbox on or off as its file
 * says. Off, what it held goes out first; on, it queues from this commit.
 */
static void follow_outbox_gate(struct receiver *r)
{
	if (!r->outbox || !r->outbox_when)
		return;
	bool on = outbox_gate_open(r->outbox_when);
	if (on == (r->store->outbox != NULL))
		return;
	if (!on && outbox_release_held(r->outbox) != 0)
		return; /* try again at the next commit */
	r->store->outbox = on ? r->outbox : NULL;
	log_info("outbox %s: %s %s", on ? "on" : "off", r->outbox_when,
		 on ? "exists (a shipper is configured)" : "is gone (no shipper configured)");
}

/* How often what runs now goes to the outbox (docs/shipping.md, "Live rows"). */
#define LIVE_EVERY_NS (5 * NSEC_PER_SEC)

int receiver_commit(struct receiver *r)
{
	uint64_t refused = __atomic_load_n(&r->policy.refused, __ATOMIC_RELAXED) +
			   __atomic_load_n(&r->peers.refused, __ATOMIC_RELAXED);
	bool work = ingest_has_pending(r->ingest) || r->agg_dirty;
	int rc;

	/* Written with the batch that changed them, so they match what is stored. */
	if (memcmp(&r->ingest->stats, &r->agg.events, sizeof(r->agg.events)) != 0) {
		r->agg.events = r->ingest->stats;
		work = true;
	}

	for (struct stream_state *s = r->streams; s; s = s->next)
		work = work || s->dirty || s->ack_pending;
	if (refused != r->agg.refused_peers) {
		r->agg.refused_peers = refused;
		work = true;
	}
	if (!work)
		return 0;
	follow_outbox_gate(r);
	r->agg.updated_epoch_ns = (int64_t)now_realtime_ns();
	if (store_begin(r->store) != 0)
		goto fail;
	if (ingest_write(r->ingest) != 0)
		goto fail;
	/* What runs now, every LIVE_EVERY_NS: within 10 s of its start at the sink. */
	if (r->store->outbox && now_boottime_ns() >= r->next_live_ns) {
		if (store_ship_live(r->store) != 0)
			goto fail;
		r->next_live_ns = now_boottime_ns() + LIVE_EVERY_NS;
	}
	for (struct stream_state *s = r->streams; s; s = s->next) {
		if (s->dirty && store_put_stream(r->store, &s->row) != 0)
			goto fail;
		/* Collector stats ship once a minute and when the stream ends. */
		if (s->dirty && r->store->outbox &&
		    (s->row.final || now_boottime_ns() >= s->next_ship_ns)) {
			if (store_ship_collector_stats(r->store, s->row.stream_id) != 0)
				goto fail;
			s->next_ship_ns = now_boottime_ns() + 60 * NSEC_PER_SEC;
		}
		for (unsigned k = 0; k < s->n_losses; k++)
			if (s->losses[k].dirty &&
			    store_put_loss(r->store, s->row.stream_id, s->losses[k].hop,
					   s->losses[k].type, s->losses[k].count) != 0)
				goto fail;
	}
	if (store_put_aggregator_stats(r->store, &r->agg) != 0)
		goto fail;
	rc = store_commit(r->store);
	if (rc != 0)
		goto fail_committed;
	for (struct stream_state *s = r->streams; s; s = s->next) {
		s->dirty = false;
		for (unsigned k = 0; k < s->n_losses; k++)
			s->losses[k].dirty = false;
	}
	r->agg_dirty = false;
	r->frames_uncommitted = 0;
	r->events_uncommitted = 0;
	r->last_commit_ns = now_boottime_ns();
	ingest_committed(r->ingest, r->last_commit_ns);
	send_acks(r);
	if (r->commit_failed)
		log_info("database writable again; backlog committed");
	r->commit_failed = false;
	return 0;
fail:
	store_rollback(r->store);
fail_committed:
	if (!r->commit_failed)
		log_error("cannot write to the database (%s); holding frames unacknowledged and "
			  "retrying every second",
			  sqlite3_errmsg(r->store->db));
	r->commit_failed = true;
	r->next_retry_ns = now_boottime_ns() + RETRY_NS;
	return -1;
}

/* How often the listener proves it still admits connections (ipc_listener_check). */
#define LISTENER_CHECK_NS (2 * NSEC_PER_SEC)

/*
 * Waits up to wait_ms for a frame on the socket's receive descriptor, or for
 * a signal: the handlers write to wake_fd, because a signal delivered to one
 * of nng's threads does not interrupt this poll(). Our own poll() rather than
 * a receive timeout: nng 1.5's timer threads spin on the clock around each
 * expiry, which cost the idle aggregator ~0.7% of a CPU at ten timeouts a
 * second.
 */
static void wait_for_frame(const struct receiver *r, int recv_fd, int wait_ms)
{
	struct pollfd p[3] = {{.fd = recv_fd, .events = POLLIN},
			      {.fd = r->wake_fd, .events = POLLIN},
			      {.fd = r->lifeline_fd, .events = POLLIN}};

	if (recv_fd < 0 || (poll(p, 3, wait_ms) < 0 && errno != EINTR)) {
		sleep_ns((uint64_t)wait_ms * NSEC_PER_MSEC);
		return;
	}
	if (p[1].revents & POLLIN) {
		char drain[64];
		while (read(r->wake_fd, drain, sizeof(drain)) > 0)
			;
	}
}

/* Lowers *due to t when t is still ahead of now (a past time is acted on now). */
static void earliest_ahead(uint64_t *due, uint64_t t, uint64_t now)
{
	if (t > now && t < *due)
		*due = t;
}

/*
 * How long to wait for the next frame: until the batch's commit is due once
 * applied frames wait for it; otherwise until the next scheduled job (the
 * heartbeat, the host sample and the insight tick, which come due together,
 * the listener check, a held commit). Waking ten times a second regardless
 * was most of the idle aggregator's context switches.
 */
static int wait_ms(const struct receiver *r, int recv_fd, uint64_t now)
{
	uint64_t due;

	if (r->frames_uncommitted) {
		due = r->last_commit_ns + r->commit_every_ns;
		if (now >= due)
			return 0;
	} else {
		due =
		    now + (uint64_t)(recv_fd < 0 ? RECV_WAIT_MS : IDLE_WAIT_MAX_MS) * NSEC_PER_MSEC;
		earliest_ahead(&due, r->next_heartbeat_ns, now);
		earliest_ahead(&due, r->next_tick_ns, now);
		if (r->host_every_ns)
			earliest_ahead(&due, r->next_host_ns, now);
		if (r->server.policy)
			earliest_ahead(&due, r->next_listener_check_ns, now);
		earliest_ahead(&due, r->last_commit_ns + IDLE_COMMIT_NS, now);
	}
	uint64_t ms = (due - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
	return ms < IDLE_WAIT_MAX_MS ? (int)ms : IDLE_WAIT_MAX_MS;
}

/*
 * Frames are committed together at most every commit_every_ns: each commit
 * rewrites the last page of every table and index it touched, so fewer,
 * larger transactions write less (the exit-to-row latency grows by as much).
 */
static bool commit_due(const struct receiver *r, uint64_t now)
{
	return r->frames_uncommitted && (now - r->last_commit_ns >= r->commit_every_ns ||
					 r->frames_uncommitted >= RECEIVER_BATCH_MAX_FRAMES ||
					 r->events_uncommitted >= BATCH_MAX_EVENTS);
}

#define METRICS_EVERY_NS (10 * NSEC_PER_SEC)

/* The metrics file; a failure is logged once until it works again. */
static void write_metrics(struct receiver *r)
{
	if (metrics_write(r->store->db, r->shipper_state, r->metrics_path,
			  (int64_t)now_realtime_ns()) == 0) {
		r->metrics_failing = false;
		return;
	}
	if (!r->metrics_failing)
		log_warn("cannot write the metrics file %s: %s", r->metrics_path, strerror(errno));
	r->metrics_failing = true;
}

/* Between commits (no transaction open): the database back within its bounds. */
static void apply_retention(struct receiver *r)
{
	struct prune_result p;

	if (!r->retention.max_age_ns && !r->retention.max_bytes)
		return;
	if (store_prune(r->store, &r->retention, (int64_t)now_realtime_ns(), &p) != 0)
		return; /* logged; the next check tries again */
	if (p.runs || p.processes || p.samples || p.host_samples)
		log_info("retention: deleted %lld runs, %lld processes, %lld samples, %lld host "
			 "samples; data %.1f -> %.1f MiB",
			 (long long)p.runs, (long long)p.processes, (long long)p.samples,
			 (long long)p.host_samples, (double)p.bytes_before / 1048576.0,
			 (double)p.bytes_after / 1048576.0);
	else if (r->retention.max_bytes && p.bytes_after > r->retention.max_bytes)
		log_warn("retention: data %.1f MiB over the %.1f MiB bound, and nothing old "
			 "enough to delete",
			 (double)p.bytes_after / 1048576.0,
			 (double)r->retention.max_bytes / 1048576.0);
}

/* After our starter died: how long the collector's last frames may take to come. */
#define ORPHAN_GRACE_NS (1 * NSEC_PER_SEC)

/* Every stream heard has sent its last frame (its collector stopped cleanly). */
static bool all_streams_final(const struct receiver *r)
{
	for (const struct stream_state *s = r->streams; s; s = s->next)
		if (!s->row.final)
			return false;
	return r->streams != NULL;
}

/*
 * The process that started us (holding the lifeline's write end) is gone, and
 * our collector stops too: take its last frames (the launcher's own end among
 * them) for a moment, then stop. True when it is time to stop.
 */
static bool orphan_stop_due(struct receiver *r, uint64_t *orphaned_until)
{
	uint64_t now = now_boottime_ns();

	if (!*orphaned_until && fd_hung_up(r->lifeline_fd)) {
		log_warn("the process that started us is gone: taking our collector's last "
			 "frames, then stopping");
		*orphaned_until = now + ORPHAN_GRACE_NS;
		r->lifeline_fd = -1; /* a hung-up pipe would wake every poll */
	}
	return *orphaned_until && (now >= *orphaned_until || all_streams_final(r));
}

/* A message from the socket: a frame only from a connection that proved itself. */
static void receive_message(struct receiver *r, nng_msg *msg)
{
	uint32_t pipe = nng_pipe_id(nng_msg_get_pipe(msg));
	enum peer_verdict v = peers_judge(&r->peers, pipe, nng_msg_body(msg), nng_msg_len(msg));

	if (v == PEER_PROVEN_NOW)
		r->next_heartbeat_ns = 0; /* tell it at once that we are here */
	if (v != PEER_FRAME)
		return;
	uint64_t before = r->ingest->stats.events;
	r->current_pipe = pipe;
	receiver_handle(r, nng_msg_body(msg), nng_msg_len(msg));
	r->current_pipe = 0;
	r->events_uncommitted += r->ingest->stats.events - before;
	r->frames_uncommitted++;
}

int receiver_run(struct receiver *r, volatile sig_atomic_t *stop)
{
	int recv_fd = -1;
	uint64_t orphaned_until = 0;

	if (nng_socket_get_int(r->server.sock, NNG_OPT_RECVFD, &recv_fd) != 0) {
		log_warn("no receive descriptor from nng; checking for frames every %d ms",
			 RECV_WAIT_MS);
		recv_fd = -1;
	}
	while (!*stop) {
		if (orphan_stop_due(r, &orphaned_until)) {
			*stop = SIGTERM;
			break;
		}
		if (r->reload && *r->reload) {
			*r->reload = 0;
			correlator_reload(&r->ingest->corr);
		}

		send_heartbeat(r);
		if (r->commit_failed) {
			if (now_boottime_ns() < r->next_retry_ns) {
				sleep_ns(50 * NSEC_PER_MSEC);
				continue;
			}
			receiver_commit(r);
			continue;
		}
		/* Apply what is waiting (bounded); commit_due() says when it goes in. */
		wait_for_frame(r, recv_fd, wait_ms(r, recv_fd, now_boottime_ns()));
		while (r->frames_uncommitted < RECEIVER_BATCH_MAX_FRAMES &&
		       r->events_uncommitted < BATCH_MAX_EVENTS) {
			nng_msg *msg;
			if (nng_recvmsg(r->server.sock, &msg, NNG_FLAG_NONBLOCK) != 0)
				break;
			receive_message(r, msg);
			nng_msg_free(msg);
		}
		peers_expire(&r->peers, now_boottime_ns());
		uint64_t now = now_boottime_ns();
		sdnotify_watchdog(now);
		if (r->server.policy && now >= r->next_listener_check_ns) {
			ipc_listener_check(&r->server, now);
			r->next_listener_check_ns = now + LISTENER_CHECK_NS;
		}
		if (r->host_every_ns && now >= r->next_host_ns) {
			struct host_sample_row row;
			if (host_sample(&r->host, (int64_t)now_realtime_ns(), &row) == 1) {
				snprintf(row.host_id, sizeof(row.host_id), "%s", r->host_id);
				ingest_host_sample(r->ingest, &row);
			}
			r->next_host_ns = now + r->host_every_ns;
		}
		if (now >= r->next_tick_ns) {
			ingest_tick(r->ingest, now, (int64_t)now_realtime_ns());
			r->next_tick_ns = now + NSEC_PER_SEC;
		}
		if (commit_due(r, now) ||
		    (!r->frames_uncommitted && now - r->last_commit_ns >= IDLE_COMMIT_NS))
			receiver_commit(r); /* returns at once when there is nothing to write */
		if (r->metrics_path && now >= r->next_metrics_ns) {
			write_metrics(r);
			r->next_metrics_ns = now + METRICS_EVERY_NS;
		}
		if (r->prune_every_ns && now >= r->next_prune_ns && !r->frames_uncommitted &&
		    !r->commit_failed) {
			apply_retention(r);
			r->next_prune_ns = now_boottime_ns() + r->prune_every_ns;
		}
	}
	if (orphaned_until)
		ingest_orphaned(r->ingest, (int64_t)now_realtime_ns());
	/* Clean stop: commit what we have; acks go to a collector still there. */
	if (receiver_commit(r) != 0)
		return -1;
	if (r->metrics_path)
		write_metrics(r);
	return 0;
}
