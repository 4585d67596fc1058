/*
 * The collector writes each Frame.events entry's Event wrapper itself and
 * packs only the inner message with protobuf-c (convert.c says why). Ground
 * truth here is protobuf-c's own tracer__event__pack: for every kind of event,
 * with small and multi-byte varints, the bytes must be the same, and a frame
 * made of them must decode to the same events.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collector/convert/convert.h"

/* What protobuf-c writes for the same entry: tag, length, packed Event. */
static void reference_entry(const Tracer__Event *ev, struct bytebuf *out)
{
	size_t size = tracer__event__get_packed_size(ev);
	uint8_t *p;

	assert_int_equal(bytebuf_append_varint(out, (10 << 3) | 2), 0);
	assert_int_equal(bytebuf_append_varint(out, size), 0);
	p = bytebuf_reserve(out, size);
	assert_non_null(p);
	out->len += tracer__event__pack(ev, p);
}

static void expect_same_bytes(const Tracer__Event *ev)
{
	struct bytebuf ours = {0}, theirs = {0};

	assert_int_equal(append_event(&ours, ev), 0);
	reference_entry(ev, &theirs);
	assert_int_equal(ours.len, theirs.len);
	assert_memory_equal(ours.data, theirs.data, ours.len);
	bytebuf_free(&ours);
	bytebuf_free(&theirs);
}

static const uint64_t stamps[] = {
    0, 1, 127, 128, 16383, 16384, 123456789012345ULL, (1ULL << 62) - 1};

static Tracer__Counters counters = TRACER__COUNTERS__INIT;
static Tracer__ForkEvent fork = TRACER__FORK_EVENT__INIT;
static Tracer__ExecEvent exec = TRACER__EXEC_EVENT__INIT;
static Tracer__ExitEvent exit_ev = TRACER__EXIT_EVENT__INIT;
static Tracer__ExitTailEvent tail = TRACER__EXIT_TAIL_EVENT__INIT;
static Tracer__CwdEvent cwd = TRACER__CWD_EVENT__INIT;
static Tracer__OomEvent oom = TRACER__OOM_EVENT__INIT;
static Tracer__FileEvent file = TRACER__FILE_EVENT__INIT;
static Tracer__FileCountsEvent counts = TRACER__FILE_COUNTS_EVENT__INIT;
static Tracer__CgroupEvent cgroup = TRACER__CGROUP_EVENT__INIT;
static Tracer__SampleEvent sample = TRACER__SAMPLE_EVENT__INIT;
static char *argv[] = {"bwa", "mem", "-t", "8", "ref.fa", "reads.fq"};
static uint32_t count[] = {1, 300, 70000}, failed[] = {0, 2, 0}, flags[] = {0, 0101, 02};

/* Every kind of event with a few of its fields set (exec with its argv and counters). */
static void fill_messages(void)
{
	counters.has_utime_ns = counters.has_runtime_ns = counters.has_peak_rss_kb = 1;
	counters.utime_ns = 5;
	counters.runtime_ns = 9876543210;
	counters.peak_rss_kb = 300;
	fork.pid = 42;
	fork.parent_pid = 1;
	fork.parent_start_ns = 99;
	fork.comm = "bash";
	exec.pid = 43;
	exec.start_ns = 1000000000;
	exec.exe = "/usr/bin/bwa";
	exec.argv = argv;
	exec.n_argv = sizeof(argv) / sizeof(*argv);
	exec.at_exec = &counters;
	exec.has_argv_redactions = 1;
	exec.argv_redactions = 2;
	exit_ev.pid = 43;
	exit_ev.start_ns = 1000000000;
	exit_ev.wait_status = 9;
	exit_ev.totals = &counters;
	tail.pid = 43;
	tail.start_ns = 7;
	cwd.pid = 43;
	cwd.start_ns = 7;
	cwd.cwd = "/data/run";
	oom.pid = 44;
	oom.has_oom_score_adj = 1;
	oom.oom_score_adj = -1000;
	file.pid = 43;
	file.start_ns = 7;
	file.path = "/data/reads.fq";
	file.has_result = 1;
	file.result = -2;
	counts.pid = 43;
	counts.start_ns = 7;
	counts.n_count = counts.n_failed = counts.n_flags_union = 3;
	counts.count = count;
	counts.failed = failed;
	counts.flags_union = flags;
	cgroup.id = 12345;
	cgroup.path = "system.slice/slurmstepd.scope/job_12/step_0";
	sample.pid = 43;
	sample.start_ns = 7;
}

