/* Whether tracer is healthy, from what tracer status reads (docs/operations.md). */
#ifndef TRACER_CLI_HEALTH_H
#define TRACER_CLI_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "cli/db/liveness.h"

/* A sink failing with records waiting longer than this is a problem. */
#define HEALTH_SINK_FAILING_S 60.0
/* Records waiting this long with a shipper set up: it is not shipping. */
#define HEALTH_SHIP_STALLED_S 600.0
/* Less free space than this where the database lives: it is about to stop. */
#define HEALTH_MIN_FREE_BYTES (64LL << 20)

struct health_input {
	const json_t *streams;	  /* collector_stats rows, newest first */
	const json_t *losses;	  /* event_loss sums */
	const json_t *agg;	  /* the aggregator's newest stats row, or NULL */
	const json_t *shipping;	  /* the outbox and the shipper's state, or NULL */
	const char *db_check;	  /* PRAGMA quick_check's first answer ("ok"), or NULL */
	int64_t db_free_bytes;	  /* free on the database's filesystem; -1 unknown */
	const char *db_read_only; /* why the aggregator cannot write it, or NULL */
	int64_t now_epoch_ns;
};

/*
 * The first reason tracer is not healthy, as a phrase (in buf when it needs
 * numbers); NULL when healthy. Not healthy: anything lost (loss rows, kernel
 * or collector drops or sequence gaps in any stream, events the aggregator
 * had no memory for); the newest collector missing a probe or silent for
 * HEALTH_STALE_NS unless it ended; the database damaged or its filesystem
 * nearly full; the sink failing; records not shipped; records dropped or set
 * aside by the shipper.
 */
const char *health_problem(const struct health_input *in, char *buf, size_t size);

/* Whether a collector that has not stopped wrote db within HEALTH_STALE_NS:
 * 1 yes, 0 no, -1 unknown (not a readable tracer database). */
int health_collector_writing(sqlite3 *db);

struct run_liveness {
	bool watched;
	int64_t last_heard_ns; /* 0: no collector of its host ever wrote here */
};

/* Adds to a run object (a `runs` row) not ended: `watched`, `last_heard_ns`
 * and `so_far_ns` (docs/export.md); unchanged if they cannot be read. */
void health_add_liveness(sqlite3 *db, json_t *run);

/* How long a run or step with no end has lasted as far as anyone can tell:
 * until now while watched, else until its host's collector was last heard
 * from (0 if that was before it started). */
int64_t health_so_far_ns(const struct run_liveness *l, int64_t start_ns, int64_t now_epoch_ns);

#endif
