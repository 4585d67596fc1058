/*
 * The store's rows, read back with plain SQL by column name: every field of a
 * process row lands in its own column, absent probe groups are NULL, batches
 * write what single rows do, and a running process reads back as written (step
 * and run totals, open runs: test_store_runs.c).
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
#include <sqlite3.h>

#include "aggregator/model/proctable.h"
#include "aggregator/store/store.h"
#define TMPDB_STORE_FIXTURE "store-test"
#include "test/unit/tmpdb.h"

/* A finished process with a distinct value in every field. */
static struct process_row full_row(void)
{
	struct process_row r = {
	    .id = 11,
	    .run_id = 12,
	    .parent_id = 13,
	    .pid = 14,
	    .ppid = 15,
	    .image = 16,
	    .start_epoch_ns = 17,
	    .end_epoch_ns = 18,
	    .proc_start_boot_ns = 19,
	    .boot_id = "b00",
	    .comm = "cmd",
	    .argv_truncated = true,
	    .argv_redactions = 20,
	    .has_ids = true,
	    .uid = 21,
	    .gid = 22,
	    .cgroup_id = 23,
	    .cgroup1_id = 24,
	    .state = "exited",
	    .has_signal = true,
	    .signal = 9,
	    .core_dumped = true,
	    .has_metrics = true,
	    .from_snapshot = true,
	    .oom_killed = true,
	    .files_overflow = 25,
	    .step_id = 26,
	    .tool_id = 27,
	    .helper = true,
	    .container_runtime = "docker",
	    .container_id = "c0ffee",
	    .pod_uid = "pod",
	    .slurm_job = "77",
	    .slurm_step = "batch",
	    .systemd_unit = "x.service",
	};
	r.exe = "/bin/exe";
	r.argv_json = "[\"a\"]";
	r.cwd = "/w";
	r.m = (struct proc_metrics){
	    .cpu_user_ns = 101,
	    .cpu_sys_ns = 102,
	    .max_rss_kb = 103,
	    .ru_maxrss_kb = 104,
	    .has_max_rss = true,
	    .rchar = 105,
	    .wchar = 106,
	    .syscr = 107,
	    .syscw = 108,
	    .read_bytes = 109,
	    .write_bytes = 110,
	    .cancelled_write_bytes = 111,
	    .vol_ctxsw = 112,
	    .invol_ctxsw = 113,
	    .min_faults = 114,
	    .maj_faults = 115,
	    .runq_ns = 116,
	    .iowait_ns = 117,
	    .reclaim_ns = 118,
	    .net_tx_bytes = 119,
	    .net_rx_bytes = 120,
	    .sys_file = 121,
	    .sys_net = 122,
	    .sys_mem = 123,
	    .sys_proc = 124,
	    .sys_other = 125,
	    .sys_failed = 126,
	    .has_iowait = true,
	    .has_reclaim = true,
	    .has_net = true,
	    .has_sys = true,
	};
	return r;
}

