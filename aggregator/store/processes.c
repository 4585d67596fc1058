/*
 * The processes table. PROCESS_COLUMNS lists its columns once, in order; the
 * INSERT, its parameter numbers and the restart read are generated from it,
 * so a column is bound and read by its name, never by a counted position.
 */
#include "aggregator/store/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/outbox/outbox.h"
#include "common/log.h"

#define PROCESS_COLUMNS(X)                                                                         \
	X(id)                                                                                      \
	X(run_id)                                                                                  \
	X(parent_id)                                                                               \
	X(pid)                                                                                     \
	X(ppid)                                                                                    \
	X(image)                                                                                   \
	X(start_ns)                                                                                \
	X(end_ns)                                                                                  \
	X(proc_start_boot_ns)                                                                      \
	X(boot_id)                                                                                 \
	X(comm)                                                                                    \
	X(exe)                                                                                     \
	X(argv)                                                                                    \
	X(argv_truncated)                                                                          \
	X(argv_redactions)                                                                         \
	X(cwd)                                                                                     \
	X(uid)                                                                                     \
	X(gid)                                                                                     \
	X(cgroup_id)                                                                               \
	X(cgroup1_id)                                                                              \
	X(state)                                                                                   \
	X(exit_code)                                                                               \
	X(signal)                                                                                  \
	X(core_dumped)                                                                             \
	X(cpu_user_ns)                                                                             \
	X(cpu_sys_ns)                                                                              \
	X(max_rss_kb)                                                                              \
	X(ru_maxrss_kb)                                                                            \
	IO_COUNTERS(X)                                                                             \
	X(vol_ctxsw)                                                                               \
	X(invol_ctxsw)                                                                             \
	X(min_faults)                                                                              \
	X(maj_faults)                                                                              \
	X(from_snapshot)                                                                           \
	HOOK_COUNTERS(X)                                                                           \
	X(net_wait_peer_family)                                                                    \
	X(net_wait_peer_port)                                                                      \
	X(oom_killed)                                                                              \
	X(files_overflow)                                                                          \
	X(step_id)                                                                                 \
	X(tool_id)                                                                                 \
	X(helper)                                                                                  \
	X(container_runtime)                                                                       \
	X(container_id)                                                                            \
	X(pod_uid)                                                                                 \
	X(slurm_job)                                                                               \
	X(slurm_step)                                                                              \
	X(systemd_unit)                                                                            \
	X(killed_by_pid)                                                                           \
	X(killed_by_comm)

/* Column positions as SQLite reads them (0-based); parameters are one more. */
enum process_column {
#define AS_ENUM(name) COL_##name,
	PROCESS_COLUMNS(AS_ENUM)
#undef AS_ENUM
	    PROCESS_COLUMN_COUNT
};

static const char *const process_column_names[] = {
#define AS_NAME(name) #name,
    PROCESS_COLUMNS(AS_NAME)
#undef AS_NAME
};

_Static_assert(sizeof(process_column_names) / sizeof(process_column_names[0]) ==
		   PROCESS_COLUMN_COUNT,
	       "one name per process column");

/*
 * What each parameter of the batch INSERT holds. SQLite keeps bindings across
 * sqlite3_reset, and a storm's rows repeat most columns (uid, cgroup, zero
 * counters, NULL context), so a value already bound is not bound again:
 * binding was a tenth of the aggregator's CPU per process.
 */
enum held { HELD_UNKNOWN, HELD_NULL, HELD_INT, HELD_TEXT };

#define BATCH_PARAMS (PROCESS_BATCH * PROCESS_COLUMN_COUNT + 1) /* numbered from 1 */

struct param_memo {
	uint8_t held[BATCH_PARAMS];
	int64_t value[BATCH_PARAMS]; /* HELD_INT; HELD_TEXT: its length */
	/* HELD_TEXT: the memo's own copy, which SQLite reads (SQLITE_STATIC) until
	 * the parameter is bound again; the buffer is kept for the next text. */
	char *text[BATCH_PARAMS];
	size_t text_room[BATCH_PARAMS];
};

