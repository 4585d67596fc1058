/*
 * The shipper's side of the outbox. It only reads the aggregator's database;
 * its progress (the last outbox id the sink acknowledged), dead letters and
 * health live in its own state database, which the aggregator reads to forget
 * delivered records. So the shipper needs no write access to the data.
 */
#ifndef TRACER_OUTBOX_READER_H
#define TRACER_OUTBOX_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

struct record {
	int64_t id; /* outbox id: the version at the sink */
	char kind[24];
	char *key;
	char *payload; /* JSON object text */
	size_t payload_len;
	int64_t created_ns;
};

struct batch {
	struct record *r;
	size_t n, cap;
	size_t bytes;
	int64_t first_id, last_id;
};

struct outbox_reader {
	sqlite3 *db;	/* the aggregator's, read-only */
	sqlite3 *state; /* ours */
	sqlite3_stmt *read, *set_state, *dead;
	int64_t delivered_through; /* every outbox id up to this one is done */
	int64_t attempt_through;   /* last id of the batch sent and not yet done, else 0 */
	char host_id[64];	   /* whose records these are */
};

int reader_open(struct outbox_reader *o, const char *db_path, const char *state_path,
		const char *host_id, char *err, size_t err_size);
void reader_close(struct outbox_reader *o);
/*
 * The oldest records not yet done, at most max_records / max_bytes; while a
 * sent batch is not done, that same batch again, whatever came since (so its
 * retries carry the same idempotency key). 0, or -1.
 */
int reader_next(struct outbox_reader *o, size_t max_records, size_t max_bytes, struct batch *b);
/* Before a batch's first send: remember its end across retries and restarts. 0, or -1. */
int reader_attempt(struct outbox_reader *o, const struct batch *b);
void batch_clear(struct batch *b);
void batch_free(struct batch *b);
/* The sink has it: move the watermark past it, count it. */
int reader_delivered(struct outbox_reader *o, const struct batch *b, const char *sink,
		     int64_t now_ns);
/* The sink refused it for good: keep it in dead_letters with the answer, move on. */
int reader_dead_letter(struct outbox_reader *o, const struct batch *b, const char *sink,
		       long status, const char *answer, const char *lines, int64_t now_ns);
/* Health for tracer status (key/value in shipper_state). */
void reader_set_state(struct outbox_reader *o, const char *key, const char *value);
/* Records not yet done (with an id up to `upto`, if > 0). */
int64_t reader_pending(struct outbox_reader *o, int64_t upto);
/* The newest record's id (0 if none). */
int64_t reader_last_id(struct outbox_reader *o);

#endif
