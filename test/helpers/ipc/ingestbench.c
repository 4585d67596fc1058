/*
 * ingestbench [--key PATH] SOCKET FIRST_PID N: plays a collector sending N synthetic process
 * lives (fork, exec with a 4-argument argv, exit with counters) to an aggregator,
 * 128 events per frame, at most WINDOW frames unacknowledged, as fast as the
 * acks come back. Prints "events SECONDS" once the last frame is acknowledged,
 * so the caller gets the aggregator's ingest rate (decode, correlate, commit,
 * ack).
 * PIDs FIRST_PID.. keep runs of the helper apart; each run is its own stream.
 * It proves itself with the collector key (default: the system's), as a collector.
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
#include "aggregator/receive/receiver.h"
#include "common/ipc.h"
#include "common/paths.h"
#include "test/helpers/ipc/prove.h"

#define EVENTS_PER_FRAME 128
/*
 * More than the aggregator's commit batch: with fewer in flight it waits out its
 * commit interval for frames that never come, and we would time that wait. (The
 * real collector has no frame window, only a bound on queued bytes.)
 */
#define WINDOW (4 * RECEIVER_BATCH_MAX_FRAMES)

static uint8_t stream_id[16], boot_id[16];

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* What one event points to while its frame is encoded. */
struct event_storage {
	Tracer__ForkEvent fork;
	Tracer__ExecEvent exec;
	Tracer__ExitEvent exit;
	Tracer__Counters totals;
	char *argv[4];
};

/* Event i of the run: process i / 3, phase i % 3 (fork, exec, exit). */
static void fill_event(Tracer__Event *ev, uint64_t i, uint32_t first_pid, struct event_storage *s)
{
	uint32_t pid = first_pid + (uint32_t)(i / 3);
	uint64_t start = 1000000000ULL + (i / 3) * 1000;

	tracer__event__init(ev);
	ev->ts_ns = start + (i % 3) * 100;
	switch (i % 3) {
	case 0:
		tracer__fork_event__init(&s->fork);
		s->fork.pid = pid;
		s->fork.has_start_ns = 1;
		s->fork.start_ns = start;
		s->fork.parent_pid = 1;
		s->fork.parent_start_ns = 1;
		s->fork.comm = "bash";
		ev->kind_case = TRACER__EVENT__KIND_FORK;
		ev->fork = &s->fork;
		break;
	case 1:
		tracer__exec_event__init(&s->exec);
		s->exec.pid = pid;
		s->exec.start_ns = start;
		s->exec.has_ppid = 1;
		s->exec.ppid = 1;
		s->exec.comm = "samtools";
		s->exec.exe = "/usr/bin/samtools";
		s->argv[0] = "samtools";
		s->argv[1] = "sort";
		s->argv[2] = "-o";
		s->argv[3] = "out.bam";
		s->exec.argv = s->argv;
		s->exec.n_argv = 4;
		s->exec.cwd = "/data/run42";
		ev->kind_case = TRACER__EVENT__KIND_EXEC;
		ev->exec = &s->exec;
		break;
	default:
		tracer__exit_event__init(&s->exit);
		tracer__counters__init(&s->totals);
		s->exit.pid = pid;
		s->exit.start_ns = start;
		s->exit.wait_status = 0;
		s->totals.has_utime_ns = 1;
		s->totals.utime_ns = 4000000;
		s->totals.has_peak_rss_kb = 1;
		s->totals.peak_rss_kb = 20480;
		s->exit.totals = &s->totals;
		ev->kind_case = TRACER__EVENT__KIND_EXIT;
		ev->exit = &s->exit;
		break;
	}
}

static int send_frame(nng_socket s, uint64_t seq, uint64_t first_event, uint64_t n_events,
		      uint32_t first_pid)
{
	static struct event_storage storage[EVENTS_PER_FRAME];
	Tracer__Frame f = TRACER__FRAME__INIT;
	Tracer__Event evs[EVENTS_PER_FRAME], *ptrs[EVENTS_PER_FRAME];
	uint8_t *buf;
	size_t len;

	for (uint64_t k = 0; k < n_events; k++) {
		fill_event(&evs[k], first_event + k, first_pid, &storage[k]);
		ptrs[k] = &evs[k];
	}
	f.version = TRACER__CONSTANTS__FRAME_VERSION;
	f.seq = seq;
	f.stream_id.data = stream_id;
	f.stream_id.len = 16;
	f.boot_id.data = boot_id;
	f.boot_id.len = 16;
	f.watermark_ns = 1000000000ULL + (first_event + n_events) / 3 * 1000;
	f.realtime_offset_ns = 1000;
	f.events = ptrs;
	f.n_events = n_events;
	if (frame_encode(&f, &buf, &len) != 0)
		return -1;
	int rv = nng_send(s, buf, len, 0);
	free(buf);
	return rv;
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
	if (argc != 4)
		return 2;
	uint32_t first_pid = (uint32_t)strtoul(argv[2], NULL, 10);
	uint64_t total = strtoull(argv[3], NULL, 10) * 3;
	uint64_t frames = (total + EVENTS_PER_FRAME - 1) / EVENTS_PER_FRAME, sent = 0, acked = 0;

	getrandom(stream_id, sizeof(stream_id), 0);
	getrandom(boot_id, sizeof(boot_id), 0);
	snprintf(url, sizeof(url), "ipc://%s", argv[1]);
	if (nng_pair1_open(&s) != 0 || nng_dial(s, url, NULL, 0) != 0) {
		fprintf(stderr, "ingestbench: cannot connect to %s\n", argv[1]);
		return 3;
	}
	nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 30000);
	prove_collector(s, key);
	double t0 = now_s();
	while (acked < frames) {
		while (sent < frames && sent - acked < WINDOW) {
			uint64_t first = sent * EVENTS_PER_FRAME;
			uint64_t n =
			    total - first < EVENTS_PER_FRAME ? total - first : EVENTS_PER_FRAME;
			if (send_frame(s, sent + 1, first, n, first_pid) != 0) {
				fprintf(stderr, "ingestbench: send failed\n");
				return 1;
			}
			sent++;
		}
		uint8_t buf[64];
		size_t len = sizeof(buf);
		struct ipc_ack a;
		if (nng_recv(s, buf, &len, 0) != 0 || ipc_ack_unpack(buf, len, &a) != 0) {
			fprintf(stderr, "ingestbench: no ack after %llu of %llu frames\n",
				(unsigned long long)acked, (unsigned long long)frames);
			return 1;
		}
		if (a.seq > acked)
			acked = a.seq;
	}
	printf("%llu %.3f\n", (unsigned long long)total, now_s() - t0);
	/* Every frame is acknowledged. nng_close can hang for good here (nng#1543,
	 * as the aggregator's own close does), so leave the socket to the kernel. */
	fflush(stdout);
	_exit(0);
}