/* A statement being bound, and its memo (NULL: bind every parameter). */
struct binder {
	sqlite3_stmt *st;
	struct param_memo *memo;
};

static void remember(const struct binder *b, int i, int rc, enum held held, int64_t v)
{
	if (!b->memo)
		return;
	b->memo->held[i] = (uint8_t)(rc == SQLITE_OK ? held : HELD_UNKNOWN);
	b->memo->value[i] = v;
}

static void put_int(const struct binder *b, int i, int64_t v)
{
	if (b->memo && b->memo->held[i] == HELD_INT && b->memo->value[i] == v)
		return;
	remember(b, i, sqlite3_bind_int64(b->st, i, v), HELD_INT, v);
}

static void put_null(const struct binder *b, int i)
{
	if (b->memo && b->memo->held[i] == HELD_NULL)
		return;
	remember(b, i, sqlite3_bind_null(b->st, i), HELD_NULL, 0);
}

static void put_int_if(const struct binder *b, int i, bool have, int64_t v)
{
	if (have)
		put_int(b, i, v);
	else
		put_null(b, i);
}

/* Row ids: NULL for none (0). */
static void put_id(const struct binder *b, int i, int64_t v)
{
	put_int_if(b, i, v > 0, v);
}

/* Into the memo's copy for parameter i; false if there is no memory for it. */
static bool keep_text(struct param_memo *m, int i, const char *v, size_t len)
{
	if (m->text_room[i] <= len) {
		/* SQLite may hold the old buffer: it is bound again before any step. */
		char *bigger = realloc(m->text[i], len + 1);
		if (!bigger)
			return false;
		m->text[i] = bigger;
		m->text_room[i] = len + 1;
	}
	memcpy(m->text[i], v, len + 1);
	return true;
}

/*
 * Without a memo, the row's own string (SQLITE_STATIC: it lives until the
 * step, not after). With one, a text equal to what the parameter holds is not
 * bound again (a storm's boot id, state, exe, argv and cwd), and a new one is
 * bound from the memo's copy, which outlives the row.
 */
static void put_text(const struct binder *b, int i, const char *v)
{
	struct param_memo *m = b->memo;

	if (!v || !v[0]) {
		put_null(b, i);
		return;
	}
	if (!m) {
		sqlite3_bind_text(b->st, i, v, -1, SQLITE_STATIC);
		return;
	}
	size_t len = strlen(v);
	if (m->held[i] == HELD_TEXT && (size_t)m->value[i] == len && !memcmp(m->text[i], v, len))
		return;
	if (!keep_text(m, i, v, len)) {
		/* No copy: the row's string this once, and nothing to compare with next time. */
		remember(b, i, sqlite3_bind_text(b->st, i, v, (int)len, SQLITE_STATIC),
			 HELD_UNKNOWN, 0);
		return;
	}
	remember(b, i, sqlite3_bind_text(b->st, i, m->text[i], (int)len, SQLITE_STATIC), HELD_TEXT,
		 (int64_t)len);
}

void store_free_processes(struct store *s)
{
	if (!s->batch_params)
		return;
	for (int i = 0; i < BATCH_PARAMS; i++)
		free(s->batch_params->text[i]);
	free(s->batch_params);
	s->batch_params = NULL;
}

/* Binds column c of the processes table, in the row of a multi-row INSERT that starts at base. */
#define PARAM(c) (base + COL_##c + 1)

/* "a, b, c" from the column table. */
static int process_column_list(char *out, size_t size)
{
	size_t len = 0;

	for (int c = 0; c < PROCESS_COLUMN_COUNT; c++) {
		int w =
		    snprintf(out + len, size - len, "%s%s", c ? ", " : "", process_column_names[c]);
		if (w < 0 || (size_t)w >= size - len)
			return -1;
		len += (size_t)w;
	}
	return 0;
}

