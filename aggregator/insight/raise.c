#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/insight/raise.h"
#include "aggregator/outbox/outbox.h"
#include "common/log.h"
#include "common/vec.h"

static bool push(struct signal_row **v, size_t *n, size_t *cap, const struct signal_row *s)
{
	if (!vec_grow(*v, *cap, *n + 1))
		return false;
	(*v)[(*n)++] = *s;
	return true;
}

void insight_row_begin(struct signal_row *s, const char *kind, const char *severity, int64_t run_id,
		       int64_t now_ns, int64_t at_ns)
{
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->severity = severity;
	s->detected_epoch_ns = now_ns;
	s->at_epoch_ns = at_ns;
	s->run_id = run_id;
}

int64_t insight_raise(struct insight *in, struct signal_row *s)
{
	s->id = in->next_id++;
	if (!push(&in->pending, &in->n_pending, &in->cap_pending, s)) {
		log_error("out of memory: signal '%s' lost", s->message);
		return 0;
	}
	if (s->active && !push(&in->active, &in->n_active, &in->cap_active, s))
		log_error("out of memory: signal %lld will not be updated", (long long)s->id);
	in->raised++;
	log_info("signal %s: %s", s->kind, s->message);
	return s->id;
}

void insight_settle_after_run(struct signal_row *s, const struct run *r)
{
	size_t n = strlen(s->message);

	if (!r || r->status == GROUP_RUNNING || !s->active)
		return;
	s->severity = "info";
	snprintf(s->message + n, sizeof(s->message) - n,
		 "; after its run had ended (%s), so not what decided it",
		 group_status_name(r->status));
	s->active = false;
}

struct signal_row *insight_active(struct insight *in, int64_t id)
{
	for (size_t i = 0; id && i < in->n_active; i++)
		if (in->active[i].id == id)
			return &in->active[i];
	return NULL;
}

void insight_update(struct insight *in, struct signal_row *s)
{
	if (!push(&in->pending, &in->n_pending, &in->cap_pending, s))
		log_error("out of memory: update of signal %lld lost", (long long)s->id);
	if (!s->active) {
		size_t i = (size_t)(s - in->active);
		if (i < in->n_active)
			in->active[i] = in->active[--in->n_active];
	}
}

int insight_write(struct insight *in)
{
	for (size_t i = 0; i < in->n_pending; i++) {
		const struct signal_row *s = &in->pending[i];
		if (store_put_signal(in->store, s) != 0 ||
		    (!s->active && store_ship_signal(in->store, s->id) != 0))
			return -1;
	}
	return 0;
}

bool insight_has_pending(const struct insight *in)
{
	return in->n_pending > 0;
}

void insight_committed(struct insight *in)
{
	in->n_pending = 0;
}
