/*
 * framesend SOCKET MODE [N]: talks to an aggregator the way a (possibly
 * hostile) collector would.
 *   garbage N   N messages of random bytes
 *   truncated   a valid frame cut short
 *   badevent    a well-formed frame whose event lacks a pid
 *   valid       one valid frame with one exec event; waits for its ack,
 *               sending the same frame again every second like a collector
 *               would (a lost ack only means a resend), for at most
 *               ACK_DEADLINE_MS; the aggregator's heartbeats do not extend it
 * Exits 0 when the sends went out (and, for valid, the ack came back).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pair1/pair.h>

#include "common/frame.h"
#include "common/ipc.h"

#define ACK_DEADLINE_MS 8000
#define RESEND_EVERY_MS 1000

static uint8_t stream_id[16], boot_id[16];

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int send_frame(nng_socket s, uint32_t pid, size_t cut)
{
	Tracer__Frame f = TRACER__FRAME__INIT;
	Tracer__Event ev = TRACER__EVENT__INIT, *evs[1] = {&ev};
	Tracer__ExecEvent x = TRACER__EXEC_EVENT__INIT;
	char *argv[] = {"/usr/bin/framesend-test", "hello"};
	uint8_t *buf;
	size_t len;

	f.version = TRACER__CONSTANTS__FRAME_VERSION;
	f.seq = 1;
	f.stream_id.data = stream_id;
	f.stream_id.len = 16;
	f.boot_id.data = boot_id;
	f.boot_id.len = 16;
	f.watermark_ns = 1;
	f.realtime_offset_ns = 1000;
	x.pid = pid;
	x.start_ns = 77;
	x.exe = argv[0];
	x.argv = argv;
	x.n_argv = 2;
	ev.ts_ns = 78;
	ev.kind_case = TRACER__EVENT__KIND_EXEC;
	ev.exec = &x;
	f.events = evs;
	f.n_events = 1;
	if (frame_encode(&f, &buf, &len) != 0)
		return -1;
	int rv = nng_send(s, buf, cut ? len - cut : len, 0);
	free(buf);
	return rv;
}

/* 0 once the aggregator acknowledged seq 1 of our stream; -1 at the deadline. */
static int send_until_acked(nng_socket s, uint32_t pid)
{
	uint64_t start = now_ms(), next_send = start;
	unsigned sends = 0, heartbeats = 0, others = 0;

	nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 200);
	while (now_ms() - start < ACK_DEADLINE_MS) {
		uint8_t buf[64];
		size_t len = sizeof(buf);
		struct ipc_ack a;

		if (now_ms() >= next_send) {
			if (send_frame(s, pid, 0) == 0)
				sends++;
			next_send = now_ms() + RESEND_EVERY_MS;
		}
		if (nng_recv(s, buf, &len, 0) != 0)
			continue;
		if (ipc_ack_unpack(buf, len, &a) != 0) {
			others++;
		} else if (ipc_ack_is_heartbeat(&a)) {
			heartbeats++;
		} else if (memcmp(a.stream_id, stream_id, 16) == 0 && a.seq == 1 && !a.resend) {
			printf("acked after %u send(s), %u heartbeat(s)\n", sends, heartbeats);
			return 0;
		} else {
			others++;
		}
	}
	printf("no ack in %d ms: %u send(s), %u heartbeat(s), %u other message(s)\n",
	       ACK_DEADLINE_MS, sends, heartbeats, others);
	return -1;
}

int main(int argc, char **argv)
{
	char url[512];
	nng_socket s;

	if (argc < 3)
		return 2;
	getrandom(stream_id, sizeof(stream_id), 0);
	getrandom(boot_id, sizeof(boot_id), 0);
	snprintf(url, sizeof(url), "ipc://%s", argv[1]);
	if (nng_pair1_open(&s) != 0 || nng_dial(s, url, NULL, 0) != 0) {
		fprintf(stderr, "framesend: cannot connect to %s\n", argv[1]);
		return 3;
	}
	nng_socket_set_ms(s, NNG_OPT_SENDTIMEO, 2000);
	nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 3000);
	if (strcmp(argv[2], "garbage") == 0) {
		int n = argc > 3 ? atoi(argv[3]) : 10;
		for (int i = 0; i < n; i++) {
			uint8_t junk[300];
			size_t len = 1 + (size_t)(i * 37) % sizeof(junk);
			getrandom(junk, len, 0);
			if (nng_send(s, junk, len, 0) != 0)
				return 1;
		}
	} else if (strcmp(argv[2], "truncated") == 0) {
		if (send_frame(s, 4242, 7) != 0)
			return 1;
	} else if (strcmp(argv[2], "badevent") == 0) {
		if (send_frame(s, 0, 0) != 0)
			return 1;
	} else if (strcmp(argv[2], "valid") == 0) {
		if (send_until_acked(s, 4242) != 0)
			return 1;
	} else {
		return 2;
	}
	usleep(200000); /* let the last message leave before closing */
	/* nng 1.5's close can hang with a peer attached (nng#1543): bounded. */
	ipc_close_within(s, 2000);
	return 0;
}
