/* Default locations, shared so every program agrees on them. */
#ifndef TRACER_PATHS_H
#define TRACER_PATHS_H

#define TRACER_DEFAULT_SOCKET "/run/tracer/collector.sock"
#define TRACER_DEFAULT_DB "/var/lib/tracer/tracer.db"
#define TRACER_DEFAULT_SHIPPER_STATE "/var/lib/tracer-shipper/state.db"
/* The packaged shipper runs, and the packaged aggregator queues for it, only while
 * this exists (the unit's ConditionPathExists= and --outbox-when). */
#define TRACER_DEFAULT_SHIPPER_CONFIG "/etc/tracer/shipper.conf"
#define TRACER_COLLECTOR_USER "tracer-collector"
#define TRACER_AGGREGATOR_USER "tracer-aggregator"
#define TRACER_GROUP "tracer"
/* The collector key (common/ipc_auth.h): made by the first daemon that starts as root. */
#define TRACER_DEFAULT_KEY "/etc/tracer/collector.key"

/* "ipc:///path" for nng, from a plain socket path. */
int socket_url(const char *path, char *url, unsigned size);

#endif