/* "INSERT<verb> INTO processes (columns) VALUES (?, ...)" with rows tuples of parameters. */
static char *process_insert_sql(const char *verb, int rows)
{
	char columns[1536];

	if (process_column_list(columns, sizeof(columns)) != 0)
		return NULL;
	size_t size = strlen(columns) + 64 + (size_t)rows * (2 * PROCESS_COLUMN_COUNT + 3);
	char *sql = malloc(size);
	if (!sql)
		return NULL;
	size_t len =
	    (size_t)snprintf(sql, size, "INSERT%s INTO processes (%s) VALUES ", verb, columns);
	for (int r = 0; r < rows; r++) {
		sql[len++] = r ? ',' : ' ';
		sql[len++] = '(';
		for (int c = 0; c < PROCESS_COLUMN_COUNT; c++) {
			if (c)
				sql[len++] = ',';
			sql[len++] = '?';
		}
		sql[len++] = ')';
	}
	sql[len] = '\0';
	return sql;
}

static int prepare_process_insert(struct store *s, const char *verb, int rows, sqlite3_stmt **st)
{
	char *sql = process_insert_sql(verb, rows);
	int rc = sql ? prepare(s, sql, st) : -1;

	free(sql);
	return rc;
}

int store_prepare_processes(struct store *s)
{
	/*
	 * A plain INSERT for a row not written yet, INSERT OR REPLACE for the rest.
	 * Several new rows at once are inserted OR IGNORE: a row already there (a
	 * retried transaction) is then skipped without aborting the statement,
	 * which spares SQLite a statement journal, and written again on its own.
	 */
	if (prepare_process_insert(s, "", 1, &s->insert_process) != 0 ||
	    prepare_process_insert(s, " OR REPLACE", 1, &s->put_process) != 0 ||
	    prepare_process_insert(s, " OR IGNORE", PROCESS_BATCH, &s->insert_processes) != 0)
		return -1;
	/* Nothing is bound yet: every parameter HELD_UNKNOWN. */
	if (!(s->batch_params = calloc(1, sizeof(*s->batch_params))))
		return -1;
	/* NULL leaves a column as it is: an update carries the facts it has. */
	if (prepare(s,
		    "UPDATE processes SET cpu_user_ns = coalesce(?2, cpu_user_ns), cpu_sys_ns = "
		    "coalesce(?3, cpu_sys_ns), files_overflow = coalesce(?4, files_overflow), "
		    "oom_killed = coalesce(?5, oom_killed) WHERE id = ?1",
		    &s->update_process) != 0)
		return -1;
	/* run_bound_write() relies on bind_process binding every parameter. */
	if (sqlite3_bind_parameter_count(s->put_process) != PROCESS_COLUMN_COUNT ||
	    sqlite3_bind_parameter_count(s->insert_processes) !=
		PROCESS_BATCH * PROCESS_COLUMN_COUNT)
		return -1;
	return 0;
}

int store_update_process(struct store *s, const struct process_update *u)
{
	sqlite3_stmt *st = s->update_process;

	sqlite3_bind_int64(st, 1, u->id);
	bind_i64_if(st, 2, u->cpu, (int64_t)u->cpu_user_ns);
	bind_i64_if(st, 3, u->cpu, (int64_t)u->cpu_sys_ns);
	bind_i64_if(st, 4, u->late, u->files_overflow);
	bind_i64_if(st, 5, u->late, u->oom_killed);
	return step_done(s, st);
}

int store_forget_process(struct store *s, int64_t id)
{
	char sql[256];

	if (store_withdraw_process(s, id) != 0)
		return -1;

	snprintf(
	    sql, sizeof(sql),
	    "DELETE FROM samples WHERE process_id = %lld; DELETE FROM outbox_held WHERE "
	    "process_id = %lld; DELETE FROM files WHERE process_id = %lld; DELETE FROM processes "
	    "WHERE id = %lld",
	    (long long)id, (long long)id, (long long)id, (long long)id);
	return exec_sql(s->db, sql);
}

