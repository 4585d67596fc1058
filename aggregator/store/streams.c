/* Collector streams and the aggregator's own counters: what became of every event. */
#include "aggregator/store/internal.h"

#include <stdio.h>
#include <string.h>

#define STREAM_COLUMNS                                                                             \
	"stream_id, boot_id, host_id, hostname, collector_pid, first_seen_ns, last_seen_ns, "      \
	"last_seq, watermark_boot_ns, frames_received, duplicate_frames, events_received, "        \
	"kernel_drops, kernel_drops_fork, kernel_drops_exec, kernel_drops_exit, "                  \
	"kernel_drops_other, collector_drops, seq_gaps, decode_errors, snapshot_processes, "       \
	"final, "                                                                                  \
	"probes, samples_taken, blind_ns, blind_processes"
static const char sql_put_stream[] = "INSERT OR REPLACE INTO collector_stats (" STREAM_COLUMNS ") "
				     "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

static const char sql_get_stream[] =
    "SELECT boot_id, host_id, hostname, collector_pid, first_seen_ns, last_seen_ns, last_seq, "
    "watermark_boot_ns, frames_received, duplicate_frames, events_received, kernel_drops, "
    "kernel_drops_fork, kernel_drops_exec, kernel_drops_exit, kernel_drops_other, "
    "collector_drops, seq_gaps, decode_errors, snapshot_processes, final, blind_ns, "
    "blind_processes FROM collector_stats WHERE stream_id = ?";

/* The furthest a stream of this boot got, other than the given one: where a new one's blindness
 * began. */
static const char sql_boot_watermark[] =
    "SELECT max(watermark_boot_ns) FROM collector_stats WHERE boot_id = ?1 AND stream_id != ?2";

static const char sql_put_agg[] =
    "INSERT OR REPLACE INTO aggregator_stats (id, started_ns, updated_ns, aggregator_pid, "
    "frames_received, bad_frames, refused_peers, last_bad_frame, events_ingested, "
    "samples_unmatched, files_unmatched, late_events, unmatched_exits, missing_parents, "
    "lost_processes, events_skipped, clock_steps, last_clock_step_ns, tails_unmatched, "
    "denied_images) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

int store_prepare_streams(struct store *s)
{
	return prepare(s, sql_put_stream, &s->put_stream) ||
		       prepare(s, sql_get_stream, &s->get_stream) ||
		       prepare(s, sql_put_agg, &s->put_agg) ||
		       prepare_update(s, "collector_stats", STREAM_COLUMNS, 1, &s->update_stream)
		   ? -1
		   : 0;
}

static void bind_stream(sqlite3_stmt *st, const void *row)
{
	const struct stream_row *r = row;
	int i = 1;

	sqlite3_bind_text(st, i++, r->stream_id, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, i++, r->boot_id);
	bind_text_or_null(st, i++, r->host_id);
	bind_text_or_null(st, i++, r->hostname);
	sqlite3_bind_int64(st, i++, r->collector_pid);
	sqlite3_bind_int64(st, i++, r->first_seen_epoch_ns);
	sqlite3_bind_int64(st, i++, r->last_seen_epoch_ns);
	bind_u64(st, i++, r->last_seq);
	bind_u64(st, i++, r->watermark_boot_ns);
	bind_u64(st, i++, r->frames_received);
	bind_u64(st, i++, r->duplicate_frames);
	bind_u64(st, i++, r->events_received);
	bind_u64(st, i++, r->kernel_drops);
	bind_u64(st, i++, r->kernel_drops_fork);
	bind_u64(st, i++, r->kernel_drops_exec);
	bind_u64(st, i++, r->kernel_drops_exit);
	bind_u64(st, i++, r->kernel_drops_other);
	bind_u64(st, i++, r->collector_drops);
	bind_u64(st, i++, r->seq_gaps);
	bind_u64(st, i++, r->decode_errors);
	bind_u64(st, i++, r->snapshot_processes);
	sqlite3_bind_int(st, i++, r->final);
	bind_text_or_null(st, i++, r->probes_json);
	bind_u64(st, i++, r->samples_taken);
	if (r->has_blind) {
		bind_u64(st, i++, r->blind_ns);
		bind_u64(st, i++, r->blind_processes);
	} else {
		sqlite3_bind_null(st, i++);
		sqlite3_bind_null(st, i++);
	}
}

