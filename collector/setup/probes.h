/*
 * Loading and attaching the BPF programs. Probes come in groups (process,
 * scheduler, syscalls, ...); each group is active, missing (this kernel
 * lacks its hooks, or its programs do not load here) or disabled
 * (configuration). Only the process group is required. Every hook has a
 * tp_btf flavour; the process hooks also have a classic tracepoint flavour.
 */
#ifndef TRACER_PROBES_H
#define TRACER_PROBES_H

#include <stdbool.h>
#include <stdint.h>

#include <bpf/libbpf.h>

#include "bpf/events.h"
#include "collector/setup/config.h"

enum probe_state { PROBE_ACTIVE, PROBE_MISSING, PROBE_DISABLED };

struct probe_status {
	enum probe_state state;
	char detail[160];
};

#define PROBES_MAX_LINKS 48

#define MAX_GROUP_PROGS 10

struct group_progs {
	struct bpf_program *progs[MAX_GROUP_PROGS];
	unsigned n;
};

struct probes {
	struct tracer_bpf *skel;
	bool using_tp_btf;
	/* The bpf_rdonly_cast kfunc (6.2+): exec_btf and the repeat-open cache need it. */
	bool rdonly_cast;
	bool exec_btf; /* else exec uses exec_tp */
	bool using_perfbuf;
	bool prepare_exec;
	bool net_via_syscalls;
	bool tcp_by_consumption; /* TCP bytes read counted where reads consume them */
	bool force_net_syscalls;
	unsigned ring_mb;
	struct probe_status status[PROBE_GROUPS];
	struct bpf_link *links[PROBES_MAX_LINKS];
	struct bpf_program *link_progs[PROBES_MAX_LINKS];
	unsigned n_links;
	struct bpf_link *iter_link;
	uint64_t samples_taken;
	bool snapshot_iter;		/* snapshot.bpf.c loaded (sleepable iterators, 5.18+) */
	struct bpf_link *snapshot_link; /* until the snapshot is read */
	int snapshot_errno;		/* why it did not attach */
	bool pinning;			/* --keep-pinned, and bpffs there (setup/pins.c) */
	bool reusing;	   /* the pin set of a collector before us: not attached again */
	unsigned pin_inst; /* pin_dir's length up to the socket's hash */
	char pin_dir[64];  /* PIN_ROOT/<the socket's hash>-<the object's and settings'> */
	uint64_t attached_ns;
	struct group_progs attached[PROBE_GROUPS];
	/* what probes_attach attached, by group */ /* boot clock once every program was
						       attached */
};

const char *probe_state_name(enum probe_state s);

/* Loads the programs (not yet attached). 0, or -1 with the reason logged. */
int probes_start(struct probes *p, const struct collector_config *cfg);
/* Attaches them: open the buffers first, or early events have nowhere to go. */
int probes_attach(struct probes *p);
/* After the drop: each group's status detail (its hooks) and the log lines saying them. */
void probes_describe(struct probes *p);
/*
 * The snapshot of the processes already running (bpf/snapshot.bpf.c): its
 * iterator attached as root, after probes_attach; after the privilege drop
 * (as the samples' iterator) open gives its fd, read by convert/snapshot.c,
 * or -1 (logged) where the kernel has no sleepable task iterators: no process
 * is then known from before.
 */
void probes_snapshot_attach(struct probes *p);
int probes_snapshot_open(struct probes *p);
/* Once the snapshot is read: its link goes. */
void probes_snapshot_close(struct probes *p);
int probes_ringbuf_fd(const struct probes *p);
int probes_perfbuf_fd(const struct probes *p);
/* Reads the drop counters into out[TRACER_DROP_SLOTS], by event type, and the
 * network waits not attributed into net_wait[TRACER_NETW_STATS]. */
int probes_read_drops(const struct probes *p, uint64_t *out, uint64_t *net_wait);
/* With a pin set, the stream's handover in its .bss (bpf/events.h); else NULL. */
struct tracer_handover *probes_handover(const struct probes *p);
/*
 * Runs the sampling iterator once; calls sink per process record.
 * Returns records read, or -1.
 */
int probes_sample(struct probes *p, int (*sink)(void *ctx, const struct tracer_sample *s),
		  void *ctx);
void probes_stop(struct probes *p);
/* setup/pins.c. bpffs there (mounted if need be), p->pin_dir the socket's; false: not
 * pinning (logged). Then removes the socket's sets but keep (a set's path, or NULL). */
bool pins_ready(struct probes *p, const char *socket_path);
int pins_remove(const struct probes *p, const char *keep, const char *why); /* 0, or 1 */

#endif
