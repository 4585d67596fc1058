/*
 * The outbox's entry points: every written record that leaves the host goes
 * through here, and with shipping off (no outbox) each is a no-op.
 */
#include "aggregator/store/internal.h"

#include "aggregator/outbox/outbox.h"
#include "common/timeutil.h"

int store_ship(struct store *s, int kind, int64_t a, int64_t b, const char *text)
{
	if (!s->outbox)
		return 0;
	return outbox_add(s->outbox, (enum outbox_kind)kind, a, b, text,
			  (int64_t)now_realtime_ns());
}

int store_hold_samples(struct store *s, int64_t process_id)
{
	return s->outbox ? outbox_hold_samples(s->outbox, process_id) : 0;
}

int store_release_samples(struct store *s, int64_t process_id)
{
	return s->outbox ? outbox_release_samples(s->outbox, process_id, (int64_t)now_realtime_ns())
			 : 0;
}

int store_refresh_shipped_process(struct store *s, int64_t process_id)
{
	return s->outbox ? outbox_refresh_process(s->outbox, process_id) : 0;
}
