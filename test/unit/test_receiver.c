/*
 * Frame ordering in the aggregator's receiver, through the real ingest + SQLite
 * path (in-memory database) and a real nng pair1 peer (inproc) standing in for
 * the collector: frames apply strictly in sequence; one that overtakes a resent
 * frame is refused and the collector asked to resend; gaps are skipped only
 * where the frame says the collector dropped them; duplicates are acked again.
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

#include "aggregator/ingest/ingest.h"
#include "aggregator/receive/receiver.h"
#include "aggregator/store/store.h"
#include "common/frame.h"
#include "common/ipc.h"

static struct store st;
static struct ingest g;
static struct receiver r;
static nng_socket peer;
static uint8_t stream[16] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 1, 2, 3, 4, 5, 6, 7};
static uint8_t boot[16] = {1};
static char sock_path[64];

static int setup(void **state)
{
	char url[80];

	(void)state;
	assert_int_equal(store_open(&st, ":memory:"), 0);
	assert_int_equal(ingest_init(&g, &st, SCOPE_ALL, NULL, NULL, NULL), 0);
	assert_int_equal(receiver_init(&r, &g, &st), 0);
	r.host_every_ns = 0;
	/* The aggregator's own socket set-up, admitting our uid. */
	snprintf(sock_path, sizeof(sock_path), "/tmp/test-receiver-%d.sock", (int)getpid());
	r.policy.allowed_uids[0] = getuid();
	r.policy.n_allowed = 1;
	assert_int_equal(ipc_listen(&r.server, sock_path, 0600, &r.policy), 0);
	r.policy.self_pid = 0; /* our peer shares our pid: not the listener's own probe */
	snprintf(url, sizeof(url), "ipc://%s", sock_path);
	assert_int_equal(nng_pair1_open(&peer), 0);
	assert_int_equal(nng_dial(peer, url, NULL, 0), 0);
	nng_socket_set_ms(peer, NNG_OPT_RECVTIMEO, 300);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nng_close(peer);
	assert_int_equal(ipc_server_close_within(&r.server, 5000), 0);
	unlink(sock_path);
	receiver_free(&r);
	ingest_free(&g);
	store_close(&st);
	return 0;
}

/* One frame carrying the exec of pid 1000 + seq and the collector's stats (may be
 * NULL); oldest 0: the field is absent. */
static void deliver_with_stats(uint64_t seq, uint64_t oldest, Tracer__CollectorStats *stats)
{
	Tracer__Frame f = TRACER__FRAME__INIT;
	Tracer__Event ev = TRACER__EVENT__INIT, *evs[1] = {&ev};
	Tracer__ExecEvent x = TRACER__EXEC_EVENT__INIT;
	char *argv[] = {"/usr/bin/true"};
	uint8_t *buf, tail[FRAME_OLDEST_SEQ_TAIL];
	size_t len, tail_len = oldest ? frame_oldest_seq_tail(oldest, tail) : 0;

	x.pid = 1000 + (uint32_t)seq;
	x.start_ns = 1000000 * seq;
	x.exe = argv[0];
	x.comm = "true";
	x.argv = argv;
	x.n_argv = 1;
	ev.ts_ns = x.start_ns;
	ev.kind_case = TRACER__EVENT__KIND_EXEC;
	ev.exec = &x;
	f.version = TRACER__CONSTANTS__FRAME_VERSION;
	f.seq = seq;
	f.stream_id = (ProtobufCBinaryData){sizeof(stream), stream};
	f.boot_id = (ProtobufCBinaryData){sizeof(boot), boot};
	f.watermark_ns = x.start_ns;
	f.events = evs;
	f.n_events = 1;
	f.stats = stats;
	assert_int_equal(frame_encode(&f, &buf, &len), 0);
	/* The collector's way: the packed frame, then the stamp. */
	buf = realloc(buf, len + tail_len);
	assert_non_null(buf);
	memcpy(buf + len, tail, tail_len);
	receiver_handle(&r, buf, len + tail_len);
	free(buf);
}

static void deliver(uint64_t seq, uint64_t oldest)
{
	deliver_with_stats(seq, oldest, NULL);
}

/* The next message to the collector that is not a heartbeat; seq UINT64_MAX if none came. */
static struct ipc_ack next_message(void)
{
	struct ipc_ack ack = {.seq = UINT64_MAX};
	uint8_t buf[64];
	size_t len;

	for (;;) {
		len = sizeof(buf);
		if (nng_recv(peer, buf, &len, 0) != 0)
			return (struct ipc_ack){.seq = UINT64_MAX};
		assert_int_equal(ipc_ack_unpack(buf, len, &ack), 0);
		if (!ipc_ack_is_heartbeat(&ack))
			return ack;
	}
}

