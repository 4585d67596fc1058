/*
 * collector/setup/: what the collector does as root, before drop_privileges
 * (common/privdrop.c), and nothing else. A file here may include only setup/
 * and common/ headers (test/lint/layers.py), and nothing it calls may convert,
 * redact or parse what another process wrote (test/lint/root_window.py walks
 * main's calls up to the drop and counts their lines against a budget).
 *
 *   config.c        the settings file and the options' values (root's own file)
 *   pidscope.c      --scope-pidns: which PID namespace is recorded
 *   probes.c        the BPF programs: which this kernel offers, loading,
 *                   attaching, the snapshot iterator's fd, reading drop
 *                   counters and samples (the last two after the drop)
 *   syscall_table.c syscall number -> class, written into a BPF map at load
 *   rules_open.c    the redaction rules file: opened here, parsed by
 *                   redact/rules_file.c after the drop
 *   sandbox.c       the syscall allow-list entered after the drop
 *
 * May touch: the kernel (bpf(), tracefs), root-owned files (settings, rules,
 * the key via common/ipc_auth.c). Must not touch: /proc of other processes,
 * protobuf, argv.
 */
#ifndef TRACER_COLLECTOR_SETUP_INTERNAL_H
#define TRACER_COLLECTOR_SETUP_INTERNAL_H

#include "collector/setup/config.h"

#endif
