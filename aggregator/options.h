/*
 * The aggregator's options and its settings file's [scope] section, from one table
 * (aggregator/options.c, common/options.h).
 */
#ifndef TRACER_AGGREGATOR_OPTIONS_H
#define TRACER_AGGREGATOR_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "aggregator/ingest/ingest.h"
#include "common/options.h"

#define AGGREGATOR_MAX_COLLECTOR_USERS 4

struct aggregator_options {
	const char *socket_path;
	const char *db_path;
	const char *user;
	const char *collector_users[AGGREGATOR_MAX_COLLECTOR_USERS];
	unsigned n_collector_users;
	int socket_mode;
	const char *key_file;	    /* the collector key (common/ipc_auth.h) */
	int key_fd;		    /* or from this descriptor (tracer run) */
	unsigned long socket_group; /* kept beside --user's groups (tracer run), or 0 */
	int ready_fd;
	int lifeline_fd; /* --exit-with-fd */
	enum ingest_scope scope;
	char scope_cgroup[256]; /* [scope] cgroup of --config, then --scope-cgroup; "": all */
	unsigned host_sample_ms;
	unsigned commit_ms;
	const char *tools_allow, *tools_deny;
	struct insight_config signals;
	unsigned outbox_mib;	 /* 0: no shipping */
	const char *outbox_when; /* queue only while this file (the shipper's config) exists */
	unsigned retain_days, retain_mib, retain_check_s; /* 0: no limit */
	const char *metrics_file;
	const char *shipper_state;
	/* `tracer run`'s own aggregator: the one launcher whose run it records. */
	bool has_launcher;
	uint32_t launcher_pid;
	uint64_t launcher_start_boot_ns;
};

extern const struct opt_program aggregator_program;

#endif
