#include "collector/send/sender.h"
#include "collector/send/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/frame.h"
#include "common/ipc.h"
#include "common/log.h"
#include "common/timeutil.h"

#define QUEUE_MAX_FRAMES 65536

/* Is the listener the aggregator we expect? Asked before a byte is sent. */
static bool listener_trusted(const struct sender *s, nng_pipe pipe)
{
	uint64_t pid = 0, uid = UINT64_MAX;

	if (nng_pipe_get_uint64(pipe, NNG_OPT_IPC_PEER_PID, &pid) != 0 ||
	    nng_pipe_get_uint64(pipe, NNG_OPT_IPC_PEER_UID, &uid) != 0)
		return false;
	if (s->trust.listener_pid)
		return pid == (uint64_t)s->trust.listener_pid;
	return uid == 0 || uid == (uint64_t)s->trust.listener_uid;
}

/* The key goes first on a new pipe; 0 once nng took it (it may be full, then the pump retries). */
static int send_key(struct sender *s, uint32_t pipe)
{
	uint8_t auth[IPC_AUTH_LEN];
	int rv;

	ipc_auth_pack(s->trust.key, auth);
	rv = nng_send(s->ipc.sock, auth, sizeof(auth), NNG_FLAG_NONBLOCK);
	memset(auth, 0, sizeof(auth));
	if (rv == 0)
		__atomic_store_n(&s->auth_sent_pipe, pipe, __ATOMIC_RELEASE);
	return rv;
}

static void track_pipe(nng_pipe pipe, nng_pipe_ev ev, void *arg)
{
	struct sender *s = arg;
	uint32_t id = nng_pipe_id(pipe);

	if (ev == NNG_PIPE_EV_ADD_PRE && !listener_trusted(s, pipe)) {
		uint64_t pid = 0, uid = 0;
		nng_pipe_get_uint64(pipe, NNG_OPT_IPC_PEER_PID, &pid);
		nng_pipe_get_uint64(pipe, NNG_OPT_IPC_PEER_UID, &uid);
		uint64_t n = __atomic_add_fetch(&s->refused_listeners, 1, __ATOMIC_RELAXED);
		if (n <= 10 || n % 1000 == 0)
			log_warn("%s is held by pid %llu (uid %llu), not the aggregator we expect: "
				 "hung up without sending (%llu so far)",
				 s->ipc.path, (unsigned long long)pid, (unsigned long long)uid,
				 (unsigned long long)n);
		nng_pipe_close(pipe);
	} else if (ev == NNG_PIPE_EV_ADD_POST) {
		send_key(s, id);
		__atomic_store_n(&s->pipe_id, id, __ATOMIC_RELEASE);
		__atomic_add_fetch(&s->connections, 1, __ATOMIC_RELEASE);
	} else if (ev == NNG_PIPE_EV_REM_POST) {
		__atomic_compare_exchange_n(&s->pipe_id, &id, 0, false, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE);
	}
}

int sender_connect(struct sender *s, const char *socket_path, const struct sender_trust *trust)
{
	int rv;

	memset(s, 0, sizeof(*s));
	s->trust = *trust;
	s->send_fd = -1;
	rv = ipc_dial(&s->ipc, socket_path, track_pipe, s);
	if (rv != 0) {
		log_error("cannot set up the connection to %s: %s", socket_path, nng_strerror(rv));
		return -1;
	}
	/* Asked for now: nng makes the descriptor on first use, which the sandbox may refuse. */
	if ((rv = nng_socket_get_int(s->ipc.sock, NNG_OPT_SENDFD, &s->send_fd)) != 0) {
		log_warn("no send descriptor from nng (%s): a backlog goes out once per tick",
			 nng_strerror(rv));
		s->send_fd = -1;
	}
	return 0;
}

int sender_start(struct sender *s, size_t max_queue_bytes)
{
	if (getrandom(s->stream_id, sizeof(s->stream_id), 0) != sizeof(s->stream_id))
		return -1;
	if (read_boot_id(s->boot_id) != 0)
		log_warn("cannot read the boot id; frames carry zeros");
	read_host_id(s->host_id, sizeof(s->host_id));
	gethostname(s->hostname, sizeof(s->hostname) - 1);
	struct utsname uts;
	if (uname(&uts) == 0)
		snprintf(s->machine, sizeof(s->machine), "%s", uts.machine);
	s->next_seq = 1;
	s->q_max_bytes = max_queue_bytes;
	s->q_cap = QUEUE_MAX_FRAMES;
	s->q = calloc(s->q_cap, sizeof(*s->q));
	return s->q ? 0 : -1;
}

