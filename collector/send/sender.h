/*
 * Frames out, acks in. Every frame stays in a bounded queue until the
 * aggregator acknowledges it (after its SQLite commit); after a reconnect all
 * unacknowledged frames are sent again and the aggregator drops duplicates by
 * sequence number. When the queue is full the oldest frame is dropped and its
 * events are counted in queue_drops.
 *
 * A dropped frame that was already sent may have been committed, its ack still
 * on the way. Its events wait in a small ledger: an ack covering it that comes
 * over the pipe it was sent on proves it applied (one pipe is FIFO, and the
 * frames that would let the aggregator skip it were sent after it); a new
 * connection, a resend request or shutdown counts it lost instead.
 */
#ifndef TRACER_SENDER_H
#define TRACER_SENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "common/bytebuf.h"
#include "bpf/events.h"
#include "common/eventtypes.h"
#include "common/hostinfo.h"
#include "common/ipc.h"
#include "common/ipc_auth.h"
#include "tracer.pb-c.h"

struct queued_frame {
	uint64_t seq;
	uint32_t n_events;
	uint32_t types[TRACER_EV_COUNT]; /* events per type, for loss accounting */
	bool sent;
	uint32_t sent_pipe; /* the live pipe when it was last sent, or 0 */
	uint8_t *data;
	size_t len;
};

/* A dropped frame that was sent: delivered or lost, the next ack will tell. */
struct unconfirmed_drop {
	uint64_t seq;
	uint32_t pipe; /* the pipe it was sent on: only an ack over it can vouch */
	uint32_t n_events;
	uint32_t types[TRACER_EV_COUNT];
};

#define SENDER_UNCONFIRMED_MAX 1024

/*
 * Whom the collector talks to and how it proves itself: frames go only to a
 * listener whose credentials (SO_PEERCRED at its listen()) are the expected
 * aggregator's, checked before a connection is admitted, and the first
 * message on each is the key (ipc_auth.h). An impostor listening in the
 * socket's place is hung up on before it is sent a byte.
 */
struct sender_trust {
	uint8_t key[IPC_KEY_LEN];
	pid_t listener_pid; /* this process only (tracer run's own aggregator), or 0 */
	uid_t listener_uid; /* else root or this uid */
};

struct sender {
	struct ipc_client ipc;
	struct sender_trust trust;
	uint64_t refused_listeners; /* connections hung up on: not our aggregator */
	uint32_t auth_sent_pipe;    /* the pipe the key last went out on */
	uint8_t stream_id[16];
	uint8_t boot_id[BOOT_ID_LEN];
	char host_id[64];
	char hostname[256];
	char machine[65]; /* uname -m */
	uint64_t next_seq;
	unsigned connections; /* bumped by nng's callback on every new pipe */
	unsigned seen_connections;
	uint32_t pipe_id;	/* the live pipe (nng's callback sets and clears it), or 0 */
	uint64_t last_heard_ns; /* the aggregator's last ack or heartbeat, or the connect */
	uint64_t stall_resets;	/* connections dropped for silence */
	uint64_t down_since_ns; /* when the pump last saw no pipe, or 0 */
	uint64_t redials;	/* dialers replaced after a long disconnection */
	uint64_t resends;	/* resend requests from the aggregator */
	uint64_t next_redial_log_ns;

	struct queued_frame *q; /* ring of q_cap */
	size_t q_cap, q_head, q_count, q_bytes, q_max_bytes;

	uint64_t queue_drops; /* events */
	uint64_t queue_drops_by_type[TRACER_EV_COUNT];
	uint64_t next_drop_log_ns; /* rate limit of the queue-full warning */
	uint64_t queue_drop_frames;
	struct unconfirmed_drop unconfirmed[SENDER_UNCONFIRMED_MAX]; /* ring, seq order */
	size_t unconfirmed_head, unconfirmed_count;
	uint64_t drops_confirmed_delivered; /* frames dropped after their commit */
	uint64_t frames_sent;
	uint64_t acked_seq;
	uint64_t bad_acks;
	struct tracer_handover *handover; /* in the pinned .bss (--keep-pinned), or NULL */
	struct tracer_handover prev;	  /* what the collector before us left there */
	bool resume_pending;		  /* its losses wait for the aggregator's first answer */
	int send_fd;	   /* nng's: readable while the socket takes a frame, or -1 */
	bool send_blocked; /* the last pump left frames because nng's queue was full */
};

/*
 * As root, before the privilege drop: dials the socket (the first connection
 * is made with root's credentials: a socket of the caller's choosing may be
 * closed to the unprivileged user); only the listener check and the key run
 * on it until sender_start.
 */
int sender_connect(struct sender *s, const char *socket_path, const struct sender_trust *trust);
/* After the drop: the stream's identity and the frame queue. */
int sender_start(struct sender *s, size_t max_queue_bytes);
/* Both at once (tests). */
int sender_init(struct sender *s, const char *socket_path, size_t max_queue_bytes,
		const struct sender_trust *trust);
/* Wraps the packed events in a frame with the next seq and queues it. */
int sender_enqueue(struct sender *s, const struct bytebuf *events, const uint32_t *types,
		   uint32_t n_events, uint64_t watermark_ns, Tracer__CollectorStats *stats,
		   bool final, bool snapshot_done);
/* Sends what is unsent and takes in acks; never blocks. */
void sender_pump(struct sender *s);
/*
 * A descriptor that turns readable when nng can take more of the frames the
 * last pump had to leave, or -1 when there is nothing to wait for. Without
 * it a backlog (a burst, an aggregator back after a restart) would go out
 * only a few frames per turn of the collector's loop, seconds behind.
 */
int sender_wake_fd(const struct sender *s);
bool sender_all_acked(const struct sender *s);
/* How long closing the socket may take (see ipc_close_within). */
#define SENDER_CLOSE_TIMEOUT_MS 3000u
/* Drops what is queued (counted) and closes; -1 if nng's close got stuck. */
int sender_close(struct sender *s);

/*
 * handover.c: the stream handed to the next collector of a pin set. begin, after
 * sender_start: resume what h holds (reusing) or start it. The rest keep it
 * current: an event read, a frame sent, one settled (acked or counted lost).
 */
void handover_begin(struct sender *s, struct tracer_handover *h, bool reusing);
void handover_read(struct sender *s, int type);
void handover_sent(struct sender *s, uint64_t seq, const uint32_t *types);
void handover_settle(struct sender *s, uint64_t seq, const uint32_t *types);
/* The oldest seq a frame claims: 1 until the aggregator says what it committed. */
uint64_t handover_oldest(const struct sender *s, uint64_t head_seq);
/* An ack: on a resumed stream the first says the last frame committed. */
void handover_acked(struct sender *s, uint64_t committed);

#endif
