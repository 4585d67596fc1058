/* Frame codec: round trip, and every kind of bad input rejected with a reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/frame.h"

static struct frame_arena arena;

static int arena_setup(void **state)
{
	(void)state;
	frame_arena_init(&arena);
	return 0;
}

static int arena_teardown(void **state)
{
	(void)state;
	frame_arena_destroy(&arena);
	return 0;
}

static uint8_t id16[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static void init_frame(Tracer__Frame *f)
{
	tracer__frame__init(f);
	f->version = TRACER__CONSTANTS__FRAME_VERSION;
	f->seq = 7;
	f->stream_id.data = id16;
	f->stream_id.len = 16;
	f->boot_id.data = id16;
	f->boot_id.len = 16;
	f->watermark_ns = 123;
}

static enum frame_error roundtrip(Tracer__Frame *f, Tracer__Frame **out)
{
	uint8_t *buf;
	size_t len;
	char why[128];

	assert_int_equal(frame_encode(f, &buf, &len), 0);
	enum frame_error err = frame_decode(&arena, buf, len, out, why, sizeof(why));
	free(buf);
	return err;
}

static void test_roundtrip_exec(void **state)
{
	Tracer__Frame f, *out;
	Tracer__Event ev = TRACER__EVENT__INIT, *evs[1] = {&ev};
	Tracer__ExecEvent x = TRACER__EXEC_EVENT__INIT;
	char *argv[] = {"samtools", "sort", "-o", "out.bam", "in.bam"};

	init_frame(&f);
	x.pid = 42;
	x.start_ns = 1000;
	x.exe = "/usr/bin/samtools";
	x.argv = argv;
	x.n_argv = 5;
	ev.ts_ns = 2000;
	ev.kind_case = TRACER__EVENT__KIND_EXEC;
	ev.exec = &x;
	f.events = evs;
	f.n_events = 1;
	assert_int_equal(roundtrip(&f, &out), FRAME_OK);
	assert_int_equal(out->seq, 7);
	assert_int_equal(out->n_events, 1);
	assert_int_equal(out->events[0]->kind_case, TRACER__EVENT__KIND_EXEC);
	assert_string_equal(out->events[0]->exec->argv[1], "sort");
	assert_string_equal(out->events[0]->exec->exe, "/usr/bin/samtools");
	frame_arena_reset(&arena);
}

static void test_oldest_seq_stamp(void **state)
{
	Tracer__Frame f, *out;
	uint8_t *buf, tail[FRAME_OLDEST_SEQ_TAIL];
	char why[128];
	size_t len;

	(void)state;
	init_frame(&f);
	f.has_oldest_seq = 1;
	f.oldest_seq = 2; /* packed in; the stamp appended below must win */
	assert_int_equal(frame_encode(&f, &buf, &len), 0);
	uint64_t values[] = {7, 5, 1, 0x80};
	for (size_t i = 0; i < 3; i++) {
		size_t n = frame_oldest_seq_tail(values[i], tail);
		uint8_t *stamped = malloc(len + n);
		memcpy(stamped, buf, len);
		memcpy(stamped + len, tail, n);
		assert_int_equal(frame_decode(&arena, stamped, len + n, &out, why, sizeof(why)),
				 FRAME_OK);
		assert_true(out->has_oldest_seq);
		assert_int_equal(out->oldest_seq, values[i]);
		assert_int_equal(out->seq, 7);
		frame_arena_reset(&arena);
		free(stamped);
	}
	/* Multi-byte varints, and a stamp beyond the frame's own seq is refused. */
	size_t n = frame_oldest_seq_tail(0x80, tail);
	assert_int_equal(n, 3);
	uint8_t *stamped = malloc(len + n);
	memcpy(stamped, buf, len);
	memcpy(stamped + len, tail, n);
	assert_int_equal(frame_decode(&arena, stamped, len + n, &out, why, sizeof(why)),
			 FRAME_BAD_HEADER);
	free(stamped);
	free(buf);
}

static void test_garbage_rejected(void **state)
{
	Tracer__Frame *out = (void *)1;
	uint8_t junk[64];
	char why[128] = "";

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	assert_int_equal(frame_decode(&arena, junk, sizeof(junk), &out, why, sizeof(why)),
			 FRAME_UNDECODABLE);
	assert_null(out);
	assert_true(strlen(why) > 0);
	/* A valid encoding cut short is undecodable too. */
	Tracer__Frame f;
	uint8_t *buf;
	size_t len;
	init_frame(&f);
	f.host_id = "0123456789abcdef0123456789abcdef";
	assert_int_equal(frame_encode(&f, &buf, &len), 0);
	assert_int_equal(frame_decode(&arena, buf, len - 5, &out, why, sizeof(why)),
			 FRAME_UNDECODABLE);
	free(buf);
	assert_int_equal(frame_decode(&arena, junk, FRAME_MAX_BYTES + 1, &out, why, sizeof(why)),
			 FRAME_TOO_BIG);
}

