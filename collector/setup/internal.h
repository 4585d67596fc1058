/*
 * collector/setup/: what the collector does as root, before drop_privileges
 * (common/privdrop.c), and nothing else. A file here may include only setup/
 * and common/ headers (test/lint/layers.py), and nothing it calls may convert,
 * redact or parse what another process wrote (test/lint/root_window.py walks
 * main's calls up to the drop and counts their lines against a budget).
 *
 *   config.c        the settings file and the options' values (root's own file)
 *   pidscope.c      --scope-pidns: which PID namespace is recorded
 *   probe_groups.c  the programs of each probe group, and whether this
 *                   kernel has their hooks
 *   probes.c        the BPF programs: loading, attaching, the snapshot
 *                   iterator's fd, reading drop counters and samples (the
 *                   last two after the drop)
 *   pins.c          --keep-pinned: the maps and links pinned in bpffs, and
 *                   reused by the next collector of the same socket
 *   syscall_table.c syscall number -> class, written into a BPF map at load
 *   rules_open.c    the redaction rules file: opened here, parsed by
 *                   redact/rules_file.c after the drop
 *   sandbox.c       the syscall allow-list entered after the drop
 *   rapl.c          the RAPL powercap counters: opened here, read by
 *                   convert/energy.c after the drop
 *
 * May touch: the kernel (bpf(), tracefs), root-owned files (settings, rules,
 * the key via common/ipc_auth.c). Must not touch: /proc of other processes,
 * protobuf, argv.
 */
#ifndef TRACER_COLLECTOR_SETUP_INTERNAL_H
#define TRACER_COLLECTOR_SETUP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "collector/setup/config.h"
#include "collector/setup/probes.h"

struct tracer_bpf;
struct bpf_program;

/* probe_groups.c: the programs that make a probe group on this kernel. */
/* The programs of a group this kernel can run; none (why says why): the group is missing. */
void group_programs(struct probes *p, struct tracer_bpf *s, enum probe_group grp,
		    struct group_progs *g, char *why, size_t why_size);
bool has_btf_tracepoint(const char *name);
bool has_kernel_function(const char *name);
/* Classic tracepoints need tracefs: mounted at its usual place if missing. */
void ensure_tracefs(void);

/* pins.c: the pin set. Before a load: the set's name from the object and settings,
 * each map's pin path, p->reusing; any other set of the socket removed. */
void pins_name_maps(struct probes *p, struct tracer_bpf *skel);
/* A link pinned in the set as link<i>, or (i < 0) as "whole", the mark of a set whose
 * every link is pinned; false (logged) if it cannot be. */
bool pins_link(struct probes *p, struct bpf_link *link, int i);

#endif
