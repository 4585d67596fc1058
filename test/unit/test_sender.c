/*
 * The collector's sender against a real nng pair1 peer standing in for the
 * aggregator: when the queue is full the oldest frame goes, and its events are
 * counted lost unless an ack over the pipe it was sent on proves it was
 * committed. A frame never sent, a resend request, an ack over another pipe
 * and shutdown all count it lost: the count may be high, never low.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>

#include "collector/sender.h"
#include "common/frame.h"
#include "common/ipc.h"
#include "common/timeutil.h"

#define EVENTS_PER_FRAME 10

static struct sender *s;
static struct ipc_server server; /* the aggregator's own socket set-up */
static struct ipc_peer_policy policy;
static nng_socket peer;
static char sock_path[64];

static void listen_peer(void)
{
	policy = (struct ipc_peer_policy){.allowed_uids = {getuid()}, .n_allowed = 1};
	assert_int_equal(ipc_listen(&server, sock_path, 0600, &policy), 0);
	policy.self_pid = 0; /* the sender shares our pid: not the listener's own probe */
	peer = server.sock;
}

/* nng 1.5's close can hang while a peer is attached (see ipc_close_within). */
static void close_peer(void)
{
	assert_int_equal(ipc_server_close_within(&server, 5000), 0);
}

/*
 * Waits until the sender has a pipe other than old, or fails the test. Without
 * pumping: nng 1.5 can leak a message handed over while a pipe is coming up.
 */
static uint32_t wait_for_pipe(uint32_t old)
{
	for (int i = 0; i < 500; i++) {
		uint32_t id = __atomic_load_n(&s->pipe_id, __ATOMIC_ACQUIRE);
		if (id && id != old)
			return id;
		sleep_ns(10 * NSEC_PER_MSEC);
	}
	fail_msg("the sender never connected");
	return 0;
}

