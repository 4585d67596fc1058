/*
 * collector/send/: events out of the kernel and into frames to the
 * aggregator, unprivileged. May include every collector layer but main.
 *
 *   drain.c   the ring (or perf) buffer read into batches of events, flushed
 *             as frames with the collector's statistics; perf buffers are
 *             opened as root (drain_init, callbacks that only copy), the ring
 *             buffer after the drop (drain_start)
 *   sender.c  the frame queue, the nng connection, proving the key, checking
 *             who listens, acknowledgements and what was lost
 *   handover.c the stream handed to the next collector of a pin set
 *             (--keep-pinned): what the dead one held, counted lost
 *
 * May touch: the BPF buffers' fds, the aggregator's socket. Must not touch:
 * files (the allow-list has no open).
 */
#ifndef TRACER_COLLECTOR_SEND_INTERNAL_H
#define TRACER_COLLECTOR_SEND_INTERNAL_H

#include "collector/send/drain.h"
#include "collector/send/sender.h"

#endif
