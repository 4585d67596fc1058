/* Files, OOM kills, cgroups, samples, host samples and losses: rows written as they come. */
#include "aggregator/store/internal.h"

#include <string.h>

static const char sql_put_file[] =
    "INSERT OR REPLACE INTO files (id, process_id, path, access, created, open_flags, result, "
    "count, failed, first_ns, path_truncated) VALUES (?,?,?,?,?,?,?,?,?,?,?)";

static const char sql_update_file[] =
    "UPDATE files SET count = ?2, failed = ?3, open_flags = ?4, "
    "access = CASE ?4 & 3 WHEN 0 THEN 'r' WHEN 1 THEN 'w' ELSE 'rw' END, "
    "created = (?4 & 64) != 0 WHERE id = ?1";

static const char sql_put_oom[] =
    "INSERT INTO oom_kills (ts_ns, process_id, pid, proc_start_boot_ns, boot_id, comm, uid, "
    "total_vm_kb, anon_rss_kb, file_rss_kb, shmem_rss_kb, rss_kb, cgroup_id, cgroup1_id, "
    "memcg_limit_kb, memcg_usage_kb, oom_score_adj) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

static const char sql_put_cgroup[] =
    "INSERT INTO cgroups (boot_id, hierarchy, id, controllers, path, level, created_ns, "
    "removed_ns) VALUES (?1,?2,?3,?4,?5,?6,?7,?8) ON CONFLICT (boot_id, hierarchy, id) DO UPDATE "
    "SET controllers = coalesce(excluded.controllers, controllers), "
    "path = coalesce(excluded.path, path), level = coalesce(excluded.level, level), "
    "created_ns = coalesce(created_ns, excluded.created_ns), "
    "removed_ns = coalesce(excluded.removed_ns, removed_ns)";

static const char sql_put_sample[] =
    "INSERT OR REPLACE INTO samples (process_id, ts_ns, cpu_user_ns, cpu_sys_ns, rss_kb, rchar, "
    "wchar, read_bytes, write_bytes, runq_ns, iowait_ns, net_tx_bytes, net_rx_bytes, vol_ctxsw, "
    "invol_ctxsw, state, threads) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

static const char sql_put_host[] =
    "INSERT OR REPLACE INTO host_samples (ts_ns, interval_ns, host_id, cpus, cpu_busy_pct, "
    "cpu_user_pct, cpu_system_pct, cpu_iowait_pct, cpu_steal_pct, load1, mem_total_kb, "
    "mem_available_kb, swap_used_kb, disk_read_bytes, disk_write_bytes, net_rx_bytes, "
    "net_tx_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

static const char sql_put_energy[] =
    "INSERT OR REPLACE INTO energy_samples (ts_ns, host_id, zone, name, energy_uj, "
    "max_energy_range_uj) VALUES (?,?,?,?,?,?)";

static const char sql_put_loss[] =
    "INSERT OR REPLACE INTO event_loss (stream_id, hop, event_type, count) VALUES (?,?,?,?)";

int store_prepare_telemetry(struct store *s)
{
	return prepare(s, sql_put_file, &s->put_file) ||
		       prepare(s, sql_update_file, &s->update_file) ||
		       prepare(s, sql_put_oom, &s->put_oom) ||
		       prepare(s, sql_put_cgroup, &s->put_cgroup) ||
		       prepare(s, sql_put_sample, &s->put_sample) ||
		       prepare(s, sql_put_host, &s->put_host) ||
		       prepare(s, sql_put_energy, &s->put_energy) ||
		       prepare(s, sql_put_loss, &s->put_loss)
		   ? -1
		   : 0;
}

static const char *access_of(uint32_t flags)
{
	switch (flags & 3) {
	case 0:
		return "r";
	case 1:
		return "w";
	default:
		return "rw";
	}
}

int store_put_file(struct store *s, const struct file_row *r)
{
	sqlite3_stmt *st = s->put_file;
	int i = 1;

	sqlite3_bind_int64(st, i++, r->id);
	sqlite3_bind_int64(st, i++, r->process_id);
	sqlite3_bind_text(st, i++, r->path ? r->path : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, i++, access_of(r->open_flags), -1, SQLITE_STATIC);
	sqlite3_bind_int(st, i++, (r->open_flags & 0100) != 0);
	sqlite3_bind_int64(st, i++, r->open_flags);
	sqlite3_bind_int(st, i++, r->result);
	sqlite3_bind_int64(st, i++, r->count);
	sqlite3_bind_int64(st, i++, r->failed);
	sqlite3_bind_int64(st, i++, r->first_epoch_ns);
	sqlite3_bind_int(st, i++, r->truncated);
	return step_done(s, st);
}

int store_update_file_counts(struct store *s, int64_t id, uint32_t count, uint32_t failed,
			     uint32_t flags)
{
	sqlite3_stmt *st = s->update_file;

	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, count);
	sqlite3_bind_int64(st, 3, failed);
	sqlite3_bind_int64(st, 4, flags);
	return step_done(s, st);
}

