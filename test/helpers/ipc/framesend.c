/*
 * framesend [--key PATH|random|none] SOCKET MODE [N]: talks to an aggregator
 * the way a (possibly hostile) collector would. It first proves itself with
 * the collector key from PATH (default the system's, when it can read it);
 * `random` sends a wrong key, `none` (or an unreadable file) nothing.
 *   garbage N   N messages of random bytes
 *   truncated   a valid frame cut short
 *   badevent    a well-formed frame whose event lacks a pid
 *   oversize    a 12 MiB message (the limit is 8 MiB)
 *   badclock    a well-formed frame whose exec starts past 2^62 ns of uptime
 *   valid       one valid frame with one exec event; waits for its ack,
 *               sending the same frame again every second like a collector
 *               would (a lost ack only means a resend), for at most
 *               ACK_DEADLINE_MS; the aggregator's heartbeats do not extend it
 *   orphans     like valid, with well-formed events that find nothing to
 *               apply to: a sample and a file open of unknown processes, an
 *               exit never seen starting (its parent unknown) and the same
 *               exit again, an exec whose parent is unknown
 *   clockstep   like valid, two frames whose wall-clock offsets differ by
 *               CLOCK_STEP_NS: a process starts in the first, and its
 *               sample and exit and a new process's exec come in the second
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
#include "common/ipc_auth.h"
#include "common/paths.h"
#include "common/timeutil.h"
#include "test/helpers/ipc/prove.h"

#define ACK_DEADLINE_MS 8000
#define RESEND_EVERY_MS 1000

static uint8_t stream_id[16], boot_id[16];

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct frame_head {
	uint64_t seq;
	int64_t realtime_offset_ns;
};

static const struct frame_head first_frame = {.seq = 1, .realtime_offset_ns = 1000};

static int send_frame_of(nng_socket s, struct frame_head h, Tracer__Event **evs, size_t n,
			 size_t cut)
{
	Tracer__Frame f = TRACER__FRAME__INIT;
	uint8_t *buf;
	size_t len;

	f.version = TRACER__CONSTANTS__FRAME_VERSION;
	f.seq = h.seq;
	f.stream_id.data = stream_id;
	f.stream_id.len = 16;
	f.boot_id.data = boot_id;
	f.boot_id.len = 16;
	f.watermark_ns = 1;
	f.realtime_offset_ns = h.realtime_offset_ns;
	f.events = evs;
	f.n_events = n;
	if (frame_encode(&f, &buf, &len) != 0)
		return -1;
	int rv = nng_send(s, buf, cut ? len - cut : len, 0);
	free(buf);
	return rv;
}

static int send_exec(nng_socket s, uint32_t pid, uint64_t start_ns, size_t cut)
{
	Tracer__Event ev = TRACER__EVENT__INIT, *evs[1] = {&ev};
	Tracer__ExecEvent x = TRACER__EXEC_EVENT__INIT;
	char *argv[] = {"/usr/bin/framesend-test", "hello"};

	x.pid = pid;
	x.start_ns = start_ns;
	x.exe = argv[0];
	x.argv = argv;
	x.n_argv = 2;
	ev.ts_ns = 78;
	ev.kind_case = TRACER__EVENT__KIND_EXEC;
	ev.exec = &x;
	return send_frame_of(s, first_frame, evs, 1, cut);
}

static int send_frame(nng_socket s, uint32_t pid, size_t cut)
{
	return send_exec(s, pid, 77, cut);
}

static int send_frame_at(nng_socket s, uint32_t pid, uint64_t start_ns)
{
	return send_exec(s, pid, start_ns, 0);
}

/* Pids no test machine reaches (pid_max is at most 2^22). */
#define ORPHAN_PID 4300000u

