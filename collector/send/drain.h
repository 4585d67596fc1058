/*
 * Draining the kernel ring buffer into frames. The BPF side does not wake us
 * per event (that costs more than the tracing itself); we drain on a short
 * timer, or earlier when the buffer passes a fill threshold.
 */
#ifndef TRACER_DRAIN_H
#define TRACER_DRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include <bpf/libbpf.h>

#include "collector/convert/convert.h"
#include "collector/setup/probes.h"
#include "collector/send/sender.h"
#include "common/eventtypes.h"

#define DRAIN_FLUSH_BYTES (1u << 20)

/* A perf-buffer record waiting to be put in time order. */
struct staged_record {
	uint64_t ts;
	uint32_t size;
	void *data;
};

struct drain {
	struct ring_buffer *rb;
	struct perf_buffer *pb;	      /* instead of rb on kernels without ring buffers */
	struct staged_record *staged; /* perf buffers are per CPU: sort before sending */
	size_t n_staged, cap_staged, staged_bytes;
	uint64_t perf_lost; /* samples the kernel could not write (perf mode) */
	struct probes *probes;
	struct sender *sender;
	struct bytebuf batch;
	uint32_t batch_events;
	uint32_t batch_types[TRACER_EV_COUNT];
	uint64_t watermark_ns; /* all events before this were read */
	uint64_t last_flush_ns;
	bool last_frame_had_events; /* besides samples: the next tick sends a frame too */
	struct convert_stats conv;
	uint64_t snapshot_processes;
	uint64_t enomem;
	bool snapshot_done_pending; /* mark the next frame */
	/* RAPL counters that could not be read (convert/energy.c), sent as a loss of hop
	 * "rapl"; NULL: no RAPL reader. */
	const uint64_t *rapl_read_failures;
};

/*
 * As root: perf buffers need perf_event_open (their callbacks only copy the
 * records). No conversion before drain_start.
 */
int drain_init(struct drain *d, struct probes *probes, struct sender *sender);
/* After the privilege drop: maps the ring buffer, whose callback converts. */
int drain_start(struct drain *d);
/*
 * Waits up to timeout_ms for the kernel's wake-up (or for wake_fd, if not -1,
 * to turn readable), then reads everything.
 */
int drain_poll(struct drain *d, int timeout_ms, int wake_fd);
/*
 * How long the loop may sleep before the batch is due (see drain_flush_due),
 * in ms, given the flush interval.
 */
int drain_wait_ms(const struct drain *d, uint64_t now_ns, uint64_t interval_ns);
/*
 * Whether the batch goes out now: it holds events (or the frame before it did,
 * whose watermark the next one completes) and interval_ns has passed since the
 * last frame. A burst is read as it comes (the ring must not fill) but sent as
 * one frame per interval: a frame per turn of the loop made hundreds of tiny
 * frames a second, each with its own header, send, decode and ack.
 */
bool drain_flush_due(const struct drain *d, uint64_t now_ns, uint64_t interval_ns);
/* Adds a kernel record read elsewhere (the snapshot iterator's), as drain_poll does. */
int drain_add_record(void *drain, const void *data, size_t size);
/* Adds an event built in user space (cgroup snapshot); flushes when the batch is big. */
int drain_add_event(void *drain, const Tracer__Event *ev);
/* Adds a live sample from the task iterator (probes_sample's sink). */
int drain_add_sample(void *drain, const struct tracer_sample *s);
/* Queues the batch as a frame (possibly empty: a heartbeat). */
int drain_flush(struct drain *d, bool final);
void drain_close(struct drain *d);

#endif
