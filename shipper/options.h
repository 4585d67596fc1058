/*
 * The shipper's options and its settings file's [shipper] section, from one table
 * (shipper/options.c, common/options.h).
 */
#ifndef TRACER_SHIPPER_OPTIONS_H
#define TRACER_SHIPPER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/options.h"

/* How often an idle shipper looks for new records. */
#define SHIPPER_POLL_MS 500L

struct shipper_options {
	const char *db_path, *state_path, *sink_url, *credentials_path, *ca_file, *user, *host_id;
	bool once;
	size_t batch_records, batch_bytes;
	long batch_age_ms, timeout_ms, once_timeout_ms, retry_max_ms;
};

extern const struct opt_program shipper_program;

#endif
