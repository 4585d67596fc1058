/*
 * The ingest tests' fixture (test_proctable*.c): an ingest over an in-memory store
 * (with an outbox, for setup_with_outbox), committed as the receiver does, and the
 * collector's events made by hand. Include after cmocka.h.
 */
#ifndef TRACER_TEST_INGEST_FIXTURE_H
#define TRACER_TEST_INGEST_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "aggregator/ingest/ingest.h"
#include "aggregator/outbox/outbox.h"
#include "aggregator/store/store.h"

#define SEC 1000000000ULL
#define MS 1000000ULL

static struct store st;
static struct outbox ob;
static struct ingest g;

/* The made-up install these tests launch from; any other `tracer` is a user's. */
static inline bool our_install(const char *exe)
{
	return !strcmp(exe, "/opt/tracer/bin/tracer");
}

/* The aggregator's state over the open store: fresh, or resumed from it (a restart). */
static inline void start_ingest(bool resume)
{
	assert_int_equal(ingest_init(&g, &st, SCOPE_ALL, NULL, NULL, NULL), 0);
	g.launcher_trusted = our_install;
	snprintf(g.boot_id, sizeof(g.boot_id), "b0");
	if (resume)
		assert_int_equal(ingest_load_state(&g), 0);
	ingest_new_generation(&g);
}

static inline int start(bool with_outbox)
{
	assert_int_equal(store_open(&st, ":memory:"), 0);
	if (with_outbox) {
		assert_int_equal(outbox_open(&ob, st.db, 64 << 20, NULL), 0);
		st.outbox = &ob;
	}
	start_ingest(false);
	return 0;
}

static inline int setup(void **state)
{
	(void)state;
	return start(false);
}

static inline int setup_with_outbox(void **state)
{
	(void)state;
	return start(true);
}

/*
 * The live list (what the insight tick scans each second) must hold exactly
 * the entries that have not exited, whatever path ended the others: an exit,
 * a reused PID, a snapshot that no longer sees them.
 */
static inline size_t assert_live_list_is_the_unexited(void)
{
	const struct proctable *t = &g.table;
	size_t unexited_in_hash = 0, on_live_list = 0;

	for (size_t i = 0; i < t->n_buckets; i++)
		for (const struct proc *p = t->buckets[i]; p; p = p->links.hash_next)
			unexited_in_hash += !p->life.exited;
	for (const struct proc *p = t->live; p; p = p->links.live_next) {
		assert_false(p->life.exited);
		assert_false(p->links.in_gc);
		assert_ptr_equal(proc_by_pid(&g.table, p->pid), p);
		if (p->links.live_next)
			assert_ptr_equal(p->links.live_next->links.live_prev, p);
		on_live_list++;
	}
	assert_int_equal(on_live_list, unexited_in_hash);
	return on_live_list;
}

static inline int teardown(void **state)
{
	assert_live_list_is_the_unexited();
	ingest_free(&g);
	if (st.outbox)
		outbox_close(st.outbox);
	st.outbox = NULL;
	store_close(&st);
	return 0;
}

/* Commits as the receiver does at boot-clock time now (entries exited 10 s before are freed). */
static inline void commit_at(uint64_t now_boot_ns)
{
	assert_int_equal(store_begin(&st), 0);
	assert_int_equal(ingest_write(&g), 0);
	assert_int_equal(store_commit(&st), 0);
	ingest_committed(&g, now_boot_ns);
}

static inline void commit(void)
{
	commit_at(0);
}