int sender_init(struct sender *s, const char *socket_path, size_t max_queue_bytes,
		const struct sender_trust *trust)
{
	if (sender_connect(s, socket_path, trust) != 0)
		return -1;
	return sender_start(s, max_queue_bytes);
}

static struct queued_frame *slot(struct sender *s, size_t i)
{
	return &s->q[(s->q_head + i) % s->q_cap];
}

static void count_lost(struct sender *s, uint64_t seq, uint32_t n_events, const uint32_t *types)
{
	s->queue_drops += n_events;
	s->queue_drop_frames++;
	for (int t = 0; t < TRACER_EV_COUNT; t++)
		s->queue_drops_by_type[t] += types[t];
	handover_settle(s, seq, types);
}

static struct unconfirmed_drop *unconfirmed(struct sender *s, size_t i)
{
	return &s->unconfirmed[(s->unconfirmed_head + i) % SENDER_UNCONFIRMED_MAX];
}

static void pop_unconfirmed(struct sender *s, bool delivered)
{
	struct unconfirmed_drop *u = unconfirmed(s, 0);

	if (delivered) {
		s->drops_confirmed_delivered++;
		handover_settle(s, u->seq, u->types);
	} else {
		count_lost(s, u->seq, u->n_events, u->types);
	}
	s->unconfirmed_head = (s->unconfirmed_head + 1) % SENDER_UNCONFIRMED_MAX;
	s->unconfirmed_count--;
}

/* No ack can vouch for them any more (new connection, shutdown). */
static void lose_all_unconfirmed(struct sender *s)
{
	while (s->unconfirmed_count > 0)
		pop_unconfirmed(s, false);
}

/* The aggregator refused everything after seq: those drops are losses. */
static void lose_unconfirmed_after(struct sender *s, uint64_t seq)
{
	while (s->unconfirmed_count > 0 && unconfirmed(s, s->unconfirmed_count - 1)->seq > seq) {
		struct unconfirmed_drop *u = unconfirmed(s, s->unconfirmed_count - 1);
		count_lost(s, u->seq, u->n_events, u->types);
		s->unconfirmed_count--;
	}
}

/* An ack for seq arrived over pipe: settles every unconfirmed drop it covers. */
static void settle_unconfirmed(struct sender *s, uint64_t seq, uint32_t pipe)
{
	while (s->unconfirmed_count > 0 && unconfirmed(s, 0)->seq <= seq) {
		uint32_t sent_on = unconfirmed(s, 0)->pipe;
		pop_unconfirmed(s, sent_on != 0 && sent_on == pipe);
	}
}

/* A sent frame leaves the queue unacknowledged: the next ack over its pipe decides. */
static void hold_unconfirmed(struct sender *s, const struct queued_frame *f)
{
	if (s->unconfirmed_count == SENDER_UNCONFIRMED_MAX)
		pop_unconfirmed(s, false);
	struct unconfirmed_drop *u = unconfirmed(s, s->unconfirmed_count++);
	u->seq = f->seq;
	u->pipe = f->sent_pipe;
	u->n_events = f->n_events;
	memcpy(u->types, f->types, sizeof(u->types));
}

static void drop_head(struct sender *s, bool delivered)
{
	struct queued_frame *f = slot(s, 0);

	if (!delivered) {
		if (f->sent && f->sent_pipe != 0)
			hold_unconfirmed(s, f);
		else
			count_lost(s, f->seq, f->n_events, f->types);
	} else {
		handover_settle(s, f->seq, f->types);
	}
	s->q_bytes -= f->len;
	free(f->data);
	memset(f, 0, sizeof(*f));
	s->q_head = (s->q_head + 1) % s->q_cap;
	s->q_count--;
}

/* The counts the sender owns, as of now: the frame carries the drops it caused. */
static void fill_stats(const struct sender *s, Tracer__CollectorStats *st)
{
	st->has_queue_drops = 1;
	st->queue_drops = s->queue_drops;
	st->has_frames_sent = 1;
	st->frames_sent = s->frames_sent;
	st->has_frames_queued = 1;
	st->frames_queued = s->q_count;
	for (size_t i = 0; i < st->n_losses; i++) {
		Tracer__LossCount *l = st->losses[i];
		if (strcmp(l->hop, "collector") != 0)
			continue;
		for (int t = 1; t < TRACER_EV_COUNT; t++)
			if (strcmp(l->event_type, event_type_name(t)) == 0)
				l->count = s->queue_drops_by_type[t];
	}
}

