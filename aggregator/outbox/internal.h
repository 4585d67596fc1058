/*
 * What the files of outbox/ share, and nothing outside outbox/ may use:
 *   outbox.c  finished records: queueing, the sample hold, the size limit
 *   live.c    what runs now (live copies) and what the aggregator takes back
 *             (tombstones): docs/shipping.md, "Live rows and tombstones"
 *   requeue.c rows rewritten after they were queued (a dissolved step's);
 *             outbox.c queues a new record where none is left to rewrite
 *   sql.c     what both build on: a row as JSON, the shipper's progress
 */
#ifndef TRACER_OUTBOX_INTERNAL_H
#define TRACER_OUTBOX_INTERNAL_H

#include <stdint.h>

#include "aggregator/outbox/outbox.h"

/* sql.c: SQL for one table's row as a JSON object of every column (malloc'd). */
char *outbox_row_json(sqlite3 *db, const char *table);
/* sql.c: a number from the shipper's state ('delivered_through', 'attempt_through'),
 * -1 when there is none (no shipper ran yet). */
int64_t outbox_shipper_mark(struct outbox *o, const char *key);

/* live.c: its statements and temporary tables, at open; freed at close. */
int outbox_live_open(struct outbox *o);
void outbox_live_close(struct outbox *o);
/* requeue.c: the same, for its statements. */
int outbox_requeue_open(struct outbox *o);
void outbox_requeue_close(struct outbox *o);
/* requeue.c: rewrite the process's record still queued after `after` as its row
 * is now: 1 if one was, 0 if none is queued (the caller queues a new one), -1. */
int outbox_rewrite_process(struct outbox *o, int64_t process_id, int64_t after);

#endif
