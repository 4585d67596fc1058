/*
 * The shipper's side of the outbox: read batches in order, and after the sink
 * acknowledged one, delete it in the same transaction that records progress.
 * Batches the sink refused for good move to dead_letters.
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
	sqlite3 *db;
	sqlite3_stmt *read, *remove, *state, *dead, *pending;
	char host_id[64]; /* whose records these are */
};

int reader_open(struct outbox_reader *o, const char *db_path, const char *host_id, char *err,
		size_t err_size);
void reader_close(struct outbox_reader *o);
/* The oldest records, at most max_records / max_bytes. 0, or -1 on a database error. */
int reader_next(struct outbox_reader *o, size_t max_records, size_t max_bytes, struct batch *b);
void batch_clear(struct batch *b);
void batch_free(struct batch *b);
/* The sink has it: forget the batch, count it. */
int reader_delivered(struct outbox_reader *o, const struct batch *b, const char *sink,
		     int64_t now_ns);
/* The sink refused it for good: keep it aside with the answer, forget it here. */
int reader_dead_letter(struct outbox_reader *o, const struct batch *b, const char *sink,
		       long status, const char *answer, const char *lines, int64_t now_ns);
/* Health for tracer status (key/value in shipper_state). */
void reader_set_state(struct outbox_reader *o, const char *key, const char *value);
/* Records waiting (with an id up to `upto`, if > 0). */
int64_t reader_pending(struct outbox_reader *o, int64_t upto);
/* The newest record's id (0 if none). */
int64_t reader_last_id(struct outbox_reader *o);

#endif