/* Drops from the head until a frame of len bytes fits. */
static void make_room(struct sender *s, size_t len)
{
	while (s->q_count > 0 && (s->q_count == s->q_cap || s->q_bytes + len > s->q_max_bytes)) {
		drop_head(s, false);
		/* Once per 10 s, with totals: a dead aggregator must not become a log storm. */
		uint64_t now = now_boottime_ns();
		if (now >= s->next_drop_log_ns) {
			log_warn(
			    "queue full (%zu frames, %zu bytes): dropping the oldest; %llu frames "
			    "(%llu events) lost so far, %llu more dropped after the aggregator "
			    "had them",
			    s->q_count, s->q_bytes, (unsigned long long)s->queue_drop_frames,
			    (unsigned long long)s->queue_drops,
			    (unsigned long long)s->drops_confirmed_delivered);
			s->next_drop_log_ns = now + 10 * NSEC_PER_SEC;
		}
	}
}

int sender_enqueue(struct sender *s, const struct bytebuf *events, const uint32_t *types,
		   uint32_t n_events, uint64_t watermark_ns, Tracer__CollectorStats *stats,
		   bool final, bool snapshot_done)
{
	Tracer__Frame f = TRACER__FRAME__INIT;
	uint8_t *head;
	size_t head_len;

	f.version = TRACER__CONSTANTS__FRAME_VERSION;
	f.seq = s->next_seq; /* taken only once queued: a seq never sent would stall the stream */
	f.stream_id.data = s->stream_id;
	f.stream_id.len = sizeof(s->stream_id);
	f.boot_id.data = s->boot_id;
	f.boot_id.len = sizeof(s->boot_id);
	f.host_id = s->host_id;
	f.hostname = s->hostname;
	f.machine = s->machine;
	f.realtime_offset_ns = realtime_offset_ns();
	f.watermark_ns = watermark_ns;
	f.has_collector_pid = 1;
	f.collector_pid = (uint32_t)getpid();
	f.stats = stats;
	f.has_final = final;
	f.final = final;
	f.has_snapshot_done = snapshot_done;
	f.snapshot_done = snapshot_done;
	fill_stats(s, stats);
	/* The counts can only grow by a few varint bytes after this: close enough for the cap. */
	make_room(s, tracer__frame__get_packed_size(&f) + events->len);
	if (final) /* no later frame could report them: the doubtful count as lost */
		lose_all_unconfirmed(s);
	if (final)
		handover_acked(s, 0);
	fill_stats(s, stats);
	if (frame_encode(&f, &head, &head_len) != 0)
		return -1;
	/* Repeated fields may follow the header: the events are pre-packed. */
	uint8_t *data = realloc(head, head_len + events->len);
	if (!data) {
		free(head);
		return -1;
	}
	if (events->len)
		memcpy(data + head_len, events->data, events->len);
	struct queued_frame *q = slot(s, s->q_count);
	q->seq = f.seq;
	q->n_events = n_events;
	memcpy(q->types, types, sizeof(q->types));
	q->sent = false;
	q->data = data;
	q->len = head_len + events->len;
	s->q_count++;
	s->q_bytes += q->len;
	s->next_seq++;
	if (s->handover)
		s->handover->next_seq = s->next_seq;
	return 0;
}

static void take_acks(struct sender *s)
{
	for (;;) {
		nng_msg *msg;
		struct ipc_ack ack;

		if (nng_recvmsg(s->ipc.sock, &msg, NNG_FLAG_NONBLOCK) != 0)
			return;
		s->last_heard_ns = now_boottime_ns();
		uint32_t pipe = nng_pipe_id(nng_msg_get_pipe(msg));
		bool valid = ipc_ack_unpack(nng_msg_body(msg), nng_msg_len(msg), &ack) == 0;
		nng_msg_free(msg);
		if (valid && ipc_ack_is_heartbeat(&ack))
			continue;
		if (!valid || memcmp(ack.stream_id, s->stream_id, sizeof(s->stream_id)) != 0) {
			s->bad_acks++;
			continue;
		}
		handover_acked(s, ack.seq);
		if (ack.seq > s->acked_seq)
			s->acked_seq = ack.seq;
		while (s->q_count > 0 && slot(s, 0)->seq <= s->acked_seq)
			drop_head(s, true);
		if (ack.resend)
			lose_unconfirmed_after(s, ack.seq);
		settle_unconfirmed(s, ack.seq, pipe);
		if (ack.resend) {
			/* A later frame overtook the one it needs: all again, in order. */
			s->resends++;
			for (size_t i = 0; i < s->q_count; i++)
				slot(s, i)->sent = false;
		}
	}
}

/*
 * nng 1.5 can get stuck in two ways when the aggregator restarts under load:
 * a pipe whose peer is gone stays up, or the dialer stops dialing. The
 * aggregator acks or sends a heartbeat every second, so silence for
 * IPC_STALL_NS means a dead pipe; no pipe for IPC_REDIAL_NS gets a new dialer.
 */
