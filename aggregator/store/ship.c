/*
 * The outbox's entry points: every written record that leaves the host goes
 * through here, and with shipping off (no outbox) each is a no-op.
 */
#include "aggregator/store/internal.h"

#include "aggregator/outbox/outbox.h"
#include "common/timeutil.h"

/* Each is a no-op with shipping off; the time queued is the wall clock's. */
#define NOW ((int64_t)now_realtime_ns())

int store_ship_process(struct store *s, int64_t process_id)
{
	return s->outbox ? outbox_add_process(s->outbox, process_id, NOW) : 0;
}

int store_ship_step(struct store *s, int64_t step_id)
{
	return s->outbox ? outbox_add_step(s->outbox, step_id, NOW) : 0;
}

int store_ship_run(struct store *s, int64_t run_id)
{
	return s->outbox ? outbox_add_run(s->outbox, run_id, NOW) : 0;
}

int store_ship_signal(struct store *s, int64_t signal_id)
{
	return s->outbox ? outbox_add_signal(s->outbox, signal_id, NOW) : 0;
}

int store_ship_tool(struct store *s, int64_t tool_id)
{
	return s->outbox ? outbox_add_tool(s->outbox, tool_id, NOW) : 0;
}

int store_ship_sample(struct store *s, int64_t process_id, int64_t ts_epoch_ns)
{
	return s->outbox ? outbox_add_sample(s->outbox, process_id, ts_epoch_ns, NOW) : 0;
}

int store_ship_host_sample(struct store *s, int64_t ts_epoch_ns)
{
	return s->outbox ? outbox_add_host_sample(s->outbox, ts_epoch_ns, NOW) : 0;
}

int store_ship_energy_sample(struct store *s, const struct energy_sample_row *r)
{
	return s->outbox
		   ? outbox_add_energy_sample(s->outbox, r->host_id, r->zone, r->ts_epoch_ns, NOW)
		   : 0;
}

int store_ship_collector_stats(struct store *s, const char *stream_id)
{
	return s->outbox ? outbox_add_collector_stats(s->outbox, stream_id, NOW) : 0;
}

int store_ship_batch_submission(struct store *s, int64_t submission_id)
{
	return s->outbox ? outbox_add_batch_submission(s->outbox, submission_id, NOW) : 0;
}

int store_ship_batch_job(struct store *s, int64_t rowid)
{
	return s->outbox ? outbox_add_batch_job(s->outbox, rowid, NOW) : 0;
}

int store_hold_samples(struct store *s, int64_t process_id)
{
	return s->outbox ? outbox_hold_samples(s->outbox, process_id) : 0;
}

int store_release_samples(struct store *s, int64_t process_id)
{
	return s->outbox ? outbox_release_samples(s->outbox, process_id, NOW) : 0;
}

int store_refresh_shipped_process(struct store *s, int64_t process_id)
{
	return s->outbox ? outbox_refresh_process(s->outbox, process_id) : 0;
}

int64_t store_outbox_mark(struct store *s)
{
	return s->outbox ? outbox_mark(s->outbox) : 0;
}

int store_reship_processes(struct store *s, const int64_t *ids, size_t n, int64_t since)
{
	return s->outbox ? outbox_requeue_processes(s->outbox, ids, n, since, NOW) : 0;
}

int store_ship_live(struct store *s)
{
	return s->outbox ? outbox_add_live(s->outbox, NOW) : 0;
}

int store_withdraw_process(struct store *s, int64_t process_id)
{
	return s->outbox ? outbox_withdraw(s->outbox, OUTBOX_PROCESSES, process_id, NOW) : 0;
}

int store_withdraw_step(struct store *s, int64_t step_id)
{
	return s->outbox ? outbox_withdraw(s->outbox, OUTBOX_STEPS, step_id, NOW) : 0;
}

int store_withdraw_run(struct store *s, int64_t run_id)
{
	return s->outbox ? outbox_withdraw(s->outbox, OUTBOX_RUNS, run_id, NOW) : 0;
}
