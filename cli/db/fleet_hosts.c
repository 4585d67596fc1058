/*
 * The per-host breakdown of a run read from the fleet store whose batch jobs ran on
 * other hosts (fleet_merge.c fills fleet_hosts): for show's text and --json and the
 * report's data. Nothing for a run that is whole on its host.
 */
#include <stdio.h>
#include <string.h>

#include "cli/db/fleet.h"
#include "cli/render/format.h"
#include "cli/db/rows.h"

static bool temp_table(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;
	bool made = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_temp_master WHERE name = ?1", -1, &st,
			       NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	made = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return made;
}

void fleet_job_parents_add(sqlite3 *db, json_t *jobs)
{
	sqlite3_stmt *st;
	size_t i;
	json_t *j;

	if (!fleet_active() || !temp_table(db, "fleet_job_parents") ||
	    sqlite3_prepare_v2(
		db,
		"SELECT fleet_link, fleet_run, fleet_candidates FROM fleet_job_parents "
		"WHERE job_id = ?1",
		-1, &st, NULL) != SQLITE_OK)
		return;
	json_array_foreach(jobs, i, j)
	{
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, json_string_value(json_object_get(j, "job_id_raw")), -1,
				  SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_ROW)
			continue;
		const char *run = (const char *)sqlite3_column_text(st, 1);
		json_object_set_new(j, "fleet_link",
				    json_string((const char *)sqlite3_column_text(st, 0)));
		json_object_set_new(j, "fleet_run", run ? json_string(run) : json_null());
		json_object_set_new(j, "fleet_candidates", json_integer(sqlite3_column_int(st, 2)));
	}
	sqlite3_finalize(st);
}

json_t *fleet_hosts_json(sqlite3 *db)
{
	if (!fleet_active() || !temp_table(db, "fleet_hosts"))
		return NULL;
	return cli_rows_json(db,
			     "SELECT host, hostname, head, jobs, processes, cpu_ns, peak_rss_kb "
			     "FROM fleet_hosts WHERE ?1 = ?1 ORDER BY head DESC, host",
			     0);
}
