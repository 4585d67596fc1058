/*
 * Frames through the whole aggregator: decode, correlation, insight and the
 * SQLite writes, into a fresh database per input (so a crash reproduces from
 * its input alone). Any bytes must be applied or rejected, never crash, leak
 * or corrupt memory. Migrating a new schema costs ~70 ms under ASan, so each
 * input starts from a copy of a database migrated once.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggregator/ingest/ingest.h"
#include "aggregator/receive/receiver.h"
#include "aggregator/store/store.h"
#include "common/log.h"

static char template_path[128], db_path[128];

static void remove_db(const char *path)
{
	char side[160];

	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
}

static void cleanup(void)
{
	remove_db(template_path);
	remove_db(db_path);
}

static void copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	char buf[65536];
	size_t n;

	if (!in || !out)
		__builtin_trap();
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			__builtin_trap();
	fclose(in);
	if (fclose(out) != 0)
		__builtin_trap();
}

static void make_template(void)
{
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	struct store st;

	log_set_level(LOG_LVL_ERROR);
	snprintf(template_path, sizeof(template_path), "%s/fuzz-ingest-%d-template.db", dir,
		 (int)getpid());
	snprintf(db_path, sizeof(db_path), "%s/fuzz-ingest-%d.db", dir, (int)getpid());
	remove_db(template_path);
	if (store_open(&st, template_path) != 0)
		__builtin_trap();
	store_close(&st); /* checkpoints the WAL into the file */
	atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct store st;
	struct ingest g;
	struct receiver r;

	if (!template_path[0])
		make_template();
	remove_db(db_path);
	copy_file(template_path, db_path);
	if (store_open(&st, db_path) != 0)
		__builtin_trap();
	if (ingest_init(&g, &st, SCOPE_ALL, NULL, NULL, NULL) != 0)
		__builtin_trap();
	receiver_init(&r, &g, &st);
	r.host_every_ns = 0;
	/* The same bytes twice: the second is a duplicate (or refused again). */
	receiver_handle(&r, data, size);
	receiver_commit(&r);
	receiver_handle(&r, data, size);
	receiver_commit(&r);
	receiver_free(&r);
	ingest_free(&g);
	store_close(&st);
	return 0;
}