int store_put_stream(struct store *s, const struct stream_row *r)
{
	return update_or_insert(s, s->update_stream, s->put_stream, bind_stream, r);
}

int store_get_stream(struct store *s, const char *stream_id, struct stream_row *r)
{
	sqlite3_stmt *st = s->get_stream;
	int rc, i = 0;

	sqlite3_bind_text(st, 1, stream_id, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		memset(r, 0, sizeof(*r));
		snprintf(r->stream_id, sizeof(r->stream_id), "%s", stream_id);
		copy_column(st, i++, r->boot_id, sizeof(r->boot_id));
		copy_column(st, i++, r->host_id, sizeof(r->host_id));
		copy_column(st, i++, r->hostname, sizeof(r->hostname));
		r->collector_pid = (uint32_t)sqlite3_column_int64(st, i++);
		r->first_seen_epoch_ns = sqlite3_column_int64(st, i++);
		r->last_seen_epoch_ns = sqlite3_column_int64(st, i++);
		r->last_seq = (uint64_t)sqlite3_column_int64(st, i++);
		r->watermark_boot_ns = (uint64_t)sqlite3_column_int64(st, i++);
		r->frames_received = (uint64_t)sqlite3_column_int64(st, i++);
		r->duplicate_frames = (uint64_t)sqlite3_column_int64(st, i++);
		r->events_received = (uint64_t)sqlite3_column_int64(st, i++);
		r->kernel_drops = (uint64_t)sqlite3_column_int64(st, i++);
		r->kernel_drops_fork = (uint64_t)sqlite3_column_int64(st, i++);
		r->kernel_drops_exec = (uint64_t)sqlite3_column_int64(st, i++);
		r->kernel_drops_exit = (uint64_t)sqlite3_column_int64(st, i++);
		r->kernel_drops_other = (uint64_t)sqlite3_column_int64(st, i++);
		r->collector_drops = (uint64_t)sqlite3_column_int64(st, i++);
		r->seq_gaps = (uint64_t)sqlite3_column_int64(st, i++);
		r->decode_errors = (uint64_t)sqlite3_column_int64(st, i++);
		r->snapshot_processes = (uint64_t)sqlite3_column_int64(st, i++);
		r->final = sqlite3_column_int(st, i++) != 0;
		r->has_blind = sqlite3_column_type(st, i) != SQLITE_NULL;
		r->blind_ns = (uint64_t)sqlite3_column_int64(st, i++);
		r->blind_processes = (uint64_t)sqlite3_column_int64(st, i++);
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : -1;
}

uint64_t store_boot_watermark(struct store *s, const char *boot_id, const char *stream_id)
{
	sqlite3_stmt *st;
	uint64_t w = 0;

	if (sqlite3_prepare_v2(s->db, sql_boot_watermark, -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, boot_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, stream_id, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		w = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return w;
}

int store_put_aggregator_stats(struct store *s, struct aggregator_stats_row *r)
{
	sqlite3_stmt *st = s->put_agg;
	int i = 1;

	if (r->id == 0)
		r->id = max_id(s->db, "aggregator_stats") + 1;
	sqlite3_bind_int64(st, i++, r->id);
	sqlite3_bind_int64(st, i++, r->started_epoch_ns);
	sqlite3_bind_int64(st, i++, r->updated_epoch_ns);
	sqlite3_bind_int64(st, i++, r->pid);
	bind_u64(st, i++, r->frames_received);
	bind_u64(st, i++, r->bad_frames);
	bind_u64(st, i++, r->refused_peers);
	bind_text_or_null(st, i++, r->last_bad_frame);
	bind_u64(st, i++, r->events.events);
	bind_u64(st, i++, r->events.samples_unmatched);
	bind_u64(st, i++, r->events.files_unmatched);
	bind_u64(st, i++, r->events.late_events);
	bind_u64(st, i++, r->events.unmatched_exits);
	bind_u64(st, i++, r->events.missing_parents);
	bind_u64(st, i++, r->events.lost_processes);
	bind_u64(st, i++, r->events.oom);
	bind_u64(st, i++, r->events.clock_steps);
	if (r->events.clock_steps)
		sqlite3_bind_int64(st, i++, r->events.last_clock_step_ns);
	else
		sqlite3_bind_null(st, i++);
	bind_u64(st, i++, r->events.tails_unmatched);
	bind_u64(st, i++, r->events.denied_images);
	return step_done(s, st);
}