static int send_orphans(nng_socket s)
{
	Tracer__Event ev[5], *evs[5];
	Tracer__SampleEvent sample = TRACER__SAMPLE_EVENT__INIT;
	Tracer__FileEvent file = TRACER__FILE_EVENT__INIT;
	Tracer__ExitEvent exit_ev = TRACER__EXIT_EVENT__INIT;
	Tracer__ExecEvent exec_ev = TRACER__EXEC_EVENT__INIT;
	char *argv[] = {"/usr/bin/framesend-orphan"};

	for (int i = 0; i < 5; i++) {
		tracer__event__init(&ev[i]);
		ev[i].ts_ns = 100 + (uint64_t)i;
		evs[i] = &ev[i];
	}
	sample.pid = ORPHAN_PID + 1;
	sample.start_ns = 50;
	ev[0].kind_case = TRACER__EVENT__KIND_SAMPLE;
	ev[0].sample = &sample;
	file.pid = ORPHAN_PID + 2;
	file.start_ns = 50;
	file.path = "/etc/hostname";
	ev[1].kind_case = TRACER__EVENT__KIND_FILE;
	ev[1].file = &file;
	exit_ev.pid = ORPHAN_PID + 3;
	exit_ev.start_ns = 50;
	exit_ev.has_ppid = true;
	exit_ev.ppid = ORPHAN_PID + 9;
	exit_ev.comm = "orphan-exit";
	ev[2].kind_case = TRACER__EVENT__KIND_EXIT;
	ev[2].exit = &exit_ev;
	ev[3].kind_case = TRACER__EVENT__KIND_EXIT; /* the same exit again */
	ev[3].exit = &exit_ev;
	exec_ev.pid = ORPHAN_PID + 4;
	exec_ev.start_ns = 60;
	exec_ev.has_ppid = true;
	exec_ev.ppid = ORPHAN_PID + 10;
	exec_ev.exe = argv[0];
	exec_ev.argv = argv;
	exec_ev.n_argv = 1;
	ev[4].kind_case = TRACER__EVENT__KIND_EXEC;
	ev[4].exec = &exec_ev;
	return send_frame_of(s, first_frame, evs, 5, 0);
}

#define CLOCK_PID 4300100u
#define CLOCK_OFFSET_NS (10000 * NSEC_PER_SEC)
#define CLOCK_STEP_NS (-3600 * (int64_t)NSEC_PER_SEC)
#define CLOCK_START_NS (1000 * NSEC_PER_SEC) /* boot clock */

static void exec_of(Tracer__ExecEvent *x, uint32_t pid, uint64_t start_ns, char **argv)
{
	tracer__exec_event__init(x);
	x->pid = pid;
	x->start_ns = start_ns;
	x->exe = argv[0];
	x->argv = argv;
	x->n_argv = 1;
}

/* Frames 1 and 2 of the clockstep mode; the ack of seq 2 covers both. */
static int send_clock_step(nng_socket s)
{
	const struct frame_head before = {.seq = 1, .realtime_offset_ns = CLOCK_OFFSET_NS};
	const struct frame_head after = {.seq = 2,
					 .realtime_offset_ns = CLOCK_OFFSET_NS + CLOCK_STEP_NS};
	char *argv[] = {"/usr/bin/framesend-clock"};
	Tracer__Event ev[4], *evs[4];
	Tracer__ExecEvent first, second;
	Tracer__SampleEvent sample = TRACER__SAMPLE_EVENT__INIT;
	Tracer__ExitEvent exit_ev = TRACER__EXIT_EVENT__INIT;

	for (int i = 0; i < 4; i++) {
		tracer__event__init(&ev[i]);
		evs[i] = &ev[i];
	}
	exec_of(&first, CLOCK_PID, CLOCK_START_NS, argv);
	ev[0].ts_ns = CLOCK_START_NS;
	ev[0].kind_case = TRACER__EVENT__KIND_EXEC;
	ev[0].exec = &first;
	if (send_frame_of(s, before, evs, 1, 0) != 0)
		return -1;
	sample.pid = CLOCK_PID;
	sample.start_ns = CLOCK_START_NS;
	sample.has_rss_kb = true;
	sample.rss_kb = 1024;
	ev[1].ts_ns = CLOCK_START_NS + NSEC_PER_SEC;
	ev[1].kind_case = TRACER__EVENT__KIND_SAMPLE;
	ev[1].sample = &sample;
	exit_ev.pid = CLOCK_PID;
	exit_ev.start_ns = CLOCK_START_NS;
	ev[2].ts_ns = CLOCK_START_NS + 2 * NSEC_PER_SEC;
	ev[2].kind_case = TRACER__EVENT__KIND_EXIT;
	ev[2].exit = &exit_ev;
	exec_of(&second, CLOCK_PID + 1, CLOCK_START_NS + 2500 * NSEC_PER_MSEC, argv);
	ev[3].ts_ns = second.start_ns;
	ev[3].kind_case = TRACER__EVENT__KIND_EXEC;
	ev[3].exec = &second;
	return send_frame_of(s, after, evs + 1, 3, 0);
}

