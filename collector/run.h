/*
 * What the collector holds from start to exit, and its unprivileged life
 * (run.c): main.c fills it as root, drops privileges, then hands over.
 */
#ifndef TRACER_COLLECTOR_RUN_H
#define TRACER_COLLECTOR_RUN_H

#include <stdbool.h>

#include "collector/convert/energy.h"
#include "collector/send/drain.h"
#include "collector/send/sender.h"
#include "collector/setup/config.h"
#include "collector/setup/probes.h"
#include "collector/setup/rapl.h"
#include "collector/setup/rules_open.h"
#include "common/privdrop.h"

struct collector {
	struct collector_config cfg;
	struct probes probes;
	struct sender sender;
	struct drain drain;
	struct run_as who;
	struct sender_trust trust;
	struct redact_rules_file rules;
	struct rapl rapl; /* RAPL counters opened as root, read after the drop */
	struct energy_reader energy;
	int snapshot_fd; /* the snapshot iterator's, made and read after the drop */
	int lifeline_fd; /* --exit-with-fd */
};

/* SIGTERM and SIGINT stop, SIGHUP rereads the rules, SIGUSR1 flushes; SIGPIPE ignored. */
void collector_signals(void);
/*
 * After the privilege drop: the sender's queue, the ring buffer, the cgroup
 * walk, the allow-list, the rules parsed, the process snapshot. 0 or -1.
 */
int collector_start_unprivileged(struct collector *c);
/* The steady state, until a signal or our starter's death. True if orphaned. */
bool collector_run(struct collector *c);
/* The last frames out, acknowledged within the grace. The exit code. */
int collector_flush_at_exit(struct collector *c, bool orphaned);

#endif