static void test_every_kind_packs_as_protobuf_c_does(void **state)
{
	(void)state;
	fill_messages();
	const struct {
		Tracer__Event__KindCase kind;
		void *message;
	} kinds[] = {
	    {TRACER__EVENT__KIND_FORK, &fork},	   {TRACER__EVENT__KIND_EXEC, &exec},
	    {TRACER__EVENT__KIND_EXIT, &exit_ev},  {TRACER__EVENT__KIND_EXIT_TAIL, &tail},
	    {TRACER__EVENT__KIND_CWD, &cwd},	   {TRACER__EVENT__KIND_OOM, &oom},
	    {TRACER__EVENT__KIND_FILE, &file},	   {TRACER__EVENT__KIND_FILE_COUNTS, &counts},
	    {TRACER__EVENT__KIND_CGROUP, &cgroup}, {TRACER__EVENT__KIND_SAMPLE, &sample},
	};
	for (size_t i = 0; i < sizeof(stamps) / sizeof(*stamps); i++) {
		for (size_t k = 0; k < sizeof(kinds) / sizeof(*kinds); k++) {
			Tracer__Event ev = TRACER__EVENT__INIT;
			ev.ts_ns = stamps[i];
			ev.kind_case = kinds[k].kind;
			/* The oneof's members share one pointer (pointers to structs
			 * have one representation): any member sets it. */
			ev.fork = kinds[k].message;
			expect_same_bytes(&ev);
		}
	}
	/* An inner message past 127 bytes: a two-byte length in the wrapper. */
	char *many[100];
	for (size_t i = 0; i < 100; i++)
		many[i] = "argument";
	exec.argv = many;
	exec.n_argv = 100;
	Tracer__Event big = TRACER__EVENT__INIT;
	big.ts_ns = 5;
	big.kind_case = TRACER__EVENT__KIND_EXEC;
	big.exec = &exec;
	expect_same_bytes(&big);
}

static void test_frame_of_them_decodes(void **state)
{
	(void)state;
	Tracer__Frame head = TRACER__FRAME__INIT;
	Tracer__ExitTailEvent a_tail = TRACER__EXIT_TAIL_EVENT__INIT;
	Tracer__ForkEvent a_fork = TRACER__FORK_EVENT__INIT;
	uint8_t id[16] = {1};
	struct bytebuf buf = {0};

	head.version = 1;
	head.seq = 3;
	head.stream_id.data = head.boot_id.data = id;
	head.stream_id.len = head.boot_id.len = sizeof(id);
	size_t head_size = tracer__frame__get_packed_size(&head);
	uint8_t *p = bytebuf_reserve(&buf, head_size);
	assert_non_null(p);
	buf.len += tracer__frame__pack(&head, p);
	for (uint32_t i = 1; i <= 300; i++) {
		Tracer__Event ev = TRACER__EVENT__INIT;
		ev.ts_ns = 1000ULL * i;
		if (i % 2) {
			a_fork.pid = i;
			a_fork.parent_pid = 1;
			ev.kind_case = TRACER__EVENT__KIND_FORK;
			ev.fork = &a_fork;
		} else {
			a_tail.pid = i;
			a_tail.start_ns = 77;
			a_tail.has_runtime_ns = 1;
			a_tail.runtime_ns = i * 1000003ULL;
			ev.kind_case = TRACER__EVENT__KIND_EXIT_TAIL;
			ev.exit_tail = &a_tail;
		}
		assert_int_equal(append_event(&buf, &ev), 0);
	}
	Tracer__Frame *f = tracer__frame__unpack(NULL, buf.len, buf.data);
	assert_non_null(f);
	assert_int_equal(f->n_events, 300);
	for (uint32_t i = 1; i <= 300; i++) {
		const Tracer__Event *ev = f->events[i - 1];
		assert_int_equal(ev->ts_ns, 1000ULL * i);
		if (i % 2) {
			assert_int_equal(ev->kind_case, TRACER__EVENT__KIND_FORK);
			assert_int_equal(ev->fork->pid, i);
		} else {
			assert_int_equal(ev->kind_case, TRACER__EVENT__KIND_EXIT_TAIL);
			assert_int_equal(ev->exit_tail->runtime_ns, i * 1000003ULL);
		}
	}
	tracer__frame__free_unpacked(f, NULL);
	bytebuf_free(&buf);
}

static void test_event_without_kind_is_refused_and_appends_nothing(void **state)
{
	(void)state;
	Tracer__Event ev = TRACER__EVENT__INIT;
	struct bytebuf buf = {0};

	ev.ts_ns = 1;
	assert_int_equal(append_event(&buf, &ev), -1);
	assert_int_equal(buf.len, 0);
	bytebuf_free(&buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_kind_packs_as_protobuf_c_does),
	    cmocka_unit_test(test_frame_of_them_decodes),
	    cmocka_unit_test(test_event_without_kind_is_refused_and_appends_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
