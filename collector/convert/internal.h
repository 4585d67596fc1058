/*
 * collector/convert/: kernel records into protobuf events, unprivileged
 * (after drop_privileges; test/lint/root_window.py fails if anything here is
 * reachable before it). May include convert/, redact/, setup/ (for the probe
 * groups' state) and common/ headers, never send/ or main.
 *
 *   convert.c   one ring-buffer or iterator record -> a packed Event: a table
 *               of (least size, converter) per record type; argv redacted by
 *               redact/ on the way
 *   snapshot.c  what exists at start-up: the snapshot iterator's exec records
 *               (bpf/snapshot.bpf.c, read from the fd setup/ created as root),
 *               and the cgroups, walked in the cgroup file systems
 *   energy.c    the RAPL counters (descriptors setup/rapl.c opened as root) as
 *               EnergyEvents, every sample period
 *
 * May touch: the records given, the RAPL descriptors, the cgroup file systems (snapshot.c, before
 * the allow-list). Must not touch: the network, other processes' /proc.
 */
#ifndef TRACER_COLLECTOR_CONVERT_INTERNAL_H
#define TRACER_COLLECTOR_CONVERT_INTERNAL_H

#include "collector/convert/convert.h"

#endif