static int setup(void **state)
{
	(void)state;
	snprintf(sock_path, sizeof(sock_path), "/tmp/test-sender-%d.sock", (int)getpid());
	unlink(sock_path);
	listen_peer();
	s = calloc(1, sizeof(*s));
	assert_non_null(s);
	assert_int_equal(sender_init(s, sock_path, 1 << 20), 0);
	wait_for_pipe(0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	close_peer();
	assert_int_equal(sender_close(s), 0);
	free(s);
	unlink(sock_path);
	return 0;
}

/* Queues one frame declaring EVENTS_PER_FRAME exec events (the payload is not read). */
static void enqueue(bool final)
{
	struct bytebuf none = {0};
	uint32_t types[EVT_COUNT] = {[EVT_EXEC] = EVENTS_PER_FRAME};
	Tracer__CollectorStats st = TRACER__COLLECTOR_STATS__INIT;

	assert_int_equal(sender_enqueue(s, &none, types, EVENTS_PER_FRAME, 1, &st, final, false),
			 0);
}

/* Room for two frames: the third enqueue drops the oldest. */
static void queue_fits_two(void)
{
	enqueue(false);
	s->q_max_bytes = s->q_bytes * 5 / 2;
}

/* The seq of the next frame that reaches the peer, pumping the sender meanwhile
 * (a busy pipe refuses its non-blocking sends). */
static uint64_t receive_frame(void)
{
	nng_msg *msg;
	Tracer__Frame *f = NULL;
	char why[128];
	int rv = NNG_EAGAIN;

	for (int i = 0; i < 400 && rv == NNG_EAGAIN; i++) {
		sender_pump(s);
		if ((rv = nng_recvmsg(peer, &msg, NNG_FLAG_NONBLOCK)) == NNG_EAGAIN)
			sleep_ns(5 * NSEC_PER_MSEC);
	}
	assert_int_equal(rv, 0);
	struct frame_arena arena;
	frame_arena_init(&arena);
	assert_int_equal(
	    frame_decode(&arena, nng_msg_body(msg), nng_msg_len(msg), &f, why, sizeof(why)),
	    FRAME_OK);
	uint64_t seq = f->seq;
	frame_arena_destroy(&arena);
	nng_msg_free(msg);
	return seq;
}

static void answer(uint64_t seq, bool resend)
{
	struct ipc_ack ack = {.seq = seq, .resend = resend};
	uint8_t buf[IPC_RESEND_LEN];

	memcpy(ack.stream_id, s->stream_id, sizeof(ack.stream_id));
	assert_int_equal(nng_send(peer, buf, ipc_ack_pack(&ack, buf), 0), 0);
}

/* Pumps until the sender has taken in every ack the peer sent (they arrive async). */
static void pump_until_settled(void)
{
	for (int i = 0; i < 200 && s->unconfirmed_count > 0; i++) {
		sender_pump(s);
		sleep_ns(5 * NSEC_PER_MSEC);
	}
	sender_pump(s);
}

/* Frames 1 and 2 queued, sent and received; the queue has room for two. */
static void two_frames_sent(void)
{
	queue_fits_two();
	enqueue(false);
	assert_int_equal(receive_frame(), 1);
	assert_int_equal(receive_frame(), 2);
}

static void test_dropped_after_commit_is_not_counted_lost(void **state)
{
	(void)state;
	two_frames_sent();
	/* 1 was sent and may be committed: dropping it proves nothing yet. */
	enqueue(false);
	assert_int_equal(s->q_count, 2);
	assert_int_equal(s->unconfirmed_count, 1);
	assert_int_equal(s->queue_drops, 0);
	/* The aggregator committed 1: its ack over the same pipe settles it. */
	answer(1, false);
	pump_until_settled();
	assert_int_equal(s->unconfirmed_count, 0);
	assert_int_equal(s->drops_confirmed_delivered, 1);
	assert_int_equal(s->queue_drops, 0);
	assert_int_equal(s->queue_drops_by_type[EVT_EXEC], 0);
}

static void test_dropped_before_sending_is_counted_at_once(void **state)
{
	(void)state;
	queue_fits_two();
	enqueue(false);
	enqueue(false); /* nothing pumped: 1 never left */
	assert_int_equal(s->unconfirmed_count, 0);
	assert_int_equal(s->queue_drops, EVENTS_PER_FRAME);
	assert_int_equal(s->queue_drops_by_type[EVT_EXEC], EVENTS_PER_FRAME);
	assert_int_equal(s->queue_drop_frames, 1);
}

static void test_refused_frame_counts_lost(void **state)
{
	(void)state;
	two_frames_sent();
	enqueue(false);
	enqueue(false); /* 1 and 2 dropped after sending */
	assert_int_equal(s->unconfirmed_count, 2);
	/* The aggregator has only up to 1 and asks for the rest again: 2 is not proven. */
	answer(1, true);
	pump_until_settled();
	assert_int_equal(s->drops_confirmed_delivered, 1);
	assert_int_equal(s->queue_drops, EVENTS_PER_FRAME);
	/* A later ack that covers 2 must not take the count back. */
	answer(3, false);
	pump_until_settled();
	assert_int_equal(s->queue_drops, EVENTS_PER_FRAME);
}

static void test_ack_over_another_pipe_counts_lost(void **state)
{
	(void)state;
	uint32_t first = __atomic_load_n(&s->pipe_id, __ATOMIC_ACQUIRE);

	two_frames_sent();
	enqueue(false);
	assert_int_equal(s->unconfirmed_count, 1);
	/* The aggregator restarts: whether 1 reached the old one, the new one cannot say. */
	close_peer();
	listen_peer();
	wait_for_pipe(first);
	receive_frame(); /* the resent backlog */
	receive_frame();
	answer(3, false);
	pump_until_settled();
	assert_int_equal(s->unconfirmed_count, 0);
	assert_int_equal(s->drops_confirmed_delivered, 0);
	assert_int_equal(s->queue_drops, EVENTS_PER_FRAME);
}

static void test_final_frame_reports_the_unsettled_as_lost(void **state)
{
	(void)state;
	two_frames_sent();
	enqueue(true); /* drops 1; no frame comes after this one to carry a verdict */
	assert_int_equal(s->unconfirmed_count, 0);
	assert_int_equal(s->queue_drops, EVENTS_PER_FRAME);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_dropped_after_commit_is_not_counted_lost, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_dropped_before_sending_is_counted_at_once, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_refused_frame_counts_lost, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ack_over_another_pipe_counts_lost, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_final_frame_reports_the_unsettled_as_lost, setup,
					    teardown),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	nng_fini(); /* frees what nng still holds for the closed pipes */
	return failed;
}
