/*
 * When the database's collectors count as gone, and the SQL that asks whether
 * a run without an end is still watched: shared by the health verdicts
 * (model/health.c), the verbs' own queries and the cost's observed time.
 */
#ifndef TRACER_CLI_LIVENESS_H
#define TRACER_CLI_LIVENESS_H

#include <stdint.h>

/* How long a collector may stay silent before it counts as gone. */
#define HEALTH_STALE_NS (60LL * 1000000000LL)
/* Over the fleet: collector rows ship once a minute, so three missed is silence:
 * the host stopped reporting and its records are missing (tracer --fleet idle). */
#define FLEET_SILENT_NS (180LL * 1000000000LL)
/* The one that applies: FLEET_SILENT_NS when reading the fleet store (fleet.c). */
int64_t liveness_stale_ns(void);
/*
 * A run with no end yet (a row `runs r` in the query), as seen now. Watched: a
 * collector of its host that has not stopped wrote here since the instant in
 * the given parameter (now - HEALTH_STALE_NS), so its end will come. Else its
 * state is unknown: the daemons stopped, or the database came from elsewhere,
 * and "running" would only repeat what the last collector saw.
 */
#define HEALTH_RUN_WATCHED_SQL(since_param)                                                        \
	"EXISTS (SELECT 1 FROM collector_stats c WHERE (r.host_id IS NULL OR c.host_id ="          \
	" r.host_id) AND c.final = 0 AND c.last_seen_ns >= " since_param ")"
/* When a collector of the run's host was last heard from (NULL: never). */
#define HEALTH_RUN_LAST_HEARD_SQL                                                                  \
	"(SELECT max(c.last_seen_ns) FROM collector_stats c WHERE r.host_id IS NULL OR"            \
	" c.host_id = r.host_id)"

#endif
