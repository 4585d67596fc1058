/*
 * What the files of receive/ share, and nothing outside receive/ may use:
 *   receiver.c   frames in: validate, dedupe, apply, commit, ack; the loop and its
 *                timers (retention, metrics, the outbox gate)
 *   streams.c    what a stream's frames say about its collector: counts, losses,
 *                probes, the blind window since the previous collector of the boot
 *   hostsample.c the host's own CPU, memory, disk and network each second
 *   metrics.c    the status counters as a Prometheus textfile (--metrics-file)
 *   peers.c peerconf.c  who may connect, the collector key
 */
#ifndef TRACER_RECEIVE_INTERNAL_H
#define TRACER_RECEIVE_INTERNAL_H

#include "aggregator/receive/receiver.h"

/* streams.c */
/* A frame of the stream came: its header and the collector's cumulative stats. */
void stream_update_stats(struct stream_state *s, const Tracer__Frame *f);
/*
 * A new stream on a boot another collector watched before: from that one's last
 * watermark to this one's first, nobody watched (ingest_begin_blind_window).
 */
void stream_begin_blind_window(struct receiver *r, struct stream_state *s, const Tracer__Frame *f);

#endif
