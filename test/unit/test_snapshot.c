/*
 * The start-up snapshot's user-space half (collector/convert/snapshot.c): the
 * iterator's exec records, read from its fd after the privilege drop, go out
 * parents first (by start time, not the iterator's pid order), each intact,
 * and convert as from_snapshot execs. Ground truth: the records written and
 * protobuf-c's own decoding of what was converted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "collector/convert/snapshot.h"

#define N 6

static struct tracer_exec_event written[N];

struct seen {
	struct tracer_exec_event rec[N];
	int n;
	struct bytebuf frame;
};

static int collect(void *ctx, const void *record, size_t size)
{
	struct seen *s = ctx;
	int type;

	assert_int_equal(size, sizeof(struct tracer_exec_event));
	assert_true(s->n < N);
	memcpy(&s->rec[s->n++], record, size);
	struct convert_stats st = {0};
	assert_int_equal(convert_record(record, size, &s->frame, &st, &type), 0);
	return 0;
}

static void make_records(void)
{
	/* pid order, as the iterator goes; start times not in that order (pids wrap). */
	static const uint64_t starts[N] = {500, 100, 300, 300, 50, 900};
	for (int i = 0; i < N; i++) {
		struct tracer_exec_event *e = &written[i];
		memset(e, 0x5a, sizeof(*e)); /* what the lengths leave out is not sent */
		e->h.type = TRACER_EV_EXEC;
		e->h.flags = TRACER_F_FROM_SNAPSHOT;
		e->h.pid = (uint32_t)(10 + i);
		e->h.start_ns = starts[i];
		e->ppid = 1;
		snprintf(e->comm, sizeof(e->comm), "p%d", i);
		e->filename_len =
		    (uint32_t)snprintf(e->filename, sizeof(e->filename), "bin%c", 0) + 1;
		e->cwd_len = (uint32_t)(i + 1);
		memset(e->cwd, 'a' + i, (size_t)i);
		e->cwd[i] = '\0';
		/* The last one rewrote its argv without a final NUL (setproctitle). */
		const char *argv = i == N - 1 ? "title over all" : "prog\0--flag\0";
		size_t len = i == N - 1 ? strlen(argv) : 12;
		memcpy(e->argv, argv, len);
		e->argv_len = (uint32_t)(len + (size_t)i * 100);
		memset(e->argv + len, 'z', (size_t)i * 100);
		if (i != N - 1)
			e->argv[e->argv_len - 1] = '\0';
	}
}

/* Six records fill a pipe (64 KiB): a reader takes them in pieces, one cut mid-record. */
static int read_through_pipe(uint64_t attached_ns, struct seen *s)
{
	int fds[2];

	make_records();
	assert_int_equal(pipe(fds), 0);
	if (fork() == 0) {
		close(fds[0]);
		const char *p = (const char *)written;
		for (size_t off = 0; off < sizeof(written); off += 5000) {
			size_t n = sizeof(written) - off < 5000 ? sizeof(written) - off : 5000;
			if (write(fds[1], p + off, n) != (ssize_t)n)
				_exit(1);
		}
		_exit(0);
	}
	close(fds[1]);
	int n = snapshot_read_processes(fds[0], attached_ns, collect, s);
	close(fds[0]);
	return n;
}

static void test_records_come_parents_first_intact(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));

	(void)state;
	assert_int_equal(read_through_pipe(0, s), N);
	assert_int_equal(s->n, N);
	static const uint32_t order[N] = {14, 11, 12, 13, 10, 15}; /* by start, then pid */
	for (int i = 0; i < N; i++) {
		const struct tracer_exec_event *got = &s->rec[i], *want = &written[order[i] - 10];
		assert_int_equal(got->h.pid, order[i]);
		assert_memory_equal(got, want, offsetof(struct tracer_exec_event, filename));
		assert_memory_equal(got->filename, want->filename, want->filename_len);
		assert_memory_equal(got->cwd, want->cwd, want->cwd_len);
		assert_memory_equal(got->argv, want->argv, want->argv_len);
	}
	/* Converted: from_snapshot execs, no exec-time counters, the retitled argv whole. */
	size_t at = 0;
	for (int i = 0; i < N; i++) {
		assert_true(at < s->frame.len);
		assert_int_equal(s->frame.data[at++], (10 << 3) | 2); /* Frame.events */
		uint64_t len = 0;
		for (int shift = 0;; shift += 7) {
			uint8_t b = s->frame.data[at++];
			len |= (uint64_t)(b & 0x7f) << shift;
			if (!(b & 0x80))
				break;
		}
		Tracer__Event *ev = tracer__event__unpack(NULL, len, s->frame.data + at);
		at += len;
		assert_non_null(ev);
		Tracer__ExecEvent *x = ev->exec;
		assert_non_null(x);
		assert_int_equal(x->pid, order[i]);
		assert_true(x->has_from_snapshot && x->from_snapshot);
		assert_null(x->at_exec);
		if (x->pid == 15) {
			assert_int_equal(x->n_argv, 1);
			assert_int_equal(strlen(x->argv[0]), written[5].argv_len);
		} else {
			/* prog, --flag, then (all but the first) the padding argument */
			assert_int_equal(x->n_argv, order[i] == 10 ? 2 : 3);
			assert_string_equal(x->argv[0], "prog");
			assert_string_equal(x->argv[1], "--flag");
		}
		tracer__event__free_unpacked(ev, NULL);
	}
	assert_int_equal(at, s->frame.len);
	bytebuf_free(&s->frame);
	free(s);
}

/* Started after the probes were attached: the ring buffer has them, the snapshot must not. */
static void test_processes_the_probes_saw_start_are_left_out(void **state)
{
	struct seen *s = calloc(1, sizeof(*s));

	(void)state;
	assert_int_equal(read_through_pipe(400, s), 4);
	static const uint32_t order[4] = {14, 11, 12, 13};
	for (int i = 0; i < 4; i++)
		assert_int_equal(s->rec[i].h.pid, order[i]);
	bytebuf_free(&s->frame);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_records_come_parents_first_intact),
	    cmocka_unit_test(test_processes_the_probes_saw_start_are_left_out),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