static inline int64_t query_int(const char *sql)
{
	sqlite3_stmt *s;
	int64_t v = -1;

	assert_int_equal(sqlite3_prepare_v2(st.db, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_type(s, 0) == SQLITE_NULL ? -2 : sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* One event of kind, its message msg (any member of the kind union: all are pointers
 * to structs, which share a representation), at ts, through ingest. */
static inline void ingest_as(Tracer__Event__KindCase kind, void *msg, uint64_t ts)
{
	Tracer__Event ev = TRACER__EVENT__INIT;

	ev.ts_ns = ts;
	ev.kind_case = kind;
	ev.fork = msg;
	ingest_event(&g, &ev);
}

static inline void fork_ev(uint32_t pid, uint64_t start, uint32_t ppid, uint64_t pstart)
{
	Tracer__ForkEvent f = TRACER__FORK_EVENT__INIT;

	f.pid = pid;
	f.has_start_ns = 1;
	f.start_ns = start;
	f.parent_pid = ppid;
	f.parent_start_ns = pstart;
	f.comm = "parent";
	ingest_as(TRACER__EVENT__KIND_FORK, &f, start);
}

static inline void exec_ev(uint32_t pid, uint64_t start, uint32_t ppid, uint64_t pstart,
			   uint64_t ts, char **argv, size_t argc, const Tracer__Counters *at,
			   bool snap, int64_t prev_peak)
{
	Tracer__ExecEvent x = TRACER__EXEC_EVENT__INIT;

	x.pid = pid;
	x.start_ns = start;
	x.has_ppid = x.has_parent_start_ns = 1;
	x.ppid = ppid;
	x.parent_start_ns = pstart;
	x.exe = argv[0];
	x.comm = "comm";
	x.argv = argv;
	x.n_argv = argc;
	x.at_exec = (Tracer__Counters *)at;
	x.has_from_snapshot = snap;
	x.from_snapshot = snap;
	x.has_prev_peak_rss_kb = prev_peak >= 0;
	x.prev_peak_rss_kb = prev_peak >= 0 ? (uint64_t)prev_peak : 0;
	ingest_as(TRACER__EVENT__KIND_EXEC, &x, ts);
}

/* An exit whose read of the totals was stamped walk_seq (-1: no stamp, as older collectors). */
static inline void exit_ev_stamped(uint32_t pid, uint64_t start, uint64_t ts, int status,
				   const Tracer__Counters *tot, int64_t walk_seq)
{
	Tracer__ExitEvent x = TRACER__EXIT_EVENT__INIT;

	x.pid = pid;
	x.start_ns = start;
	x.wait_status = status;
	x.totals = (Tracer__Counters *)tot;
	x.comm = "x";
	x.has_walk_seq = walk_seq >= 0;
	x.walk_seq = walk_seq >= 0 ? (uint32_t)walk_seq : 0;
	ingest_as(TRACER__EVENT__KIND_EXIT, &x, ts);
}

static inline void exit_ev(uint32_t pid, uint64_t start, uint64_t ts, int status,
			   const Tracer__Counters *tot)
{
	exit_ev_stamped(pid, start, ts, status, tot, -1);
}

/* A sample at ts, busy since the last one. */
static inline void sample_ev(uint32_t pid, uint64_t start, uint64_t ts)
{
	Tracer__SampleEvent x = TRACER__SAMPLE_EVENT__INIT;

	x.pid = pid;
	x.start_ns = start;
	x.has_runtime_ns = x.has_utime_ns = 1;
	x.runtime_ns = x.utime_ns = (ts - start) / 2;
	x.has_rss_kb = 1;
	x.rss_kb = 1000;
	ingest_as(TRACER__EVENT__KIND_SAMPLE, &x, ts);
}

static inline Tracer__Counters counters(uint64_t cpu_ns, uint64_t wchar, uint64_t peak)
{
	Tracer__Counters c = TRACER__COUNTERS__INIT;

	c.utime_ns = cpu_ns;
	c.stime_ns = 0;
	c.runtime_ns = cpu_ns;
	c.wchar = wchar;
	c.peak_rss_kb = peak;
	c.has_iowait_ns = c.has_net_tx_bytes = c.has_sys_file = c.has_reclaim_ns = 1;
	return c;
}

static inline void tail_ev_stamped(uint32_t pid, uint64_t start, uint64_t runtime_ns,
				   int64_t walk_seq)
{
	Tracer__ExitTailEvent x = TRACER__EXIT_TAIL_EVENT__INIT;

	x.pid = pid;
	x.start_ns = start;
	x.has_runtime_ns = x.has_stime_ns = 1;
	x.runtime_ns = x.stime_ns = runtime_ns;
	x.has_walk_seq = walk_seq >= 0;
	x.walk_seq = walk_seq >= 0 ? (uint32_t)walk_seq : 0;
	ingest_as(TRACER__EVENT__KIND_EXIT_TAIL, &x, start + 1);
}

static inline void tail_ev(uint32_t pid, uint64_t start, uint64_t runtime_ns)
{
	tail_ev_stamped(pid, start, runtime_ns, -1);
}

#endif