int store_put_oom(struct store *s, const struct oom_row *r)
{
	sqlite3_stmt *st = s->put_oom;
	int i = 1;

	sqlite3_bind_int64(st, i++, r->ts_epoch_ns);
	bind_id_or_null(st, i++, r->process_id);
	sqlite3_bind_int64(st, i++, r->pid);
	bind_u64(st, i++, r->proc_start_boot_ns);
	bind_text_or_null(st, i++, r->boot_id);
	bind_text_or_null(st, i++, r->comm);
	sqlite3_bind_int64(st, i++, r->uid);
	bind_u64(st, i++, r->total_vm_kb);
	bind_u64(st, i++, r->anon_rss_kb);
	bind_u64(st, i++, r->file_rss_kb);
	bind_u64(st, i++, r->shmem_rss_kb);
	bind_u64(st, i++, r->anon_rss_kb + r->file_rss_kb + r->shmem_rss_kb);
	bind_u64(st, i++, r->cgroup_id);
	bind_u64(st, i++, r->cgroup1_id);
	if (r->memcg_limit_kb)
		bind_u64(st, i++, r->memcg_limit_kb);
	else
		sqlite3_bind_null(st, i++);
	bind_u64(st, i++, r->memcg_usage_kb);
	sqlite3_bind_int(st, i++, r->oom_score_adj);
	return step_done(s, st);
}

int store_put_cgroup(struct store *s, const struct cgroup_row *r)
{
	sqlite3_stmt *st = s->put_cgroup;
	int i = 1;

	sqlite3_bind_text(st, i++, r->boot_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, i++, r->hierarchy);
	bind_u64(st, i++, r->id);
	bind_text_or_null(st, i++, r->controllers);
	bind_text_or_null(st, i++, r->path);
	sqlite3_bind_int64(st, i++, r->level);
	bind_id_or_null(st, i++, r->created_epoch_ns);
	bind_id_or_null(st, i++, r->removed_epoch_ns);
	return step_done(s, st);
}

int store_put_sample(struct store *s, const struct sample_row *r)
{
	sqlite3_stmt *st = s->put_sample;
	int i = 1;

	sqlite3_bind_int64(st, i++, r->process_id);
	sqlite3_bind_int64(st, i++, r->ts_epoch_ns);
	uint64_t v[] = {r->cpu_user_ns, r->cpu_sys_ns,	 r->rss_kb,	  r->rchar,
			r->wchar,	r->read_bytes,	 r->write_bytes,  r->runq_ns,
			r->iowait_ns,	r->net_tx_bytes, r->net_rx_bytes, r->vol_ctxsw,
			r->invol_ctxsw};
	bool have[] = {true, true,	    true,	true,	    true, true, true,
		       true, r->has_iowait, r->has_net, r->has_net, true, true};
	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
		if (have[k])
			bind_u64(st, i++, v[k]);
		else
			sqlite3_bind_null(st, i++);
	}
	bind_text_or_null(st, i++, r->state);
	sqlite3_bind_int64(st, i++, r->threads);
	return step_done(s, st);
}

int store_put_host_sample(struct store *s, const struct host_sample_row *r)
{
	sqlite3_stmt *st = s->put_host;
	int i = 1;

	sqlite3_bind_int64(st, i++, r->ts_epoch_ns);
	sqlite3_bind_int64(st, i++, r->interval_ns);
	bind_text_or_null(st, i++, r->host_id);
	sqlite3_bind_int64(st, i++, r->cpus);
	sqlite3_bind_double(st, i++, r->cpu_busy_pct);
	sqlite3_bind_double(st, i++, r->cpu_user_pct);
	sqlite3_bind_double(st, i++, r->cpu_system_pct);
	sqlite3_bind_double(st, i++, r->cpu_iowait_pct);
	sqlite3_bind_double(st, i++, r->cpu_steal_pct);
	sqlite3_bind_double(st, i++, r->load1);
	bind_u64(st, i++, r->mem_total_kb);
	bind_u64(st, i++, r->mem_available_kb);
	bind_u64(st, i++, r->swap_used_kb);
	bind_u64(st, i++, r->disk_read_bytes);
	bind_u64(st, i++, r->disk_write_bytes);
	bind_u64(st, i++, r->net_rx_bytes);
	bind_u64(st, i++, r->net_tx_bytes);
	return step_done(s, st);
}

int store_put_energy_sample(struct store *s, const struct energy_sample_row *r)
{
	sqlite3_stmt *st = s->put_energy;

	sqlite3_bind_int64(st, 1, r->ts_epoch_ns);
	sqlite3_bind_text(st, 2, r->host_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, r->zone);
	bind_text_or_null(st, 4, r->name[0] ? r->name : NULL);
	bind_u64(st, 5, r->energy_uj);
	if (r->has_max_range)
		bind_u64(st, 6, r->max_range_uj);
	else
		sqlite3_bind_null(st, 6);
	return step_done(s, st);
}

int store_put_loss(struct store *s, const char *stream_id, const char *hop, const char *type,
		   uint64_t count)
{
	sqlite3_stmt *st = s->put_loss;

	sqlite3_bind_text(st, 1, stream_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, hop, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, type, -1, SQLITE_TRANSIENT);
	bind_u64(st, 4, count);
	return step_done(s, st);
}

int store_each_cgroup(struct store *s, const char *boot_id,
		      void (*fn)(void *ctx, uint64_t id, bool v1_memory, const char *path),
		      void *ctx)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(
		s->db,
		"SELECT id, controllers = 'memory', path FROM cgroups WHERE boot_id = ? "
		"AND (hierarchy = 0 OR controllers = 'memory')",
		-1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, boot_id, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *path = sqlite3_column_text(st, 2);
		if (path)
			fn(ctx, (uint64_t)sqlite3_column_int64(st, 0),
			   sqlite3_column_int(st, 1) != 0, (const char *)path);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}
