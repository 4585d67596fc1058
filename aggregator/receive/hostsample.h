/*
 * Whole-host samples from /proc (readable by any user, so the unprivileged
 * aggregator takes them, not the collector): CPU use, memory, disk and
 * network throughput over each interval. The basis for idle detection.
 */
#ifndef TRACER_HOSTSAMPLE_H
#define TRACER_HOSTSAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "aggregator/store/store.h"

struct host_counters {
	uint64_t cpu[8]; /* user nice system idle iowait irq softirq steal (ticks) */
	uint64_t disk_read_bytes, disk_write_bytes;
	uint64_t net_rx_bytes, net_tx_bytes;
	uint64_t mono_ns;
	bool valid;
};

struct host_sampler {
	const char *proc_root; /* "/proc", or a test directory */
	const char *sys_block; /* "/sys/block" */
	struct host_counters prev;
};

void host_sampler_init(struct host_sampler *h, const char *proc_root, const char *sys_block);
/* Reads counters; fills out with rates since the previous call. 1 if out was filled. */
int host_sample(struct host_sampler *h, int64_t now_epoch_ns, struct host_sample_row *out);

#endif
