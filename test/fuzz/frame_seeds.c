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

/* A process's life: fork, exec (a workflow engine's task), files, a sample, exit; its
 * cgroup and an OOM kill. */
struct life {
	Tracer__ForkEvent fork;
	Tracer__Counters at_exec, totals;
	Tracer__ExecEvent exec;
	Tracer__FileEvent file;
	uint32_t counts[1], failed[1], flags[1];
	Tracer__FileCountsEvent fc;
	Tracer__SampleEvent sample;
	Tracer__ExitEvent exit_ev;
	Tracer__CgroupEvent cg;
	Tracer__OomEvent oom;
};

static char *snake_argv[] = {"bash", "-c", "set -euo pipefail; bwa mem ref.fa r.fq > out.sam"};

static void life_fill(struct life *l)
{
	l->counts[0] = 3;
	l->failed[0] = l->flags[0] = 0;
	l->fork = (Tracer__ForkEvent)TRACER__FORK_EVENT__INIT;
	l->fork.pid = 200;
	l->fork.start_ns = 5000;
	l->fork.parent_pid = 100;
	l->fork.parent_start_ns = 1000;
	l->fork.comm = "bash";

	l->at_exec = (Tracer__Counters)TRACER__COUNTERS__INIT;
	l->totals = (Tracer__Counters)TRACER__COUNTERS__INIT;
	l->at_exec.utime_ns = 1000000;
	l->at_exec.has_utime_ns = 1;
	l->totals.utime_ns = 90000000;
	l->totals.has_utime_ns = 1;
	l->totals.peak_rss_kb = 40960;
	l->totals.has_peak_rss_kb = 1;
	l->totals.read_bytes = 1 << 20;
	l->totals.has_read_bytes = 1;

	l->exec = (Tracer__ExecEvent)TRACER__EXEC_EVENT__INIT;
	l->exec.pid = 200;
	l->exec.start_ns = 5000;
	l->exec.ppid = 100;
	l->exec.has_ppid = 1;
	l->exec.exe = "/usr/bin/bash";
	l->exec.comm = "bash";
	l->exec.cwd = "/work/3f/0123456789abcdef0123456789abcd";
	l->exec.argv = snake_argv;
	l->exec.n_argv = 3;
	l->exec.cgroup_id = 77;
	l->exec.has_cgroup_id = 1;
	l->exec.at_exec = &l->at_exec;

	l->file = (Tracer__FileEvent)TRACER__FILE_EVENT__INIT;
	l->file.pid = 200;
	l->file.start_ns = 5000;
	l->file.path = "ref.fa";
	l->file.relative = 1;
	l->file.has_relative = 1;

	l->fc = (Tracer__FileCountsEvent)TRACER__FILE_COUNTS_EVENT__INIT;
	l->fc.pid = 200;
	l->fc.start_ns = 5000;
	l->fc.count = l->counts;
	l->fc.n_count = 1;
	l->fc.failed = l->failed;
	l->fc.n_failed = 1;
	l->fc.flags_union = l->flags;
	l->fc.n_flags_union = 1;

	l->sample = (Tracer__SampleEvent)TRACER__SAMPLE_EVENT__INIT;
	l->sample.pid = 200;
	l->sample.start_ns = 5000;
	l->sample.rss_kb = 20480;
	l->sample.has_rss_kb = 1;

	l->exit_ev = (Tracer__ExitEvent)TRACER__EXIT_EVENT__INIT;
	l->exit_ev.pid = 200;
	l->exit_ev.start_ns = 5000;
	l->exit_ev.wait_status = 1 << 8;
	l->exit_ev.totals = &l->totals;

	l->cg = (Tracer__CgroupEvent)TRACER__CGROUP_EVENT__INIT;
	l->cg.id = 77;
	l->cg.path =
	    "/system.slice/"
	    "docker-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.scope";

	l->oom = (Tracer__OomEvent)TRACER__OOM_EVENT__INIT;
	l->oom.pid = 200;
	l->oom.start_ns = 5000;
	l->oom.comm = "bwa";
	l->oom.anon_rss_kb = 1 << 20;
	l->oom.has_anon_rss_kb = 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR...\n", argv[0]);
		return 2;
	}
	char **dirs = argv + 1;
	int n_dirs = argc - 1;

	static struct life l;

	life_fill(&l);
	/* Every member of the event's kind union is a pointer to a message struct, and
	 * C11 gives all of those the same representation: one table fills them all. */
	const struct {
		Tracer__Event__KindCase kind;
		void *msg;
	} kinds[] = {
	    {TRACER__EVENT__KIND_CGROUP, &l.cg},     {TRACER__EVENT__KIND_FORK, &l.fork},
	    {TRACER__EVENT__KIND_EXEC, &l.exec},     {TRACER__EVENT__KIND_FILE, &l.file},
	    {TRACER__EVENT__KIND_SAMPLE, &l.sample}, {TRACER__EVENT__KIND_OOM, &l.oom},
	    {TRACER__EVENT__KIND_EXIT, &l.exit_ev},  {TRACER__EVENT__KIND_FILE_COUNTS, &l.fc},
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
