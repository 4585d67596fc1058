/* Container links: which run and step started a container, and how that was told. */
#include "aggregator/store/internal.h"

static const char sql_put_link[] =
    "INSERT OR REPLACE INTO container_links (id, boot_id, container_id, runtime, engine, "
    "first_process_id, first_start_ns, run_id, step_id, launcher_process_id, launcher_pid, "
    "method, image, command, candidates, first_exec_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

static const char sql_put_candidate[] =
    "INSERT OR REPLACE INTO container_link_candidates (link_id, launcher_pid, run_id, step_id, "
    "launcher_process_id) VALUES (?,?,?,?,?)";

int store_prepare_containers(struct store *s)
{
	return prepare(s, sql_put_link, &s->put_container_link) ||
	       prepare(s, sql_put_candidate, &s->put_container_candidate);
}

static void bind_link(sqlite3_stmt *st, const struct container_link_row *r)
{
	sqlite3_bind_int64(st, 1, r->id);
	sqlite3_bind_text(st, 2, r->boot_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, r->container_id, -1, SQLITE_STATIC);
	bind_text_or_null(st, 4, r->runtime[0] ? r->runtime : NULL);
	bind_text_or_null(st, 5, r->engine[0] ? r->engine : NULL);
	bind_id_or_null(st, 6, r->first_process_id);
	sqlite3_bind_int64(st, 7, r->first_start_epoch_ns);
	bind_id_or_null(st, 8, r->run_id);
	bind_id_or_null(st, 9, r->step_id);
	bind_id_or_null(st, 10, r->launcher_process_id);
	bind_id_or_null(st, 11, r->launcher_pid);
	sqlite3_bind_text(st, 12, r->method, -1, SQLITE_STATIC);
	bind_text_or_null(st, 13, r->image);
	bind_text_or_null(st, 14, r->command_json);
	sqlite3_bind_int64(st, 15, r->candidates);
	bind_i64_if(st, 16, r->first_exec_epoch_ns != 0, r->first_exec_epoch_ns);
}

int store_put_container_link(struct store *s, const struct container_link_row *r,
			     const struct container_link_candidate *cands, size_t n)
{
	bind_link(s->put_container_link, r);
	if (step_done(s, s->put_container_link) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		sqlite3_stmt *st = s->put_container_candidate;
		sqlite3_bind_int64(st, 1, r->id);
		sqlite3_bind_int64(st, 2, cands[i].launcher_pid);
		bind_id_or_null(st, 3, cands[i].run_id);
		bind_id_or_null(st, 4, cands[i].step_id);
		bind_id_or_null(st, 5, cands[i].launcher_process_id);
		if (step_done(s, st) != 0)
			return -1;
	}
	return 0;
}
