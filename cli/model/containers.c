#include "cli/model/containers.h"

#include <string.h>

#include "cli/db/rows.h"
#include "cli/render/jsonfield.h"

static const char containers_sql[] =
    "SELECT l.container_id, l.runtime, l.engine, l.image, l.command, l.method, l.run_id,"
    " l.step_id, s.name AS step_name, l.candidates, l.first_start_ns, l.launcher_process_id,"
    " (SELECT json_group_array(c.run_id) FROM container_link_candidates c"
    "  WHERE c.link_id = l.id AND (c.run_id IS NULL OR c.run_id != ?1)) AS other_runs"
    " FROM container_links l LEFT JOIN steps s ON s.id = l.step_id"
    " WHERE l.run_id = ?1 OR (l.method = 'ambiguous' AND l.id IN"
    "  (SELECT link_id FROM container_link_candidates WHERE run_id = ?1))"
    " ORDER BY l.first_start_ns, l.id";

/* A JSON-text column as JSON. */
static void parse_column(json_t *row, const char *key)
{
	const char *text = json_string_value(json_object_get(row, key));
	json_t *v = text ? json_loads(text, 0, NULL) : NULL;

	if (v)
		json_object_set_new(row, key, v);
}

json_t *containers_of_run(sqlite3 *db, int64_t run_id)
{
	sqlite3_stmt *probe;

	/* A database from before schema v14 has no links: none to show. */
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM container_links LIMIT 0", -1, &probe, NULL) !=
	    SQLITE_OK)
		return json_array();
	sqlite3_finalize(probe);
	json_t *rows = cli_rows_json(db, containers_sql, run_id);
	if (!rows)
		return json_array();
	for (size_t i = 0; i < json_array_size(rows); i++) {
		json_t *row = json_array_get(rows, i);
		parse_column(row, "command");
		parse_column(row, "other_runs");
		json_object_set_new(row, "ambiguous",
				    json_boolean(!strcmp(jstr(row, "method"), "ambiguous")));
	}
	return rows;
}

int64_t containers_unlinked_clis(sqlite3 *db, int64_t run_id)
{
	sqlite3_stmt *q;
	int64_t n = 0;

	if (sqlite3_prepare_v2(
		db,
		"SELECT count(*) FROM processes p WHERE p.run_id = ?1 AND (p.exe LIKE '%/docker' "
		"OR "
		"p.exe LIKE '%/podman' OR p.exe LIKE '%/nerdctl') AND p.argv IS NOT NULL AND "
		"EXISTS (SELECT 1 FROM json_each(p.argv) WHERE value = 'run') AND p.id NOT IN "
		"(SELECT launcher_process_id FROM container_link_candidates WHERE "
		"launcher_process_id IS NOT NULL)",
		-1, &q, NULL) != SQLITE_OK)
		return 0; /* before schema v14 */
	sqlite3_bind_int64(q, 1, run_id);
	if (sqlite3_step(q) == SQLITE_ROW)
		n = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return n;
}

const char *containers_failed_opens_sql(sqlite3 *db)
{
	sqlite3_stmt *probe;

	if (sqlite3_prepare_v2(db, "SELECT first_exec_ns FROM container_links LIMIT 0", -1, &probe,
			       NULL) != SQLITE_OK)
		return "SELECT path, result FROM files WHERE process_id = ?1 AND failed > 0 "
		       "ORDER BY first_ns DESC";
	sqlite3_finalize(probe);
	return "SELECT f.path, f.result FROM files f WHERE f.process_id = ?1 AND f.failed > 0 "
	       "AND NOT EXISTS (SELECT 1 FROM container_links l WHERE l.first_process_id = ?1 "
	       "AND f.first_ns < l.first_exec_ns) ORDER BY f.first_ns DESC";
}