static void test_bad_header(void **state)
{
	Tracer__Frame f, *out;

	init_frame(&f);
	f.version = 99;
	assert_int_equal(roundtrip(&f, &out), FRAME_BAD_VERSION);
	init_frame(&f);
	f.stream_id.len = 3;
	assert_int_equal(roundtrip(&f, &out), FRAME_BAD_HEADER);
	init_frame(&f);
	f.seq = 0;
	assert_int_equal(roundtrip(&f, &out), FRAME_BAD_HEADER);
}

static void test_bad_events(void **state)
{
	Tracer__Frame f, *out;
	Tracer__Event ev = TRACER__EVENT__INIT, *evs[1] = {&ev};
	Tracer__ExitEvent x = TRACER__EXIT_EVENT__INIT;
	Tracer__ExecEvent e = TRACER__EXEC_EVENT__INIT;
	static char big[FRAME_MAX_PATH + 10];

	init_frame(&f);
	f.events = evs;
	f.n_events = 1;
	ev.kind_case = TRACER__EVENT__KIND_EXIT;
	ev.exit = &x;
	x.pid = 0; /* no pid */
	x.start_ns = 5;
	assert_int_equal(roundtrip(&f, &out), FRAME_BAD_EVENT);

	memset(big, 'a', sizeof(big) - 1);
	ev.kind_case = TRACER__EVENT__KIND_EXEC;
	ev.exec = &e;
	e.pid = 1;
	e.start_ns = 1;
	e.cwd = big;
	assert_int_equal(roundtrip(&f, &out), FRAME_BAD_EVENT);
}

/* Times a collector cannot send: past them the wall clock (boot + offset) would overflow. */
static void test_clocks_bounded(void **state)
{
	Tracer__Frame f, *out;
	Tracer__Event ev = TRACER__EVENT__INIT, *evs[1] = {&ev};
	Tracer__ExitEvent x = TRACER__EXIT_EVENT__INIT;
	Tracer__ForkEvent fork = TRACER__FORK_EVENT__INIT;

	init_frame(&f);
	f.events = evs;
	f.n_events = 1;
	ev.kind_case = TRACER__EVENT__KIND_EXIT;
	ev.exit = &x;
	x.pid = 9;
	x.start_ns = FRAME_MAX_CLOCK_NS - 1;
	ev.ts_ns = FRAME_MAX_CLOCK_NS - 1;
	f.realtime_offset_ns = (int64_t)FRAME_MAX_CLOCK_NS - 1;
	assert_int_equal(roundtrip(&f, &out), FRAME_OK);
	frame_arena_reset(&arena);
	x.start_ns = FRAME_MAX_CLOCK_NS;
	assert_int_equal(roundtrip(&f, &out), FRAME_BAD_EVENT);
	x.start_ns = 5;
	ev.ts_ns = UINT64_MAX;
	assert_int_equal(roundtrip(&f, &out), FRAME_BAD_EVENT);
	ev.ts_ns = 6;
	ev.kind_case = TRACER__EVENT__KIND_FORK;
	ev.fork = &fork;
	fork.pid = 10;
	fork.parent_start_ns = UINT64_MAX;
	assert_int_equal(roundtrip(&f, &out), FRAME_BAD_EVENT);
	fork.parent_start_ns = 1;
	assert_int_equal(roundtrip(&f, &out), FRAME_OK);
	frame_arena_reset(&arena);
	f.realtime_offset_ns = INT64_MIN;
	assert_int_equal(roundtrip(&f, &out), FRAME_BAD_HEADER);
	f.realtime_offset_ns = (int64_t)FRAME_MAX_CLOCK_NS;
	assert_int_equal(roundtrip(&f, &out), FRAME_BAD_HEADER);
	f.realtime_offset_ns = 0;
	f.watermark_ns = UINT64_MAX;
	assert_int_equal(roundtrip(&f, &out), FRAME_BAD_HEADER);
}

