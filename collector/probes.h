/*
 * Loading and attaching the BPF programs. Every hook has a tp_btf flavour and
 * a classic tracepoint flavour; we try tp_btf first and fall back, and record
 * which hooks are live so the user can see it.
 */
#ifndef TRACER_PROBES_H
#define TRACER_PROBES_H

#include <stdbool.h>
#include <stdint.h>

#include <bpf/libbpf.h>

struct probe_options {
	unsigned ring_mb;
	bool force_tracepoints; /* skip tp_btf: exercises the fallback path */
	bool force_perfbuf;	/* perf buffers even where ring buffers exist */
	bool no_prepare_exec;
};

struct probes {
	struct process_bpf *skel;
	bool using_tp_btf;
	bool using_perfbuf;
	unsigned ring_mb;
	bool prepare_exec;
	char active[256]; /* human readable: which hooks are attached */
};

/* Loads the programs (not yet attached). 0, or -1 with the reason logged. */
int probes_start(struct probes *p, const struct probe_options *opt);
/* Attaches them: open the buffers first, or early events have nowhere to go. */
int probes_attach(struct probes *p);
int probes_ringbuf_fd(const struct probes *p);
int probes_perfbuf_fd(const struct probes *p);
/* Sums the per-CPU drop counters into out[TRACER_DROP_MAX]. */
int probes_read_drops(const struct probes *p, uint64_t *out);
void probes_stop(struct probes *p);

#endif
