#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "aggregator/receive/internal.h"
#include "common/hostinfo.h"
#include "common/log.h"
#include "common/timeutil.h"

static void update_probes(struct stream_row *row, const Tracer__CollectorStats *st)
{
	json_t *arr = json_array();
	size_t n;

	for (size_t i = 0; i < st->n_probes && arr; i++) {
		const Tracer__ProbeStatus *p = st->probes[i];
		json_array_append_new(arr,
				      json_pack("{s:s, s:s, s:s}", "name", p->name, "state",
						p->state, "detail", p->detail ? p->detail : ""));
	}
	n = arr ? json_dumpb(arr, row->probes_json, sizeof(row->probes_json) - 1, JSON_COMPACT) : 0;
	row->probes_json[n < sizeof(row->probes_json) ? n : 0] = '\0';
	json_decref(arr);
}

static void update_losses(struct stream_state *s, const Tracer__CollectorStats *st)
{
	for (size_t i = 0; i < st->n_losses; i++) {
		const Tracer__LossCount *l = st->losses[i];
		unsigned k;
		for (k = 0; k < s->n_losses; k++)
			if (!strcmp(s->losses[k].hop, l->hop) &&
			    !strcmp(s->losses[k].type, l->event_type))
				break;
		if (k == s->n_losses) {
			if (k == RECEIVER_MAX_LOSSES)
				continue;
			snprintf(s->losses[k].hop, sizeof(s->losses[k].hop), "%s", l->hop);
			snprintf(s->losses[k].type, sizeof(s->losses[k].type), "%s", l->event_type);
			s->losses[k].count = UINT64_MAX; /* forces the first write */
			s->n_losses++;
		}
		if (s->losses[k].count != l->count) {
			s->losses[k].count = l->count;
			s->losses[k].dirty = true;
		}
	}
}

/*
 * Every event the kernel could not buffer: the per-type counts of the loss
 * list (fork, exec, exit, but also files, OOM kills, cgroups) and the
 * perf-buffer losses whose type is unknown.
 */
static uint64_t kernel_drops_total(const struct stream_state *s)
{
	const struct stream_row *row = &s->row;
	uint64_t n = row->kernel_drops_other;
	bool listed = false;

	for (unsigned k = 0; k < s->n_losses; k++) {
		if (!strcmp(s->losses[k].hop, "kernel")) {
			n += s->losses[k].count;
			listed = true;
		}
	}
	if (!listed) /* a frame without the list: the types it names */
		n += row->kernel_drops_fork + row->kernel_drops_exec + row->kernel_drops_exit;
	return n;
}

void stream_update_stats(struct stream_state *s, const Tracer__Frame *f)
{
	struct stream_row *row = &s->row;
	const Tracer__CollectorStats *st = f->stats;

	format_hex(f->boot_id.data, 16, row->boot_id, sizeof(row->boot_id));
	snprintf(row->host_id, sizeof(row->host_id), "%s", f->host_id ? f->host_id : "");
	snprintf(row->hostname, sizeof(row->hostname), "%s", f->hostname ? f->hostname : "");
	row->collector_pid = f->collector_pid;
	row->last_seen_epoch_ns = (int64_t)now_realtime_ns();
	row->last_seq = f->seq;
	if (f->watermark_ns > row->watermark_boot_ns)
		row->watermark_boot_ns = f->watermark_ns;
	row->frames_received++;
	row->events_received += f->n_events;
	if (st) {
		/* Cumulative on the collector side: the latest frame has the totals. */
		row->kernel_drops_fork = st->kernel_drops_fork;
		row->kernel_drops_exec = st->kernel_drops_exec;
		row->kernel_drops_exit = st->kernel_drops_exit;
		row->kernel_drops_other = st->kernel_drops_other;
		row->collector_drops = st->queue_drops + st->decode_errors;
		row->decode_errors = st->decode_errors;
		row->snapshot_processes = st->snapshot_processes;
		row->samples_taken = st->samples_taken;
		if (st->n_probes)
			update_probes(row, st);
		update_losses(s, st);
		row->kernel_drops = kernel_drops_total(s);
	}
	row->final = f->final;
	s->dirty = true;
}

/*
 * A new stream on a boot another collector watched before: from that one's
 * last watermark to this one's first, nobody watched. Its snapshot counts the
 * processes that began meanwhile (ingest_begin_blind_window).
 */
void stream_begin_blind_window(struct receiver *r, struct stream_state *s, const Tracer__Frame *f)
{
	char boot[33];
	uint64_t since;

	format_hex(f->boot_id.data, 16, boot, sizeof(boot));
	since = store_boot_watermark(r->store, boot, s->row.stream_id);
	for (struct stream_state *o = r->streams; o; o = o->next)
		if (o != s && !strcmp(o->row.boot_id, boot) && o->row.watermark_boot_ns > since)
			since = o->row.watermark_boot_ns;
	if (!since || f->watermark_ns <= since)
		return;
	s->row.has_blind = true;
	s->row.blind_ns = f->watermark_ns - since;
	/* An aggregator that records runs alone and has none yet (tracer run's own,
	 * started with its collector) lost nothing it records: said, not warned,
	 * and none of the processes that began meanwhile count as lost. */
	if (r->ingest->scope == SCOPE_RUNS && !r->ingest->corr.runs) {
		log_info("stream %s: %.3f s since the previous collector of this boot (no run "
			 "of this aggregator's was open)",
			 s->row.stream_id, (double)s->row.blind_ns / 1e9);
		return;
	}
	ingest_begin_blind_window(r->ingest, since);
	log_warn("stream %s: the host went unwatched for %.3f s since the previous "
		 "collector",
		 s->row.stream_id, (double)s->row.blind_ns / 1e9);
}
