#include "cli/cost/energymeasure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/db/rows.h"
#include "cli/render/jsonfield.h"

#define MAX_READINGS 100000 /* a zone's readings over one span: 27 h at 1 s */

double rapl_joules(const struct rapl_reading *r, size_t n, unsigned *unknown_wraps)
{
	double uj = 0;

	for (size_t i = 1; i < n; i++) {
		uint64_t a = r[i - 1].energy_uj, b = r[i].energy_uj;
		uint64_t range = r[i].max_range_uj ? r[i].max_range_uj : r[i - 1].max_range_uj;
		if (b >= a)
			uj += (double)(b - a);
		else if (range && a <= range)
			uj += (double)(range - a) + (double)b + 1; /* a, ..., range, 0, ..., b */
		else
			(*unknown_wraps)++;
	}
	return uj / 1e6;
}

/* The packages' readings from the last at or before from to the first at or after to. */
static const char sql_readings[] =
    "SELECT zone, ts_ns, energy_uj, coalesce(max_energy_range_uj, 0) FROM energy_samples"
    " WHERE host_id = ?1 AND (name IS NULL OR name LIKE 'package%')"
    " AND ts_ns >= coalesce((SELECT max(ts_ns) FROM energy_samples WHERE host_id = ?1"
    " AND ts_ns <= ?2), ?2)"
    " AND ts_ns <= coalesce((SELECT min(ts_ns) FROM energy_samples WHERE host_id = ?1"
    " AND ts_ns >= ?3), ?3) ORDER BY zone, ts_ns";

/* Busy CPU-seconds of the host samples' intervals, clipped to [a, b]. */
static double host_cpu_s(sqlite3 *db, const char *host_id, int64_t a, int64_t b)
{
	sqlite3_stmt *st;
	double cpu = 0;

	if (sqlite3_prepare_v2(db,
			       "SELECT ts_ns, interval_ns, cpu_busy_pct, cpus FROM host_samples"
			       " WHERE ts_ns > ?2 AND ts_ns - interval_ns < ?3"
			       " AND (?1 = '' OR coalesce(host_id, '') IN ('', ?1))",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, host_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, a);
	sqlite3_bind_int64(st, 3, b);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t end = sqlite3_column_int64(st, 0), len = sqlite3_column_int64(st, 1);
		int64_t x = end - len > a ? end - len : a, y = end < b ? end : b;
		if (y > x)
			cpu += sqlite3_column_double(st, 2) / 100.0 * sqlite3_column_double(st, 3) *
			       (double)(y - x) / 1e9;
	}
	sqlite3_finalize(st);
	return cpu;
}

/* One zone's readings (rows from *row on with its zone) into out; how many. */
static size_t zone_readings(sqlite3_stmt *st, int *more, struct rapl_reading *out)
{
	int zone = sqlite3_column_int(st, 0);
	size_t n = 0;

	do {
		if (n < MAX_READINGS)
			out[n++] = (struct rapl_reading){
			    .ts_ns = sqlite3_column_int64(st, 1),
			    .energy_uj = (uint64_t)sqlite3_column_int64(st, 2),
			    .max_range_uj = (uint64_t)sqlite3_column_int64(st, 3)};
		*more = sqlite3_step(st) == SQLITE_ROW;
	} while (*more && sqlite3_column_int(st, 0) == zone);
	return n;
}

static int read_zones(sqlite3 *db, const char *host_id, int64_t from, int64_t to,
		      struct energy_measured *m)
{
	sqlite3_stmt *st;
	struct rapl_reading *r = malloc(MAX_READINGS * sizeof(*r));

	if (!r || sqlite3_prepare_v2(db, sql_readings, -1, &st, NULL) != SQLITE_OK) {
		free(r);
		return -1;
	}
	sqlite3_bind_text(st, 1, host_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, from);
	sqlite3_bind_int64(st, 3, to);
	int more = sqlite3_step(st) == SQLITE_ROW;
	while (more) {
		size_t n = zone_readings(st, &more, r);
		if (n < 2)
			continue;
		m->joules += rapl_joules(r, n, &m->unknown_wraps);
		m->zones++;
		if (m->zones == 1 || r[0].ts_ns < m->from_ns)
			m->from_ns = r[0].ts_ns;
		if (m->zones == 1 || r[n - 1].ts_ns > m->to_ns)
			m->to_ns = r[n - 1].ts_ns;
	}
	sqlite3_finalize(st);
	free(r);
	return 0;
}

int rapl_measure(sqlite3 *db, const char *host_id, int64_t from, int64_t to, double run_cpu_s,
		 struct energy_measured *out)
{
	memset(out, 0, sizeof(*out));
	if (read_zones(db, host_id, from, to, out) != 0)
		return -1;
	if (!out->zones)
		return 0;
	int64_t a = out->from_ns > from ? out->from_ns : from,
		b = out->to_ns < to ? out->to_ns : to;
	bool brackets = out->from_ns <= from && out->to_ns >= to;
	if (!brackets && (double)(b - a) < 0.9 * (double)(to - from))
		return 0;
	out->host_cpu_s = host_cpu_s(db, host_id, out->from_ns, out->to_ns);
	double share_by = out->host_cpu_s > run_cpu_s ? out->host_cpu_s : run_cpu_s;
	out->watts_per_cpu_s = share_by > 0 ? out->joules / share_by : 0;
	return 1;
}

json_t *rapl_runs(sqlite3 *db, int64_t run, int64_t from, int64_t to)
{
	json_t *rows = cli_rows_json(db,
				     "SELECT id, coalesce(host_id, '') AS host_id, start_ns,"
				     " coalesce(end_ns, start_ns) AS end_ns, coalesce(cpu_ns, 0) AS"
				     " cpu_ns FROM runs WHERE (?1 != 0 AND id = ?1) OR (?1 = 0 AND"
				     " EXISTS (SELECT 1 FROM energy_samples))",
				     run);
	json_t *out = json_object(), *r;
	size_t i;
	char id[24];

	if (!rows)
		return out;
	json_array_foreach(rows, i, r)
	{
		struct energy_measured m;
		int64_t a = jint(r, "start_ns"), b = jint(r, "end_ns");
		if (!run && (b < from || a > to))
			continue;
		if (rapl_measure(db, jstr(r, "host_id"), a, b, (double)jint(r, "cpu_ns") / 1e9,
				 &m) != 1)
			continue;
		snprintf(id, sizeof(id), "%lld", (long long)jint(r, "id"));
		json_object_set_new(out, id,
				    json_pack("{s:f, s:f, s:f, s:I, s:I, s:i}", "joules", m.joules,
					      "host_cpu_s", m.host_cpu_s, "watts_per_cpu_second",
					      m.watts_per_cpu_s, "from_ns", (json_int_t)m.from_ns,
					      "to_ns", (json_int_t)m.to_ns, "zones", (int)m.zones));
	}
	json_decref(rows);
	return out;
}
