/*
 * A collector's stream, handed over through a pinned .bss (--keep-pinned):
 * what it read from the ring and had not settled (acknowledged, or counted
 * lost), and the frames it had sent. The next collector of the pin set
 * resumes the stream; the aggregator's first answer says the last frame it
 * committed, and what the dead collector held beyond it is counted lost, by
 * type, with the collector hop's other losses. Nothing here runs as root.
 */
#include "collector/send/internal.h"

#include <string.h>

#include "common/log.h"

void handover_begin(struct sender *s, struct tracer_handover *h, bool reusing)
{
	s->handover = h;
	if (!h)
		return;
	if (reusing && h->next_seq > 0) {
		s->prev = *h;
		s->resume_pending = true;
		memcpy(s->stream_id, h->stream_id, sizeof(s->stream_id));
		s->next_seq = h->next_seq;
		for (int t = 0; t < TRACER_EV_COUNT; t++) {
			s->queue_drops_by_type[t] = h->lost[t];
			s->queue_drops += h->lost[t];
		}
		log_info("resuming the stream of the collector before us at frame %llu",
			 (unsigned long long)h->next_seq);
	} else {
		memset(h, 0, sizeof(*h));
		memcpy(h->stream_id, s->stream_id, sizeof(h->stream_id));
		h->next_seq = s->next_seq;
	}
	memset(h->held, 0, sizeof(h->held));
	memset(h->sent, 0, sizeof(h->sent));
}

void handover_read(struct sender *s, int type)
{
	if (s->handover)
		s->handover->held[type]++;
}

void handover_sent(struct sender *s, uint64_t seq, const uint32_t *types)
{
	if (!s->handover)
		return;
	s->handover->sent[seq % TRACER_HANDOVER_FRAMES].seq = seq;
	memcpy(s->handover->sent[seq % TRACER_HANDOVER_FRAMES].types, types,
	       sizeof(s->handover->sent[0].types));
}

void handover_settle(struct sender *s, uint64_t seq, const uint32_t *types)
{
	struct tracer_handover *h = s->handover;

	if (!h)
		return;
	for (int t = 0; t < TRACER_EV_COUNT; t++) {
		h->held[t] -= h->held[t] < types[t] ? h->held[t] : types[t];
		h->lost[t] = s->queue_drops_by_type[t];
	}
	if (h->sent[seq % TRACER_HANDOVER_FRAMES].seq == seq)
		h->sent[seq % TRACER_HANDOVER_FRAMES].seq = 0;
	h->next_seq = s->next_seq;
}

/* Until the aggregator answers, frames claim no gap: it then asks for the first again. */
uint64_t handover_oldest(const struct sender *s, uint64_t head_seq)
{
	return s->resume_pending ? 1 : head_seq;
}

void handover_acked(struct sender *s, uint64_t committed)
{
	uint64_t total = 0;

	if (!s->resume_pending)
		return;
	s->resume_pending = false;
	for (int t = 0; t < TRACER_EV_COUNT; t++) {
		uint64_t delivered = 0;
		for (int i = 0; i < TRACER_HANDOVER_FRAMES; i++)
			if (s->prev.sent[i].seq && s->prev.sent[i].seq <= committed)
				delivered += s->prev.sent[i].types[t];
		uint64_t lost = s->prev.held[t] > delivered ? s->prev.held[t] - delivered : 0;
		s->queue_drops_by_type[t] += lost;
		s->queue_drops += lost;
		total += lost;
		if (s->handover)
			s->handover->lost[t] = s->queue_drops_by_type[t];
	}
	log_info("the aggregator has the stream up to frame %llu: %llu events the collector "
		 "before us held beyond it are counted lost",
		 (unsigned long long)committed, (unsigned long long)total);
}
