#include "collector/drain.h"

#include <errno.h>
#include <string.h>

#include "common/log.h"
#include "common/timeutil.h"

/*
 * An event stamped before (drain start - margin) is surely committed: a BPF
 * program does not hold a reservation for this long.
 */
#define WATERMARK_MARGIN_NS (5 * NSEC_PER_MSEC)

static int on_record(void *ctx, void *data, size_t size)
{
	struct drain *d = ctx;
	int rv = convert_record(data, size, &d->batch, &d->conv);

	if (rv < 0) {
		d->enomem++;
		return 0;
	}
	if (rv == 0)
		d->batch_events++;
	/* Keep frames bounded even during a storm; the watermark waits. */
	if (d->batch.len >= DRAIN_FLUSH_BYTES)
		drain_flush(d, false);
	return 0;
}

int drain_add_event(void *ctx, const Tracer__Event *ev)
{
	struct drain *d = ctx;

	if (append_event(&d->batch, ev) != 0)
		return -1;
	d->batch_events++;
	if (d->batch.len >= DRAIN_FLUSH_BYTES)
		drain_flush(d, false);
	return 0;
}

int drain_init(struct drain *d, struct probes *probes, struct sender *sender)
{
	memset(d, 0, sizeof(*d));
	d->probes = probes;
	d->sender = sender;
	d->rb = ring_buffer__new(probes_ringbuf_fd(probes), on_record, d, NULL);
	if (!d->rb) {
		log_error("cannot map the ring buffer: %s", strerror(errno));
		return -1;
	}
	d->last_flush_ns = now_boottime_ns();
	return 0;
}

int drain_poll(struct drain *d, int timeout_ms)
{
	int rv = ring_buffer__poll(d->rb, timeout_ms);
	uint64_t start;

	if (rv < 0 && rv != -EINTR)
		return rv;
	start = now_boottime_ns();
	rv = ring_buffer__consume(d->rb);
	if (rv < 0 && rv != -EINTR)
		return rv;
	d->watermark_ns = start - WATERMARK_MARGIN_NS;
	return 0;
}

int drain_flush(struct drain *d, bool final)
{
	Tracer__CollectorStats st = TRACER__COLLECTOR_STATS__INIT;
	uint64_t drops[TRACER_DROP_MAX] = {0};

	probes_read_drops(d->probes, drops);
	st.has_events_read = st.has_kernel_drops_fork = st.has_kernel_drops_exec = 1;
	st.has_kernel_drops_exit = st.has_snapshot_processes = st.has_decode_errors = 1;
	st.events_read = d->conv.records;
	st.kernel_drops_fork = drops[TRACER_DROP_FORK];
	st.kernel_drops_exec = drops[TRACER_DROP_EXEC];
	st.kernel_drops_exit = drops[TRACER_DROP_EXIT];
	st.snapshot_processes = d->snapshot_processes;
	st.decode_errors = d->conv.bad_records + d->enomem;
	if (sender_enqueue(d->sender, &d->batch, d->batch_events, d->watermark_ns, &st, final,
			   d->snapshot_done_pending) != 0) {
		log_error("out of memory building a frame; %u events lost", d->batch_events);
		d->enomem += d->batch_events;
	}
	bytebuf_reset(&d->batch);
	d->batch_events = 0;
	d->snapshot_done_pending = false;
	d->last_flush_ns = now_boottime_ns();
	return 0;
}

void drain_close(struct drain *d)
{
	ring_buffer__free(d->rb);
	bytebuf_free(&d->batch);
}