static int64_t query_int(const char *sql)
{
	sqlite3_stmt *s;
	int64_t n = -1;

	assert_int_equal(sqlite3_prepare_v2(st.db, sql, -1, &s, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}

static int64_t processes(void)
{
	return query_int("SELECT count(*) FROM processes");
}

static void test_overtaking_frame_is_refused_and_asked_again(void **state)
{
	(void)state;
	deliver(1, 1);
	deliver(2, 1);
	assert_int_equal(receiver_commit(&r), 0);
	struct ipc_ack ack = next_message();
	assert_int_equal(ack.seq, 2);
	assert_false(ack.resend);
	assert_memory_equal(ack.stream_id, stream, 16);

	/* 4 arrives before the resent 3: refused, and the collector is asked for 3. */
	deliver(4, 3);
	ack = next_message();
	assert_true(ack.resend);
	assert_int_equal(ack.seq, 2);
	/* Asked once a second at most, however many more overtake. */
	deliver(5, 3);
	assert_int_equal(receiver_commit(&r), 0);
	assert_int_equal(next_message().seq, UINT64_MAX);
	assert_int_equal(processes(), 2);
	assert_int_equal(r.streams->early_frames, 2);

	/* The resend: 3, 4, 5 in order. Nothing lost, nothing counted as a gap. */
	deliver(3, 3);
	deliver(4, 3);
	deliver(5, 3);
	assert_int_equal(receiver_commit(&r), 0);
	ack = next_message();
	assert_int_equal(ack.seq, 5);
	assert_int_equal(processes(), 5);
	assert_int_equal(r.streams->row.seq_gaps, 0);
	assert_int_equal(r.streams->row.duplicate_frames, 0);
}

static void test_frames_the_collector_dropped_are_skipped_and_counted(void **state)
{
	(void)state;
	deliver(1, 1);
	/* 2..4 fell out of the collector's full queue: 5 says so. */
	deliver(5, 5);
	assert_int_equal(receiver_commit(&r), 0);
	assert_int_equal(next_message().seq, 5);
	assert_int_equal(processes(), 2);
	assert_int_equal(r.streams->row.seq_gaps, 3);
	assert_int_equal(r.streams->row.last_seq, 5);
	/* oldest_seq 3 < 6 says nothing new: 7 overtook 6 and is refused. */
	deliver(7, 3);
	assert_true(next_message().resend);
	assert_int_equal(r.streams->row.seq_gaps, 3);
}

static void test_duplicates_are_acked_not_applied(void **state)
{
	(void)state;
	deliver(1, 1);
	deliver(2, 1);
	deliver(1, 1);
	deliver(2, 1);
	assert_int_equal(receiver_commit(&r), 0);
	assert_int_equal(next_message().seq, 2);
	assert_int_equal(processes(), 2);
	assert_int_equal(r.streams->row.duplicate_frames, 2);
}

static void test_frame_without_oldest_seq_keeps_counting_gaps(void **state)
{
	(void)state;
	/* A sender that does not stamp frames (older collectors, test tools). */
	deliver(1, 0);
	deliver(3, 0);
	assert_int_equal(receiver_commit(&r), 0);
	assert_int_equal(next_message().seq, 3);
	assert_int_equal(processes(), 2);
	assert_int_equal(r.streams->row.seq_gaps, 1);
}

static void test_kernel_drops_count_every_type(void **state)
{
	Tracer__CollectorStats stats = TRACER__COLLECTOR_STATS__INIT;
	Tracer__LossCount loss[4], *losses[4];
	const char *types[4] = {"fork", "exec", "file", "oom"};
	const uint64_t counts[4] = {2, 3, 40, 1};

	(void)state;
	for (int i = 0; i < 4; i++) {
		tracer__loss_count__init(&loss[i]);
		loss[i].hop = "kernel";
		loss[i].event_type = (char *)types[i];
		loss[i].count = counts[i];
		losses[i] = &loss[i];
	}
	stats.has_kernel_drops_fork = stats.has_kernel_drops_exec = 1;
	stats.kernel_drops_fork = 2;
	stats.kernel_drops_exec = 3;
	stats.has_kernel_drops_other = 1;
	stats.kernel_drops_other = 5; /* perf-buffer losses, type unknown */
	stats.losses = losses;
	stats.n_losses = 4;
	deliver_with_stats(1, 1, &stats);
	assert_int_equal(receiver_commit(&r), 0);
	assert_int_equal(next_message().seq, 1);
	/* Files and OOM kills lost in the kernel are losses too, not only processes. */
	assert_int_equal(query_int("SELECT kernel_drops FROM collector_stats"), 2 + 3 + 40 + 1 + 5);
	assert_int_equal(query_int("SELECT sum(count) FROM event_loss WHERE hop = 'kernel'"),
			 2 + 3 + 40 + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_overtaking_frame_is_refused_and_asked_again, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(
		test_frames_the_collector_dropped_are_skipped_and_counted, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_duplicates_are_acked_not_applied, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_frame_without_oldest_seq_keeps_counting_gaps,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_kernel_drops_count_every_type, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
