/*
 * Retention: keeps the database within an age and a size (docs/operations.md).
 * Whole finished runs go (with their steps, processes, files, samples and
 * signals), then processes outside any run, then old samples; never anything
 * still running, anything that ended within the last RETENTION_GRACE_NS (the
 * aggregator may still amend it), or a process whose samples the outbox still
 * holds. The outbox is never touched: undelivered records stay queued.
 */
#ifndef TRACER_RETENTION_H
#define TRACER_RETENTION_H

#include <stdint.h>

#include "aggregator/store/store.h"

#define RETENTION_GRACE_NS (600LL * 1000000000LL)

struct retention {
	int64_t max_age_ns; /* 0: no age limit */
	int64_t max_bytes;  /* 0: no size limit (pages in use, not the file's size) */
};

struct prune_result {
	int64_t runs, processes, samples, host_samples;
	int64_t bytes_before, bytes_after; /* pages in use x page size */
};

/* Bytes of the database's pages in use (the file keeps freed pages for reuse). */
int64_t store_used_bytes(struct store *s);
/* Applies r at now_epoch_ns in one transaction (none may be open). 0 or -1 (logged). */
int store_prune(struct store *s, const struct retention *r, int64_t now_epoch_ns,
		struct prune_result *out);

#endif