static void test_new_kinds_validated(void **state)
{
	Tracer__Frame f, *out;
	Tracer__Event ev = TRACER__EVENT__INIT, *evs[1] = {&ev};
	Tracer__FileEvent file = TRACER__FILE_EVENT__INIT;
	Tracer__SampleEvent sample = TRACER__SAMPLE_EVENT__INIT;
	Tracer__FileCountsEvent counts = TRACER__FILE_COUNTS_EVENT__INIT;
	uint32_t many[FRAME_MAX_FILES + 1] = {0};

	init_frame(&f);
	f.events = evs;
	f.n_events = 1;
	ev.kind_case = TRACER__EVENT__KIND_FILE;
	ev.file = &file;
	file.pid = 5;
	file.start_ns = 9;
	file.path = "/data/x.bam";
	assert_int_equal(roundtrip(&f, &out), FRAME_OK);
	frame_arena_reset(&arena);
	file.has_slot = 1;
	file.slot = FRAME_MAX_FILES; /* out of range */
	assert_int_equal(roundtrip(&f, &out), FRAME_BAD_EVENT);
	file.slot = 0;
	file.path = NULL; /* required */
	assert_int_not_equal(roundtrip(&f, &out), FRAME_OK);

	ev.kind_case = TRACER__EVENT__KIND_SAMPLE;
	ev.sample = &sample;
	sample.pid = 0;
	sample.start_ns = 1;
	assert_int_equal(roundtrip(&f, &out), FRAME_BAD_EVENT);

	ev.kind_case = TRACER__EVENT__KIND_FILE_COUNTS;
	ev.file_counts = &counts;
	counts.pid = 3;
	counts.start_ns = 1;
	counts.count = many;
	counts.n_count = FRAME_MAX_FILES + 1;
	assert_int_equal(roundtrip(&f, &out), FRAME_BAD_EVENT);
}

/* Frames bigger than the kept chunk, then smaller ones, decode intact each time:
 * the arena grows, keeps one chunk, and hands out aligned, separate blocks. */
static void test_arena_reuse(void **state)
{
	(void)state;
	enum { N = 3000 };
	static Tracer__Event evs[N], *pevs[N];
	static Tracer__ExecEvent xs[N];
	static char exes[N][32];
	char *argv[] = {"bwa", "mem", "-t", "8", "ref.fa", "reads.fq"};
	Tracer__Frame f, *out;

	for (int round = 0; round < 4; round++) {
		size_t n = round % 2 ? 10 : N;
		init_frame(&f);
		for (size_t i = 0; i < n; i++) {
			tracer__event__init(&evs[i]);
			tracer__exec_event__init(&xs[i]);
			snprintf(exes[i], sizeof(exes[i]), "/usr/bin/tool%zu", i + (size_t)round);
			xs[i].pid = (uint32_t)(i + 1);
			xs[i].start_ns = 1000 + i;
			xs[i].exe = exes[i];
			xs[i].argv = argv;
			xs[i].n_argv = 6;
			evs[i].ts_ns = 2000 + i;
			evs[i].kind_case = TRACER__EVENT__KIND_EXEC;
			evs[i].exec = &xs[i];
			pevs[i] = &evs[i];
		}
		f.events = pevs;
		f.n_events = n;
		assert_int_equal(roundtrip(&f, &out), FRAME_OK);
		assert_int_equal(out->n_events, n);
		for (size_t i = 0; i < n; i++) {
			const Tracer__ExecEvent *x = out->events[i]->exec;
			assert_true(((uintptr_t)x & (_Alignof(max_align_t) - 1)) == 0);
			assert_int_equal(x->pid, i + 1);
			assert_string_equal(x->exe, exes[i]);
			assert_string_equal(x->argv[5], "reads.fq");
		}
		frame_arena_reset(&arena);
	}
	/* One allocation larger than anything the arena keeps. */
	uint8_t *big = arena.allocator.alloc(&arena, 3u << 20);
	assert_non_null(big);
	memset(big, 0xab, 3u << 20);
	frame_arena_reset(&arena);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_new_kinds_validated), cmocka_unit_test(test_roundtrip_exec),
	    cmocka_unit_test(test_garbage_rejected),	cmocka_unit_test(test_bad_header),
	    cmocka_unit_test(test_bad_events),		cmocka_unit_test(test_clocks_bounded),
	    cmocka_unit_test(test_oldest_seq_stamp),	cmocka_unit_test(test_arena_reuse),
	};
	return cmocka_run_group_tests(tests, arena_setup, arena_teardown);
}
