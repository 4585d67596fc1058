/*
 * The per-host breakdown of a run read from the fleet store whose batch jobs ran on
 * other hosts (fleet_merge.c fills fleet_hosts): for show's text and --json and the
 * report's data. Nothing for a run that is whole on its host.
 */
#include <stdio.h>
#include <string.h>

#include "cli/fleet.h"
#include "cli/format.h"
#include "cli/rows.h"

json_t *fleet_hosts_json(sqlite3 *db)
{
	sqlite3_stmt *st;
	bool made = false;

	if (!fleet_active() ||
	    sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_temp_master WHERE name = 'fleet_hosts'",
			       -1, &st, NULL) != SQLITE_OK)
		return NULL;
	made = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	if (!made)
		return NULL;
	return cli_rows_json(db,
			     "SELECT host, hostname, head, jobs, processes, cpu_ns, peak_rss_kb "
			     "FROM fleet_hosts WHERE ?1 = ?1 ORDER BY head DESC, host",
			     0);
}

void fleet_hosts_print(FILE *out, json_t *hosts)
{
	size_t i;
	json_t *h;

	if (!json_array_size(hosts))
		return;
	fprintf(out, "\nHosts of this run (peak memory: the most one host held):\n");
	fprintf(out, "  %-20s %-16s %-4s %5s %9s %10s %9s\n", "HOST", "HOSTNAME", "ROLE", "JOBS",
		"PROCESSES", "CPU", "PEAK MEM");
	json_array_foreach(hosts, i, h)
	{
		char cpu[32], mem[32];
		const char *name = json_string_value(json_object_get(h, "hostname"));
		format_duration(json_integer_value(json_object_get(h, "cpu_ns")), cpu, sizeof(cpu));
		format_bytes((uint64_t)json_integer_value(json_object_get(h, "peak_rss_kb")) * 1024,
			     mem, sizeof(mem));
		fprintf(out, "  %-20.20s %-16.16s %-4s %5lld %9lld %10s %9s\n",
			json_string_value(json_object_get(h, "host")), name ? name : "-",
			json_integer_value(json_object_get(h, "head")) ? "head" : "jobs",
			(long long)json_integer_value(json_object_get(h, "jobs")),
			(long long)json_integer_value(json_object_get(h, "processes")), cpu, mem);
	}
}