static void watch_connection(struct sender *s)
{
	uint32_t id = __atomic_load_n(&s->pipe_id, __ATOMIC_ACQUIRE);
	uint64_t now = now_boottime_ns();

	if (!id) {
		if (!s->down_since_ns) {
			s->down_since_ns = now;
		} else if (now - s->down_since_ns >= IPC_REDIAL_NS) {
			s->redials++;
			if (now >= s->next_redial_log_ns) {
				log_info("no connection to the aggregator for %llu s: dialing "
					 "afresh (%llu so far)",
					 (unsigned long long)(IPC_REDIAL_NS / NSEC_PER_SEC),
					 (unsigned long long)s->redials);
				s->next_redial_log_ns = now + 60 * NSEC_PER_SEC;
			}
			int rv = ipc_redial(&s->ipc);
			if (rv != 0)
				log_warn("cannot dial %s: %s", s->ipc.path, nng_strerror(rv));
			s->down_since_ns = now;
		}
		return;
	}
	s->down_since_ns = 0;
	if (now - s->last_heard_ns < IPC_STALL_NS)
		return;
	s->stall_resets++;
	log_warn("no word from the aggregator for %llu s on a live connection; reconnecting "
		 "(%llu so far)",
		 (unsigned long long)(IPC_STALL_NS / NSEC_PER_SEC),
		 (unsigned long long)s->stall_resets);
	nng_pipe_close((nng_pipe){.id = id});
	s->last_heard_ns = now;
}

/* Sends the frame stamped with the oldest frame we still hold (see frame.h); an nng error. */
static int send_frame(struct sender *s, const struct queued_frame *f)
{
	uint8_t tail[FRAME_OLDEST_SEQ_TAIL];
	size_t tail_len = frame_oldest_seq_tail(handover_oldest(s, slot(s, 0)->seq), tail);
	nng_msg *msg;
	int rv;

	if ((rv = nng_msg_alloc(&msg, f->len + tail_len)) != 0)
		return rv;
	memcpy(nng_msg_body(msg), f->data, f->len);
	memcpy((uint8_t *)nng_msg_body(msg) + f->len, tail, tail_len);
	if ((rv = nng_sendmsg(s->ipc.sock, msg, NNG_FLAG_NONBLOCK)) != 0)
		nng_msg_free(msg);
	return rv;
}

void sender_pump(struct sender *s)
{
	unsigned conns = __atomic_load_n(&s->connections, __ATOMIC_ACQUIRE);

	take_acks(s);
	if (conns != s->seen_connections) {
		/* New connection: whatever was not acknowledged may be lost. Resend. */
		s->seen_connections = conns;
		uint32_t live = __atomic_load_n(&s->pipe_id, __ATOMIC_ACQUIRE);
		if (live && __atomic_load_n(&s->auth_sent_pipe, __ATOMIC_ACQUIRE) != live &&
		    send_key(s, live) != 0) {
			s->seen_connections--; /* nng is full: the key first, next turn */
			return;
		}
		lose_all_unconfirmed(s);
		s->last_heard_ns = now_boottime_ns();
		for (size_t i = 0; i < s->q_count; i++)
			slot(s, i)->sent = false;
	}
	watch_connection(s);
	s->send_blocked = false;
	for (size_t i = 0; i < s->q_count; i++) {
		struct queued_frame *f = slot(s, i);
		if (f->sent)
			continue;
		uint32_t pipe = __atomic_load_n(&s->pipe_id, __ATOMIC_ACQUIRE);
		/* No aggregator: nng would queue it (IPC_CLIENT_SEND_QUEUE) for one that
		 * may never come, while this queue drops it and counts it lost. */
		if (!pipe)
			break;
		int rv = send_frame(s, f);
		if (rv != 0) {
			s->send_blocked = rv == NNG_EAGAIN;
			break;
		}
		f->sent = true;
		handover_sent(s, f->seq, f->types);
		/* A pipe that changed under the send cannot vouch for the frame. */
		f->sent_pipe = pipe == __atomic_load_n(&s->pipe_id, __ATOMIC_ACQUIRE) ? pipe : 0;
		s->frames_sent++;
	}
	take_acks(s);
}

int sender_wake_fd(const struct sender *s)
{
	return s->send_blocked ? s->send_fd : -1;
}

bool sender_all_acked(const struct sender *s)
{
	return s->q_count == 0;
}

int sender_close(struct sender *s)
{
	s->handover =
	    NULL; /* what is still queued was not delivered: the next collector counts it */
	while (s->q_count)
		drop_head(s, true);
	free(s->q);
	s->q = NULL;
	return ipc_close_within(s->ipc.sock, SENDER_CLOSE_TIMEOUT_MS);
}