static void test_every_process_field_in_its_column(void **state)
{
	struct store *s = *state;
	struct process_row r = full_row();
	static const char *const expected[][2] = {
	    {"run_id", "12"},
	    {"parent_id", "13"},
	    {"pid", "14"},
	    {"ppid", "15"},
	    {"image", "16"},
	    {"start_ns", "17"},
	    {"end_ns", "18"},
	    {"proc_start_boot_ns", "19"},
	    {"boot_id", "b00"},
	    {"comm", "cmd"},
	    {"exe", "/bin/exe"},
	    {"argv", "[\"a\"]"},
	    {"argv_truncated", "1"},
	    {"argv_redactions", "20"},
	    {"cwd", "/w"},
	    {"uid", "21"},
	    {"gid", "22"},
	    {"cgroup_id", "23"},
	    {"cgroup1_id", "24"},
	    {"state", "exited"},
	    {"exit_code", "NULL"},
	    {"signal", "9"},
	    {"core_dumped", "1"},
	    {"cpu_user_ns", "101"},
	    {"cpu_sys_ns", "102"},
	    {"max_rss_kb", "103"},
	    {"ru_maxrss_kb", "104"},
	    {"rchar", "105"},
	    {"wchar", "106"},
	    {"syscr", "107"},
	    {"syscw", "108"},
	    {"read_bytes", "109"},
	    {"write_bytes", "110"},
	    {"cancelled_write_bytes", "111"},
	    {"vol_ctxsw", "112"},
	    {"invol_ctxsw", "113"},
	    {"min_faults", "114"},
	    {"maj_faults", "115"},
	    {"from_snapshot", "1"},
	    {"runq_ns", "116"},
	    {"iowait_ns", "117"},
	    {"reclaim_ns", "118"},
	    {"net_tx_bytes", "119"},
	    {"net_rx_bytes", "120"},
	    {"sys_file", "121"},
	    {"sys_net", "122"},
	    {"sys_mem", "123"},
	    {"sys_proc", "124"},
	    {"sys_other", "125"},
	    {"sys_failed", "126"},
	    {"oom_killed", "1"},
	    {"files_overflow", "25"},
	    {"step_id", "26"},
	    {"tool_id", "27"},
	    {"helper", "1"},
	    {"container_runtime", "docker"},
	    {"container_id", "c0ffee"},
	    {"pod_uid", "pod"},
	    {"slurm_job", "77"},
	    {"slurm_step", "batch"},
	    {"systemd_unit", "x.service"},
	};

	assert_int_equal(store_put_process(s, &r), 0);
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		const char *got = tmpdb_column(s, "processes", expected[i][0], r.id);
		if (strcmp(got, expected[i][1]) != 0)
			fail_msg("column %s: got %s, want %s", expected[i][0], got, expected[i][1]);
	}
}

static void test_absent_counters_are_null(void **state)
{
	struct store *s = *state;
	struct process_row r = full_row();
	static const char *const metric_columns[] = {
	    "cpu_user_ns", "cpu_sys_ns", "max_rss_kb", "ru_maxrss_kb", "rchar",	   "maj_faults",
	    "runq_ns",	   "iowait_ns",	 "reclaim_ns", "net_tx_bytes", "sys_file", "sys_failed"};

	/* An exit code, no signal: not core-dumped (0), and no metrics at all. */
	r.id = 30;
	r.has_signal = false;
	r.has_exit_code = true;
	r.exit_code = 3;
	r.has_metrics = false;
	r.has_ids = false;
	assert_int_equal(store_put_process(s, &r), 0);
	assert_string_equal(tmpdb_column(s, "processes", "exit_code", 30), "3");
	assert_string_equal(tmpdb_column(s, "processes", "signal", 30), "NULL");
	assert_string_equal(tmpdb_column(s, "processes", "core_dumped", 30), "0");
	assert_string_equal(tmpdb_column(s, "processes", "uid", 30), "NULL");
	for (size_t i = 0; i < sizeof(metric_columns) / sizeof(metric_columns[0]); i++)
		assert_string_equal(tmpdb_column(s, "processes", metric_columns[i], 30), "NULL");

	/* Metrics, but the I/O wait, network and syscall groups were off. */
	r.id = 31;
	r.has_metrics = true;
	r.m.has_iowait = r.m.has_net = r.m.has_sys = false;
	r.m.has_max_rss = false;
	assert_int_equal(store_put_process(s, &r), 0);
	assert_string_equal(tmpdb_column(s, "processes", "runq_ns", 31), "116");
	assert_string_equal(tmpdb_column(s, "processes", "reclaim_ns", 31), "118");
	assert_string_equal(tmpdb_column(s, "processes", "max_rss_kb", 31), "NULL");
	assert_string_equal(tmpdb_column(s, "processes", "iowait_ns", 31), "NULL");
	assert_string_equal(tmpdb_column(s, "processes", "net_rx_bytes", 31), "NULL");
	assert_string_equal(tmpdb_column(s, "processes", "sys_other", 31), "NULL");

	/* Running: neither exit code nor signal, so core_dumped is unknown. */
	r.id = 32;
	r.has_exit_code = false;
	r.state = "running";
	assert_int_equal(store_put_process(s, &r), 0);
	assert_string_equal(tmpdb_column(s, "processes", "core_dumped", 32), "NULL");
}

/* Row i of a set: every field distinct per row, some absent on odd rows. */
static struct process_row varied_row(int i)
{
	struct process_row r = full_row();

