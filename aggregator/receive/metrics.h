/*
 * The health counters `tracer status` shows, as a Prometheus text-format file
 * for node_exporter's textfile collector: no listening socket, so the
 * unprivileged daemons need no network. Written to PATH.tmp and renamed, so
 * a scrape never reads half a file.
 */
#ifndef TRACER_METRICS_H
#define TRACER_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

/* The exposition text for db (and the shipper's state, if readable) into out. */
int metrics_render(sqlite3 *db, const char *shipper_state, int64_t now_epoch_ns, FILE *out);
/* Renders into path atomically. 0 or -1 (logged once per failure streak by the caller). */
int metrics_write(sqlite3 *db, const char *shipper_state, const char *path, int64_t now_epoch_ns);

#endif
