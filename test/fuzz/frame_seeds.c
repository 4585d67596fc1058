/*
 * Writes valid frames, one file each, into the directories named on the
 * command line: seeds for the frame and ingest fuzzers. Starting from
 * frames the aggregator accepts lets libFuzzer reach the validation and
 * ingest code instead of stopping at protobuf's first byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/frame.h"

static uint8_t stream_id[FRAME_ID_LEN] = {7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static uint8_t boot_id[FRAME_ID_LEN] = {3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3};

static void frame_init(Tracer__Frame *f, uint64_t seq)
{
	tracer__frame__init(f);
	f->version = TRACER__CONSTANTS__FRAME_VERSION;
	f->stream_id.data = stream_id;
	f->stream_id.len = FRAME_ID_LEN;
	f->boot_id.data = boot_id;
	f->boot_id.len = FRAME_ID_LEN;
	f->seq = seq;
	f->host_id = "0123456789abcdef";
	f->hostname = "node1";
	f->realtime_offset_ns = 1700000000000000000;
	f->watermark_ns = 5000;
}

static int write_seed(char **dirs, int n_dirs, const char *name, const Tracer__Frame *f)
{
	uint8_t *buf;
	size_t len;

	if (frame_encode(f, &buf, &len) != 0)
		return -1;
	for (int i = 0; i < n_dirs; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/seed-%s", dirs[i], name);
		FILE *out = fopen(path, "wb");
		if (!out || fwrite(buf, 1, len, out) != len || fclose(out) != 0) {
			perror(path);
			free(buf);
			return -1;
		}
	}
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR...\n", argv[0]);
		return 2;
	}
	char **dirs = argv + 1;
	int n_dirs = argc - 1;

	/* A process's life: fork, exec (a workflow engine's task), files, a sample, exit. */
	Tracer__ForkEvent fork = TRACER__FORK_EVENT__INIT;
	fork.pid = 200;
	fork.start_ns = 5000;
	fork.parent_pid = 100;
	fork.parent_start_ns = 1000;
	fork.comm = "bash";

	Tracer__Counters at_exec = TRACER__COUNTERS__INIT, totals = TRACER__COUNTERS__INIT;
	at_exec.utime_ns = 1000000;
	at_exec.has_utime_ns = 1;
	totals.utime_ns = 90000000;
	totals.has_utime_ns = 1;
	totals.peak_rss_kb = 40960;
	totals.has_peak_rss_kb = 1;
	totals.read_bytes = 1 << 20;
	totals.has_read_bytes = 1;

	char *snake_argv[] = {"bash", "-c", "set -euo pipefail; bwa mem ref.fa r.fq > out.sam"};
	Tracer__ExecEvent exec = TRACER__EXEC_EVENT__INIT;
	exec.pid = 200;
	exec.start_ns = 5000;
	exec.ppid = 100;
	exec.has_ppid = 1;
	exec.exe = "/usr/bin/bash";
	exec.comm = "bash";
	exec.cwd = "/work/3f/0123456789abcdef0123456789abcd";
	exec.argv = snake_argv;
	exec.n_argv = 3;
	exec.cgroup_id = 77;
	exec.has_cgroup_id = 1;
	exec.at_exec = &at_exec;

	Tracer__FileEvent file = TRACER__FILE_EVENT__INIT;
	file.pid = 200;
	file.start_ns = 5000;
	file.path = "ref.fa";
	file.relative = 1;
	file.has_relative = 1;

	uint32_t counts[] = {3}, failed[] = {0}, flags[] = {0};
	Tracer__FileCountsEvent fc = TRACER__FILE_COUNTS_EVENT__INIT;
	fc.pid = 200;
	fc.start_ns = 5000;
	fc.count = counts;
	fc.n_count = 1;
	fc.failed = failed;
	fc.n_failed = 1;
	fc.flags_union = flags;
	fc.n_flags_union = 1;

	Tracer__SampleEvent sample = TRACER__SAMPLE_EVENT__INIT;
	sample.pid = 200;
	sample.start_ns = 5000;
	sample.rss_kb = 20480;
	sample.has_rss_kb = 1;

	Tracer__ExitEvent exit_ev = TRACER__EXIT_EVENT__INIT;
	exit_ev.pid = 200;
	exit_ev.start_ns = 5000;
	exit_ev.wait_status = 1 << 8;
	exit_ev.totals = &totals;

	Tracer__CgroupEvent cg = TRACER__CGROUP_EVENT__INIT;
	cg.id = 77;
	cg.path = "/system.slice/"
		  "docker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope";

	Tracer__OomEvent oom = TRACER__OOM_EVENT__INIT;
	oom.pid = 200;
	oom.start_ns = 5000;
	oom.comm = "bwa";
	oom.anon_rss_kb = 1 << 20;
	oom.has_anon_rss_kb = 1;

	/* Every member of the event's kind union is a pointer to a message struct, and
	 * C11 gives all of those the same representation: one table fills them all. */
	const struct {
		Tracer__Event__KindCase kind;
		void *msg;
	} kinds[] = {
	    {TRACER__EVENT__KIND_CGROUP, &cg},	   {TRACER__EVENT__KIND_FORK, &fork},
	    {TRACER__EVENT__KIND_EXEC, &exec},	   {TRACER__EVENT__KIND_FILE, &file},
	    {TRACER__EVENT__KIND_SAMPLE, &sample}, {TRACER__EVENT__KIND_OOM, &oom},
	    {TRACER__EVENT__KIND_EXIT, &exit_ev},  {TRACER__EVENT__KIND_FILE_COUNTS, &fc},
	};
	Tracer__Event evs[8];
	Tracer__Event *pevs[8];
	for (int i = 0; i < 8; i++) {
		tracer__event__init(&evs[i]);
		evs[i].ts_ns = 6000 + (uint64_t)i;
		evs[i].kind_case = kinds[i].kind;
		evs[i].fork = kinds[i].msg;
		pevs[i] = &evs[i];
	}

	Tracer__ProbeStatus probe = TRACER__PROBE_STATUS__INIT, *probes[] = {&probe};
	probe.name = "process";
	probe.state = "active";
	Tracer__LossCount loss = TRACER__LOSS_COUNT__INIT, *losses[] = {&loss};
	loss.hop = "kernel";
	loss.event_type = "exec";
	loss.count = 2;
	Tracer__CollectorStats stats = TRACER__COLLECTOR_STATS__INIT;
	stats.probes = probes;
	stats.n_probes = 1;
	stats.losses = losses;
	stats.n_losses = 1;

	Tracer__Frame f;
	int rc = 0;
	frame_init(&f, 1);
	f.stats = &stats;
	f.events = pevs;
	f.n_events = 8;
	f.snapshot_done = 1;
	f.has_snapshot_done = 1;
	rc |= write_seed(dirs, n_dirs, "life", &f);

	/* Each kind alone, and an empty frame further on in the stream. */
	const char *names[] = {"cgroup", "fork", "exec", "file", "sample", "oom", "exit", "counts"};
	for (int i = 0; i < 8; i++) {
		frame_init(&f, 1);
		f.events = &pevs[i];
		f.n_events = 1;
		rc |= write_seed(dirs, n_dirs, names[i], &f);
	}
	frame_init(&f, 9);
	f.oldest_seq = 4;
	f.has_oldest_seq = 1;
	rc |= write_seed(dirs, n_dirs, "gap", &f);
	return rc ? 1 : 0;
}
