#include "collector/send/drain.h"
#include "collector/send/internal.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/timeutil.h"
#include "common/vec.h"

/*
 * An event stamped before (drain start - margin) is surely committed: a BPF
 * program does not hold a reservation for this long.
 */
#define WATERMARK_MARGIN_NS (5 * NSEC_PER_MSEC)

static void count_type(struct drain *d, int type)
{
	d->batch_events++;
	d->batch_types[type >= 0 && type < TRACER_EV_COUNT ? type : 0]++;
	handover_read(d->sender, type >= 0 && type < TRACER_EV_COUNT ? type : 0);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct drain *d = ctx;
	int type;
	int rv = convert_record(data, size, &d->batch, &d->conv, &type);

	if (rv < 0) {
		d->enomem++;
		return 0;
	}
	if (rv == 0)
		count_type(d, type);
	/* Keep frames bounded even during a storm; the watermark waits. */
	if (d->batch.len >= DRAIN_FLUSH_BYTES)
		drain_flush(d, false);
	return 0;
}

int drain_add_record(void *ctx, const void *data, size_t size)
{
	on_record(ctx, (void *)data, size);
	return 0;
}

int drain_add_event(void *ctx, const Tracer__Event *ev)
{
	struct drain *d = ctx;

	if (append_event(&d->batch, ev) != 0)
		return -1;
	count_type(d, ev->kind_case == TRACER__EVENT__KIND_CGROUP   ? TRACER_EV_CGROUP
		      : ev->kind_case == TRACER__EVENT__KIND_ENERGY ? TRACER_EV_SAMPLE
								    : TRACER_EV_EXEC);
	if (d->batch.len >= DRAIN_FLUSH_BYTES)
		drain_flush(d, false);
	return 0;
}

int drain_add_sample(void *ctx, const struct tracer_sample *s)
{
	struct drain *d = ctx;

	if (convert_sample(s, &d->batch) != 0) {
		d->enomem++;
		return -1;
	}
	count_type(d, TRACER_EV_SAMPLE);
	if (d->batch.len >= DRAIN_FLUSH_BYTES)
		drain_flush(d, false);
	return 0;
}

static int by_ts(const void *a, const void *b)
{
	const struct staged_record *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Converts the staged perf records in timestamp order. */
static void flush_staged(struct drain *d)
{
	/* Nothing staged yet: d->staged may still be NULL, which qsort must not get. */
	if (d->n_staged == 0)
		return;
	qsort(d->staged, d->n_staged, sizeof(*d->staged), by_ts);
	for (size_t i = 0; i < d->n_staged; i++) {
		on_record(d, d->staged[i].data, d->staged[i].size);
		free(d->staged[i].data);
	}
	d->n_staged = 0;
	d->staged_bytes = 0;
}

/* Perf samples are only 4-byte aligned: read them from our aligned copy. */
static void on_perf_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct drain *d = ctx;
	struct tracer_event_header h = {0};

	if (!vec_grow(d->staged, d->cap_staged, d->n_staged + 1)) {
		d->enomem++;
		return;
	}
	void *copy = malloc(size);
	if (!copy) {
		d->enomem++;
		return;
	}
	memcpy(copy, data, size);
	if (size >= sizeof(h))
		memcpy(&h, copy, sizeof(h));
	d->staged[d->n_staged++] =
	    (struct staged_record){.ts = h.ts_ns, .size = size, .data = copy};
	d->staged_bytes += size;
}

static void on_perf_lost(void *ctx, int cpu, __u64 count)
{
	struct drain *d = ctx;

	d->perf_lost += count;
}