/* Identity, program and outcome: the columns every row has. */
static void bind_process_identity(const struct binder *b, int base, const struct process_row *r)
{
	put_int(b, PARAM(id), r->id);
	put_id(b, PARAM(run_id), r->run_id);
	put_id(b, PARAM(parent_id), r->parent_id);
	put_int(b, PARAM(pid), r->pid);
	put_int(b, PARAM(ppid), r->ppid);
	put_int(b, PARAM(image), r->image);
	put_int(b, PARAM(start_ns), r->start_epoch_ns);
	put_id(b, PARAM(end_ns), r->end_epoch_ns);
	put_int(b, PARAM(proc_start_boot_ns), (int64_t)r->proc_start_boot_ns);
	put_text(b, PARAM(boot_id), r->boot_id);
	put_text(b, PARAM(comm), r->comm);
	put_text(b, PARAM(exe), r->exe);
	put_text(b, PARAM(argv), r->argv_json);
	put_int(b, PARAM(argv_truncated), r->argv_truncated);
	put_int(b, PARAM(argv_redactions), r->argv_redactions);
	put_text(b, PARAM(cwd), r->cwd);
	put_int_if(b, PARAM(uid), r->has_ids, (int64_t)r->uid);
	put_int_if(b, PARAM(gid), r->has_ids, (int64_t)r->gid);
	put_int(b, PARAM(cgroup_id), (int64_t)r->cgroup_id);
	put_int(b, PARAM(cgroup1_id), (int64_t)r->cgroup1_id);
	put_text(b, PARAM(state), r->state);
	put_int_if(b, PARAM(exit_code), r->has_exit_code, r->exit_code);
	put_int_if(b, PARAM(signal), r->has_signal, r->signal);
	/* core_dumped: known once the process ended, by a signal or an exit. */
	put_int_if(b, PARAM(core_dumped), r->has_signal || r->has_exit_code,
		   r->has_signal && r->core_dumped);
	put_int(b, PARAM(from_snapshot), r->from_snapshot);
	put_int(b, PARAM(oom_killed), r->oom_killed);
	put_int(b, PARAM(files_overflow), r->files_overflow);
	put_int_if(b, PARAM(killed_by_pid), r->killed_by_pid != 0, r->killed_by_pid);
	put_text(b, PARAM(killed_by_comm), r->killed_by_pid ? r->killed_by_comm : NULL);
}

/* What the image used: NULL without metrics, and for probe groups that were off. */
static void bind_process_metrics(const struct binder *b, int base, const struct process_row *r)
{
	const struct proc_metrics *m = &r->m;
	bool all = r->has_metrics;

	put_int_if(b, PARAM(cpu_user_ns), all, (int64_t)m->cpu_user_ns);
	put_int_if(b, PARAM(cpu_sys_ns), all, (int64_t)m->cpu_sys_ns);
	put_int_if(b, PARAM(max_rss_kb), all && m->has_max_rss, (int64_t)m->max_rss_kb);
	put_int_if(b, PARAM(ru_maxrss_kb), all, (int64_t)m->ru_maxrss_kb);
	put_int_if(b, PARAM(rchar), all, (int64_t)m->rchar);
	put_int_if(b, PARAM(wchar), all, (int64_t)m->wchar);
	put_int_if(b, PARAM(syscr), all, (int64_t)m->syscr);
	put_int_if(b, PARAM(syscw), all, (int64_t)m->syscw);
	put_int_if(b, PARAM(read_bytes), all, (int64_t)m->read_bytes);
	put_int_if(b, PARAM(write_bytes), all, (int64_t)m->write_bytes);
	put_int_if(b, PARAM(cancelled_write_bytes), all, (int64_t)m->cancelled_write_bytes);
	put_int_if(b, PARAM(vol_ctxsw), all, (int64_t)m->vol_ctxsw);
	put_int_if(b, PARAM(invol_ctxsw), all, (int64_t)m->invol_ctxsw);
	put_int_if(b, PARAM(min_faults), all, (int64_t)m->min_faults);
	put_int_if(b, PARAM(maj_faults), all, (int64_t)m->maj_faults);
	put_int_if(b, PARAM(runq_ns), all, (int64_t)m->runq_ns);
	put_int_if(b, PARAM(iowait_ns), all && m->has_iowait, (int64_t)m->iowait_ns);
	put_int_if(b, PARAM(reclaim_ns), all && m->has_reclaim, (int64_t)m->reclaim_ns);
	put_int_if(b, PARAM(net_tx_bytes), all && m->has_net, (int64_t)m->net_tx_bytes);
	put_int_if(b, PARAM(net_rx_bytes), all && m->has_net, (int64_t)m->net_rx_bytes);
	put_int_if(b, PARAM(sys_file), all && m->has_sys, (int64_t)m->sys_file);
	put_int_if(b, PARAM(sys_net), all && m->has_sys, (int64_t)m->sys_net);
	put_int_if(b, PARAM(sys_mem), all && m->has_sys, (int64_t)m->sys_mem);
	put_int_if(b, PARAM(sys_proc), all && m->has_sys, (int64_t)m->sys_proc);
	put_int_if(b, PARAM(sys_other), all && m->has_sys, (int64_t)m->sys_other);
	put_int_if(b, PARAM(sys_failed), all && m->has_sys, (int64_t)m->sys_failed);
#define PUT_NET_WAIT(name) put_int_if(b, PARAM(name), all && m->has_net_wait, (int64_t)m->name);
	NET_WAIT_COUNTERS(PUT_NET_WAIT)
#undef PUT_NET_WAIT
	put_int_if(b, PARAM(net_wait_peer_family), all && m->net_wait_peer_family,
		   (int64_t)m->net_wait_peer_family);
	put_int_if(b, PARAM(net_wait_peer_port), all && m->net_wait_peer_family,
		   (int64_t)m->net_wait_peer_port);
}

