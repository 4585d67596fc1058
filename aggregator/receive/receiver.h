/*
 * The aggregator's side of the channel: receive, validate, deduplicate and
 * apply frames, commit them in batched transactions, and acknowledge each
 * frame only once it is durable. If a commit fails (disk full, I/O error)
 * nothing is acknowledged and nothing new is read until a retry succeeds;
 * the collector's queue holds the backlog meanwhile.
 */
#ifndef TRACER_RECEIVER_H
#define TRACER_RECEIVER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <nng/nng.h>

#include "aggregator/receive/hostsample.h"
#include "aggregator/receive/peers.h"
#include "aggregator/ingest/ingest.h"
#include "aggregator/store/retention.h"
#include "aggregator/store/store.h"
#include "common/frame_arena.h"
#include "common/ipc.h"

#define RECEIVER_MAX_STREAMS_ACKED 8

/* Default for --commit-ms: how long applied frames may wait for their commit. */
#define RECEIVER_COMMIT_EVERY_MS 200
/* A batch also commits as soon as it holds this many frames. */
#define RECEIVER_BATCH_MAX_FRAMES 64

#define RECEIVER_MAX_LOSSES 32

struct loss_entry {
	char hop[16];
	char type[16];
	uint64_t count;
	bool dirty;
};

struct stream_state {
	struct stream_state *next;
	uint8_t id[16];
	struct stream_row row;
	struct loss_entry losses[RECEIVER_MAX_LOSSES];
	unsigned n_losses;
	bool dirty;
	bool ack_pending;
	uint64_t ack_seq;
	uint64_t next_ship_ns; /* collector stats go to the outbox once a minute */
	uint64_t resend_from;  /* the frame we last asked for again, and when */
	uint64_t resend_asked_ns;
	uint64_t early_frames;	  /* frames refused because an earlier one was missing */
	bool first_frame_pending; /* a stream new to this database: its blind window */
	uint32_t pipe;		  /* the connection its last frame came over: acks go there */
};

struct receiver {
	struct ipc_server server; /* the socket and its listener */
	struct ipc_peer_policy policy;
	struct peers peers;    /* which connections proved they are the collector */
	uint32_t current_pipe; /* the connection of the frame being handled */
	uint64_t next_listener_check_ns;
	uint64_t next_heartbeat_ns;
	struct ingest *ingest;
	struct store *store;
	struct stream_state *streams;
	struct aggregator_stats_row agg;
	bool agg_dirty;
	bool commit_failed;
	uint64_t next_retry_ns;
	struct host_sampler host;
	uint64_t host_every_ns; /* 0: no host samples */
	uint64_t next_tick_ns;	/* the insight layer's periodic checks */
	uint64_t next_host_ns;
	char host_id[64];
	struct outbox *outbox;	       /* opened (store->outbox: while it queues), or NULL */
	const char *outbox_when;       /* --outbox-when: queue only while this exists */
	volatile sig_atomic_t *reload; /* set by SIGHUP: reread the tool lists */
	int wake_fd;		       /* readable after a signal (main.c writes to it), or -1 */
	int lifeline_fd;	       /* --exit-with-fd: hangs up when our starter dies, or -1 */
	struct frame_arena arena;      /* the frame being applied lives here */
	uint64_t commit_every_ns;      /* frames wait at most this long for their commit */
	uint64_t last_commit_ns;
	unsigned frames_uncommitted; /* applied since the last commit */
	uint64_t events_uncommitted;
	struct retention retention; /* both 0: keep everything */
	uint64_t prune_every_ns, next_prune_ns;
	const char *metrics_path; /* NULL: no metrics file */
	const char *shipper_state;
	uint64_t next_metrics_ns;
	uint64_t next_live_ns; /* when what runs now goes to the outbox again */
	bool metrics_failing;
};

int receiver_init(struct receiver *r, struct ingest *ingest, struct store *store);
/* Handles one message's bytes (exposed for tests and fuzzing). */
void receiver_handle(struct receiver *r, const uint8_t *buf, size_t len);
/* Writes and commits what was received; acks on success. 0 or -1. */
int receiver_commit(struct receiver *r);
/* Runs until *stop is set; returns 0 on a clean stop. */
int receiver_run(struct receiver *r, volatile sig_atomic_t *stop);
void receiver_free(struct receiver *r);

#endif