int drain_init(struct drain *d, struct probes *probes, struct sender *sender)
{
	memset(d, 0, sizeof(*d));
	d->probes = probes;
	d->sender = sender;
	if (probes->using_perfbuf) {
		/* The --ring-mb budget split across CPUs, in a power of two of pages. */
		long cpus = libbpf_num_possible_cpus(), page = sysconf(_SC_PAGESIZE);
		size_t pages = 64;
		while (pages * 2 * (size_t)page * (size_t)(cpus > 0 ? cpus : 1) <=
		       (size_t)probes->ring_mb << 20)
			pages *= 2;
		/* Its callbacks only copy: records are converted by drain_poll, after the drop. */
		d->pb = perf_buffer__new(probes_perfbuf_fd(probes), pages, on_perf_sample,
					 on_perf_lost, d, NULL);
		if (!d->pb) {
			log_error("cannot open the perf buffers: %s", strerror(errno));
			return -1;
		}
	}
	d->last_flush_ns = now_boottime_ns();
	return 0;
}

int drain_start(struct drain *d)
{
	if (d->pb)
		return 0;
	d->rb = ring_buffer__new(probes_ringbuf_fd(d->probes), on_record, d, NULL);
	if (!d->rb) {
		log_error("cannot map the ring buffer: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int drain_poll(struct drain *d, int timeout_ms, int wake_fd)
{
	struct pollfd fds[2] = {
	    {.fd = d->pb ? perf_buffer__epoll_fd(d->pb) : ring_buffer__epoll_fd(d->rb),
	     .events = POLLIN},
	    {.fd = wake_fd, .events = POLLIN}, /* poll skips a negative fd */
	};
	uint64_t start;
	int rv;

	if (poll(fds, 2, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	start = now_boottime_ns();
	rv = d->pb ? perf_buffer__consume(d->pb) : ring_buffer__consume(d->rb);
	if (rv < 0 && rv != -EINTR)
		return rv;
	if (d->pb)
		flush_staged(d);
	d->watermark_ns = start - WATERMARK_MARGIN_NS;
	return 0;
}

static bool batch_pending(const struct drain *d)
{
	return d->batch_events > 0 || d->last_frame_had_events;
}

bool drain_flush_due(const struct drain *d, uint64_t now_ns, uint64_t interval_ns)
{
	return batch_pending(d) && now_ns - d->last_flush_ns >= interval_ns;
}

int drain_wait_ms(const struct drain *d, uint64_t now_ns, uint64_t interval_ns)
{
	uint64_t due_ns = d->last_flush_ns + interval_ns;

	/* Nothing waiting: a whole interval, the kernel's events read at its end. */
	if (!batch_pending(d))
		return (int)(interval_ns / NSEC_PER_MSEC);
	if (now_ns >= due_ns)
		return 0;
	return (int)((due_ns - now_ns + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
}

/*
 * What was seen but could not be counted or read, beside the events lost (docs/schema.md,
 * event_loss): network waits not attributed (hop "net_wait") and RAPL readings that
 * failed (hop "rapl"). Into out (room for TRACER_NETW_STATS + 1): how many.
 */
static size_t failure_losses(const struct drain *d, const uint64_t *net_wait,
			     Tracer__LossCount *out)
{
	static const char *const net_wait_names[TRACER_NETW_STATS] = {
	    [TRACER_NETW_FD_UNREADABLE] = "fd_unreadable", [TRACER_NETW_NO_ACC] = "no_accumulator"};
	size_t n = 0;

	for (int t = 0; t < TRACER_NETW_STATS; t++) {
		tracer__loss_count__init(&out[n]);
		out[n].hop = "net_wait";
		out[n].event_type = (char *)net_wait_names[t];
		out[n++].count = net_wait[t];
	}
	if (d->rapl_read_failures) {
		tracer__loss_count__init(&out[n]);
		out[n].hop = "rapl";
		out[n].event_type = "read_failed";
		out[n++].count = *d->rapl_read_failures;
	}
	return n;
}

int drain_flush(struct drain *d, bool final)
{
	Tracer__CollectorStats st = TRACER__COLLECTOR_STATS__INIT;
	uint64_t drops[TRACER_DROP_SLOTS] = {0}, net_wait[TRACER_NETW_STATS] = {0};
	Tracer__ProbeStatus probes[PROBE_GROUPS], *probe_ptrs[PROBE_GROUPS];
	Tracer__LossCount losses[TRACER_DROP_SLOTS + TRACER_EV_COUNT + TRACER_NETW_STATS + 1],
	    *loss_ptrs[TRACER_DROP_SLOTS + TRACER_EV_COUNT + TRACER_NETW_STATS + 1];
	size_t n_losses = 0;

	probes_read_drops(d->probes, drops, net_wait);
	st.has_events_read = st.has_kernel_drops_fork = st.has_kernel_drops_exec = 1;
	st.has_kernel_drops_exit = st.has_snapshot_processes = st.has_decode_errors = 1;
	st.events_read = d->conv.records;
	st.kernel_drops_fork = drops[TRACER_EV_FORK];
	st.kernel_drops_exec = drops[TRACER_EV_EXEC];
	st.kernel_drops_exit = drops[TRACER_EV_EXIT];
	st.has_kernel_drops_other = 1;
	st.kernel_drops_other = d->perf_lost;
	st.snapshot_processes = d->snapshot_processes;
	st.decode_errors = d->conv.bad_records + d->enomem;
	st.has_samples_taken = 1;
	st.samples_taken = d->probes->samples_taken;
	for (int g = 0; g < PROBE_GROUPS; g++) {
		tracer__probe_status__init(&probes[g]);
		probes[g].name = (char *)probe_group_name(g);
		probes[g].state = (char *)probe_state_name(d->probes->status[g].state);
		probes[g].detail = d->probes->status[g].detail;
		probe_ptrs[g] = &probes[g];
	}
	st.n_probes = PROBE_GROUPS;
	st.probes = probe_ptrs;
	for (int t = TRACER_EV_FORK; t < TRACER_DROP_SLOTS; t++) {
		tracer__loss_count__init(&losses[n_losses]);
		losses[n_losses].hop = "kernel";
		losses[n_losses].event_type = (char *)event_type_name(t);
		losses[n_losses].count = drops[t];
		n_losses++;
	}
	for (int t = 1; t < TRACER_EV_COUNT; t++) {
		tracer__loss_count__init(&losses[n_losses]);
		losses[n_losses].hop = "collector";
		losses[n_losses].event_type = (char *)event_type_name(t);
		n_losses++; /* the sender fills the count, after making room for this frame */
	}
	n_losses += failure_losses(d, net_wait, losses + n_losses);
	for (size_t i = 0; i < n_losses; i++)
		loss_ptrs[i] = &losses[i];
	st.n_losses = n_losses;
	st.losses = loss_ptrs;
	if (sender_enqueue(d->sender, &d->batch, d->batch_types, d->batch_events, d->watermark_ns,
			   &st, final, d->snapshot_done_pending) != 0) {
		log_error("out of memory building a frame; %u events lost", d->batch_events);
		d->enomem += d->batch_events;
	}
	/*
	 * Only a frame with process events needs the next tick's frame, whose
	 * watermark completes them (`tracer run` waits for that). A frame of
	 * periodic samples alone does not: following each with an empty frame made
	 * two frames, two commits and two acknowledgements a second on an idle host.
	 */
	d->last_frame_had_events = d->batch_events > d->batch_types[TRACER_EV_SAMPLE];
	bytebuf_reset(&d->batch);
	d->batch_events = 0;
	memset(d->batch_types, 0, sizeof(d->batch_types));
	d->snapshot_done_pending = false;
	d->last_flush_ns = now_boottime_ns();
	return 0;
}

void drain_close(struct drain *d)
{
	for (size_t i = 0; i < d->n_staged; i++)
		free(d->staged[i].data);
	free(d->staged);
	perf_buffer__free(d->pb);
	ring_buffer__free(d->rb);
	bytebuf_free(&d->batch);
}