/* Where it belongs: run, step, tool, container, Slurm job, systemd unit. */
static void bind_process_context(const struct binder *b, int base, const struct process_row *r)
{
	put_id(b, PARAM(step_id), r->step_id);
	put_id(b, PARAM(tool_id), r->tool_id);
	put_int(b, PARAM(helper), r->helper);
	put_text(b, PARAM(container_runtime), r->container_runtime);
	put_text(b, PARAM(container_id), r->container_id);
	put_text(b, PARAM(pod_uid), r->pod_uid);
	put_text(b, PARAM(slurm_job), r->slurm_job);
	put_text(b, PARAM(slurm_step), r->slurm_step);
	put_text(b, PARAM(systemd_unit), r->systemd_unit);
}

static void bind_process(const struct binder *b, int base, const struct process_row *r)
{
	bind_process_identity(b, base, r);
	bind_process_metrics(b, base, r);
	bind_process_context(b, base, r);
}

int store_put_process(struct store *s, struct process_row *r)
{
	if (!r->stored) {
		/*
		 * A plain INSERT needs no statement journal (INSERT OR REPLACE may
		 * delete, so SQLite keeps one): a third cheaper in an exec storm.
		 */
		bind_process(&(struct binder){s->insert_process, NULL}, 0, r);
		int rc = run_bound_write(s->insert_process);
		if (rc == SQLITE_DONE) {
			r->stored = true;
			return 0;
		}
		if (rc != SQLITE_CONSTRAINT) {
			log_error("sqlite write: %s", sqlite3_errmsg(s->db));
			return rc;
		}
		/* Already there (a retried transaction): replace it below. */
	}
	bind_process(&(struct binder){s->put_process, NULL}, 0, r);
	int rc = step_done(s, s->put_process);
	if (rc == 0)
		r->stored = true;
	return rc;
}

/* Writes a row on its own, then queues it for the shipper. */
static int write_one_process(struct store *s, struct process_row *r, bool ship)
{
	if (store_put_process(s, r) != 0)
		return -1;
	return ship ? store_ship_process(s, r->id) : 0;
}

/* The full batch in one statement; a row skipped as already there is written on its own. */
static int insert_batch(struct store *s)
{
	sqlite3_stmt *st = s->insert_processes;
	struct binder b = {st, s->batch_params};

	for (int i = 0; i < PROCESS_BATCH; i++)
		bind_process(&b, i * PROCESS_COLUMN_COUNT, s->batch[i]);
	int rc = run_bound_write(st);
	if (rc != SQLITE_DONE) {
		log_error("sqlite write: %s", sqlite3_errmsg(s->db));
		return -1;
	}
	bool all = sqlite3_changes(s->db) == PROCESS_BATCH;
	for (int i = 0; i < PROCESS_BATCH; i++) {
		struct process_row *r = s->batch[i];
		r->stored = all;
		if (!all && store_put_process(s, r) != 0)
			return -1;
		if (s->batch_ship[i] && store_ship_process(s, r->id) != 0)
			return -1;
	}
	return 0;
}