	r.id = 1000 + i;
	r.pid = (uint32_t)(5000 + i);
	r.parent_id = i ? 999 + i : 0;
	r.m.cpu_user_ns = 7u * (uint64_t)i;
	r.m.rchar = 1000u + (uint64_t)i;
	r.has_metrics = i % 3 != 0;
	r.m.has_net = i % 2 == 0;
	r.step_id = i % 4 ? i : 0;
	r.state = i % 5 ? "exited" : "running";
	r.has_signal = i % 5 != 0;
	return r;
}

/* Every column of every process row, in id order, as one text. */
static char *dump_processes(struct store *s)
{
	sqlite3_stmt *st;
	size_t cap = 1 << 20, len = 0;
	char *out = malloc(cap);

	assert_non_null(out);
	assert_int_equal(
	    sqlite3_prepare_v2(s->db, "SELECT * FROM processes ORDER BY id", -1, &st, NULL),
	    SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		for (int c = 0; c < sqlite3_column_count(st); c++) {
			const char *v = (const char *)sqlite3_column_text(st, c);
			len += (size_t)snprintf(out + len, cap - len, "%s|", v ? v : "NULL");
			assert_true(len < cap);
		}
	sqlite3_finalize(st);
	return out;
}

/*
 * Rows written several at a time (store_write_process) hold exactly what the
 * same rows written one at a time (store_put_process) hold: two full batches
 * and a remainder. Written again unstored, as a retried transaction does, the
 * rows already there are replaced with the new values, never doubled.
 */
static void test_batched_rows_equal_single_writes(void **state)
{
	struct store *s = *state;
	enum { N = 2 * PROCESS_BATCH + 7 };
	static struct process_row rows[N];
	char other_path[64];
	struct store single;

	tmpdb_fresh(other_path, sizeof(other_path), "store-single");
	assert_int_equal(store_open(&single, other_path), 0);
	for (int i = 0; i < N; i++) {
		rows[i] = varied_row(i);
		struct process_row one = varied_row(i);
		assert_int_equal(store_put_process(&single, &one), 0);
		assert_int_equal(store_write_process(s, &rows[i], false), 0);
	}
	assert_int_equal(store_flush_processes(s), 0);
	for (int i = 0; i < N; i++)
		assert_true(rows[i].stored);
	/* Two statements of a full batch each, and the remainder row by row: none fell back. */
	assert_int_equal(sqlite3_stmt_status(s->insert_processes, SQLITE_STMTSTATUS_RUN, 0), 2);
	assert_int_equal(sqlite3_stmt_status(s->insert_process, SQLITE_STMTSTATUS_RUN, 0), 7);
	char *want = dump_processes(&single), *got = dump_processes(s);
	assert_string_equal(got, want);
	free(got);
	free(want);

	for (int i = 0; i < N; i++) {
		rows[i].stored = false;
		rows[i].state = "exited";
		rows[i].m.cpu_sys_ns = 3u * (uint64_t)i;
		struct process_row one = rows[i];
		assert_int_equal(store_put_process(&single, &one), 0);
		assert_int_equal(store_write_process(s, &rows[i], false), 0);
	}
	assert_int_equal(store_flush_processes(s), 0);
	want = dump_processes(&single);
	got = dump_processes(s);
	assert_string_equal(got, want);
	free(got);
	free(want);
	sqlite3_stmt *count;
	assert_int_equal(
	    sqlite3_prepare_v2(s->db, "SELECT count(*) FROM processes", -1, &count, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_step(count), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(count, 0), N);
	sqlite3_finalize(count);
	store_close(&single);
	tmpdb_remove(other_path);
}

/* A heap copy of text, or NULL for ""; the test frees it once the row is written. */
static char *heap_text(const char *text)
{
	return text[0] ? strdup(text) : NULL;
}

/*
 * The batch INSERT binds only what changed since its last rows. Its texts,
 * numbers and NULLs change between batches in every way (a text to another,
 * to NULL and back, an equal text in a new buffer, the old row's freed), and
 * every row must still hold its own values: the same as rows written one at a
 * time. Under ASan a binding left pointing at a freed row fails here.
 */
static void test_batches_bind_what_each_row_holds(void **state)
{
	struct store *s = *state;
	static const char *const exes[] = {"/bin/a", "/bin/b", "", "/usr/bin/a-longer-name"};
	static const char *const cwds[] = {"/w", "/w", "/x", ""};
	char other_path[64];
	struct store single;

	tmpdb_fresh(other_path, sizeof(other_path), "store-memo");
	assert_int_equal(store_open(&single, other_path), 0);
	for (int round = 0; round < 6; round++) {
		static struct process_row rows[PROCESS_BATCH];
		for (int i = 0; i < PROCESS_BATCH; i++) {
			struct process_row *r = &rows[i];
			*r = varied_row(round * PROCESS_BATCH + i);
			r->exe = heap_text(exes[(round + i) % 4]);
			r->cwd = heap_text(cwds[(round * 3 + i) % 4]);
			r->argv_json = heap_text(round % 2 ? "[\"a\"]"
						 : i % 2   ? "[\"b\",\"c\"]"
							   : "");
			snprintf(r->comm, sizeof(r->comm), "%s", round % 3 ? "same" : "c");
			r->has_ids = (round + i) % 2;
			r->uid = (uint32_t)(round % 2);
			struct process_row one = *r;
			assert_int_equal(store_put_process(&single, &one), 0);
			assert_int_equal(store_write_process(s, r, false), 0);
		}
		/* A full batch is written by its last row: nothing of it is needed now. */
		for (int i = 0; i < PROCESS_BATCH; i++) {
			assert_true(rows[i].stored);
			free(rows[i].exe);
			free(rows[i].cwd);
			free(rows[i].argv_json);
			memset(&rows[i], 0x5a, sizeof(rows[i]));
		}
	}
	char *want = dump_processes(&single), *got = dump_processes(s);
	assert_string_equal(got, want);
	free(got);
	free(want);
	store_close(&single);
	tmpdb_remove(other_path);
}

struct seen_processes {
	int n;
	struct process_row row;
};

static void keep_process(void *ctx, struct process_row *r)
{
	struct seen_processes *seen = ctx;

	if (seen->n++ == 0)
		seen->row = *r;
	else
		process_row_free_strings(r);
}

static void test_running_process_read_back(void **state)
{
	struct store *s = *state;
	struct process_row r = full_row();
	struct seen_processes seen = {0};

	r.id = 40;
	r.state = "running";
	r.has_signal = false;
	r.end_epoch_ns = 0;
	assert_int_equal(store_put_process(s, &r), 0);
	r.id = 41;
	r.state = "exited";
	assert_int_equal(store_put_process(s, &r), 0);

	assert_int_equal(store_each_running_process(s, keep_process, &seen), 0);
	assert_int_equal(seen.n, 1);
	struct process_row *got = &seen.row;
	assert_int_equal(got->id, 40);
	assert_int_equal(got->run_id, 12);
	assert_int_equal(got->parent_id, 13);
	assert_int_equal(got->pid, 14);
	assert_int_equal(got->ppid, 15);
	assert_int_equal(got->image, 16);
	assert_int_equal(got->start_epoch_ns, 17);
	assert_int_equal(got->proc_start_boot_ns, 19);
	assert_string_equal(got->boot_id, "b00");
	assert_string_equal(got->comm, "cmd");
	assert_string_equal(got->exe, "/bin/exe");
	assert_string_equal(got->argv_json, "[\"a\"]");
	assert_string_equal(got->cwd, "/w");
	assert_true(got->argv_truncated);
	assert_int_equal(got->argv_redactions, 20);
	assert_true(got->has_ids);
	assert_int_equal(got->uid, 21);
	assert_int_equal(got->gid, 22);
	assert_int_equal(got->cgroup_id, 23);
	assert_int_equal(got->cgroup1_id, 24);
	assert_true(got->from_snapshot);
	assert_true(got->oom_killed);
	assert_int_equal(got->step_id, 26);
	assert_int_equal(got->tool_id, 27);
	assert_true(got->helper);
	assert_true(got->stored);
	assert_string_equal(got->state, "running");
	process_row_free_strings(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_every_process_field_in_its_column, open_store,
					    close_store),
	    cmocka_unit_test_setup_teardown(test_absent_counters_are_null, open_store, close_store),
	    cmocka_unit_test_setup_teardown(test_batches_bind_what_each_row_holds, open_store,
					    close_store),
	    cmocka_unit_test_setup_teardown(test_batched_rows_equal_single_writes, open_store,
					    close_store),
	    cmocka_unit_test_setup_teardown(test_running_process_read_back, open_store,
					    close_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