/* 0 once the aggregator acknowledged seq 1 of our stream; -1 at the deadline. */
enum acked_mode { SEND_VALID, SEND_ORPHANS, SEND_CLOCK_STEP };

static int send_mode(nng_socket s, enum acked_mode mode)
{
	switch (mode) {
	case SEND_ORPHANS:
		return send_orphans(s);
	case SEND_CLOCK_STEP:
		return send_clock_step(s);
	default:
		return send_frame(s, 4242, 0);
	}
}

static int send_until_acked(nng_socket s, enum acked_mode mode)
{
	uint64_t last_seq = mode == SEND_CLOCK_STEP ? 2 : 1;
	uint64_t start = now_ms(), next_send = start;
	unsigned sends = 0, heartbeats = 0, others = 0;

	nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 200);
	while (now_ms() - start < ACK_DEADLINE_MS) {
		uint8_t buf[64];
		size_t len = sizeof(buf);
		struct ipc_ack a;

		if (now_ms() >= next_send) {
			if (send_mode(s, mode) == 0)
				sends++;
			next_send = now_ms() + RESEND_EVERY_MS;
		}
		if (nng_recv(s, buf, &len, 0) != 0)
			continue;
		if (ipc_ack_unpack(buf, len, &a) != 0) {
			others++;
		} else if (ipc_ack_is_heartbeat(&a)) {
			heartbeats++;
		} else if (memcmp(a.stream_id, stream_id, 16) == 0 && a.seq == last_seq &&
			   !a.resend) {
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
	const char *key = TRACER_DEFAULT_KEY;

	if (argc > 2 && strcmp(argv[1], "--key") == 0) {
		key = argv[2];
		argc -= 2;
		argv += 2;
	}
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
	prove_collector(s, key);
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
	} else if (strcmp(argv[2], "oversize") == 0) {
		size_t len = 12u << 20;
		uint8_t *big = calloc(1, len);
		if (!big || nng_send(s, big, len, 0) != 0)
			return 1;
		free(big);
	} else if (strcmp(argv[2], "badclock") == 0) {
		if (send_frame_at(s, 4243, UINT64_MAX - 5) != 0)
			return 1;
	} else if (strcmp(argv[2], "valid") == 0) {
		if (send_until_acked(s, SEND_VALID) != 0)
			return 1;
	} else if (strcmp(argv[2], "orphans") == 0) {
		if (send_until_acked(s, SEND_ORPHANS) != 0)
			return 1;
	} else if (strcmp(argv[2], "clockstep") == 0) {
		if (send_until_acked(s, SEND_CLOCK_STEP) != 0)
			return 1;
	} else {
		return 2;
	}
	usleep(200000); /* let the last message leave before closing */
	/* nng 1.5's close can hang with a peer attached (nng#1543): bounded. */
	ipc_close_within(s, 2000);
	return 0;
}