int store_flush_processes(struct store *s)
{
	int rc = 0;

	if (s->batch_n == PROCESS_BATCH) {
		rc = insert_batch(s);
	} else {
		for (int i = 0; i < s->batch_n && rc == 0; i++)
			rc = write_one_process(s, s->batch[i], s->batch_ship[i]);
	}
	s->batch_n = 0;
	return rc;
}

void store_drop_processes(struct store *s)
{
	s->batch_n = 0;
}

int store_write_process(struct store *s, struct process_row *r, bool ship)
{
	if (r->stored)
		return write_one_process(s, r, ship);
	s->batch[s->batch_n] = r;
	s->batch_ship[s->batch_n] = ship;
	if (++s->batch_n < PROCESS_BATCH)
		return 0;
	return store_flush_processes(s);
}

int store_first_image_offset(struct store *s, const struct process_row *r, int64_t *offset_ns)
{
	sqlite3_stmt *st;
	int rc = -1;

	if (sqlite3_prepare_v2(s->db,
			       "SELECT start_ns - proc_start_boot_ns FROM processes WHERE pid = ?1 "
			       "AND proc_start_boot_ns = ?2 AND boot_id IS ?3 AND image = 0",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, r->pid);
	bind_u64(st, 2, r->proc_start_boot_ns);
	bind_text_or_null(st, 3, r->boot_id);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		*offset_ns = sqlite3_column_int64(st, 0);
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

/* A running process's row as stored (no end, no metrics yet). */
static void read_running_process(sqlite3_stmt *st, struct process_row *r)
{
#define INT(c) sqlite3_column_int64(st, COL_##c)
	r->stored = true;
	r->id = INT(id);
	r->run_id = INT(run_id);
	r->parent_id = INT(parent_id);
	r->pid = (uint32_t)INT(pid);
	r->ppid = (uint32_t)INT(ppid);
	r->image = (uint32_t)INT(image);
	r->start_epoch_ns = INT(start_ns);
	r->proc_start_boot_ns = (uint64_t)INT(proc_start_boot_ns);
	copy_column(st, COL_boot_id, r->boot_id, sizeof(r->boot_id));
	copy_column(st, COL_comm, r->comm, sizeof(r->comm));
	r->exe = dup_column(st, COL_exe);
	r->argv_json = dup_column(st, COL_argv);
	r->argv_truncated = INT(argv_truncated) != 0;
	r->argv_redactions = (uint32_t)INT(argv_redactions);
	r->cwd = dup_column(st, COL_cwd);
	r->has_ids = sqlite3_column_type(st, COL_uid) != SQLITE_NULL;
	r->uid = (uint32_t)INT(uid);
	r->gid = (uint32_t)INT(gid);
	r->cgroup_id = (uint64_t)INT(cgroup_id);
	r->cgroup1_id = (uint64_t)INT(cgroup1_id);
	r->state = "running";
	r->from_snapshot = INT(from_snapshot) != 0;
	r->oom_killed = INT(oom_killed) != 0;
	r->step_id = INT(step_id);
	r->tool_id = INT(tool_id);
	r->helper = INT(helper) != 0;
#undef INT
}

int store_each_running_process(struct store *s, void (*fn)(void *ctx, struct process_row *r),
			       void *ctx)
{
	char columns[1536], sql[2048];
	sqlite3_stmt *st;
	int rc;

	if (process_column_list(columns, sizeof(columns)) != 0)
		return -1;
	snprintf(sql, sizeof(sql), "SELECT %s FROM processes WHERE state = 'running'", columns);
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct process_row r = {0};
		read_running_process(st, &r);
		fn(ctx, &r);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}
