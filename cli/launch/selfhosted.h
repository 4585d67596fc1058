/*
 * tracer run's own collector and aggregator, when no daemons listen: started
 * for the length of the run, on a private socket unless one was given, and
 * stopped at its end (docs/security.md, "Who may talk to whom").
 */
#ifndef TRACER_CLI_SELFHOSTED_H
#define TRACER_CLI_SELFHOSTED_H

#include <stdint.h>

#include "cli/launch/launch.h"
#include "common/ipc_auth.h"

struct self_hosted_options {
	const char *db_path;
	const char *aggregator_user; /* --aggregator-user, or NULL: chosen (runuser.h) */
	const char *socket_path;     /* --socket, or NULL: a private directory */
	const char *log_level;
};

struct self_hosted {
	struct daemon_proc collector, aggregator;
	uint8_t key[IPC_KEY_LEN];
	unsigned own_id; /* the collector's uid and gid, the aggregator's extra group */
	char socket_dir[256];
	char socket_path[300];
};

/* Our start, CLOCK_BOOTTIME ns at clock-tick resolution, as the collector's /proc
 * snapshot sees it: with our pid, the identity our aggregator accepts (and finds our run by). */
uint64_t own_start_boot_ns(void);
/* Both daemons started and ready: 0, or -1 said why on stderr (nothing left running). */
int self_hosted_start(const struct self_hosted_options *o, struct self_hosted *h);
/* Stops both (collector first: its last events reach the aggregator) and removes the socket. */
void self_hosted_stop(struct self_hosted *h);

#endif
