/*
 * The RAPL readings a fleet verb needs (docs/energy.md, "RAPL"): for each run loaded, its
 * host's energy_samples from the last reading at or before the run's start to the first at
 * or after its end, the same bracket `tracer energy` takes on the host, and the host
 * samples over those readings (the busy CPU it shares them by). A fleet store whose
 * shippers predate energy_samples has no such table: nothing is copied, energy is estimated.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/db/fleet.h"
#include "cli/db/fleet_join.h"
#include "cli/render/clierror.h"
#include "cli/render/jsonfield.h"

/* Whether the store has the table (asked once per process). -1: the store did not answer. */
static int store_has_energy_samples(const char *verb)
{
	static int known = -1;
	char sql[512];

	if (known >= 0)
		return known;
	snprintf(
	    sql, sizeof(sql),
	    "SELECT toUInt8(count() > 0) AS n FROM system.tables WHERE database = '%s' AND name = "
	    "'energy_samples' FORMAT JSONEachRow",
	    fleet_database());
	json_t *rows = fleet_rows_of(verb, sql);
	if (!rows)
		return -1;
	known = jint(json_array_get(rows, 0), "n") > 0;
	json_decref(rows);
	return known;
}

/* One run's bracket of readings (host_id: its runs row's, quoted) and the host samples
 * over it, as energymeasure.c selects them. 0, or -1 said why. */
static int copy_bracket(sqlite3 *db, const char *verb, const char *h, const char *host_id,
			int64_t from, int64_t to)
{
	char lo[1400], hi[1400], where[4096];
	const char *d = fleet_database();

	snprintf(
	    lo, sizeof(lo),
	    "(SELECT if(count() = 0, toInt64(%" PRId64 "), toInt64(assumeNotNull(max(ts_ns)))) "
	    "FROM `%s`.energy_samples WHERE _host = %s AND host_id = %s AND ts_ns <= %" PRId64 ")",
	    from, d, h, host_id, from);
	snprintf(
	    hi, sizeof(hi),
	    "(SELECT if(count() = 0, toInt64(%" PRId64 "), toInt64(assumeNotNull(min(ts_ns)))) "
	    "FROM `%s`.energy_samples WHERE _host = %s AND host_id = %s AND ts_ns >= %" PRId64 ")",
	    to, d, h, host_id, to);
	snprintf(where, sizeof(where),
		 "_host = %s AND host_id = %s AND ts_ns >= %s AND ts_ns <= %s", h, host_id, lo, hi);
	long n = fleet_copy_rows(db, verb, "energy_samples", "energy_samples", where);
	if (n <= 0)
		return n < 0 ? -1 : 0;
	/* host_cpu_s: the samples whose interval overlaps the readings' span */
	snprintf(where, sizeof(where), "_host = %s AND ts_ns > %s AND ts_ns - interval_ns < %s", h,
		 lo, hi);
	return fleet_copy_rows(db, verb, "host_samples", "host_samples", where) < 0 ? -1 : 0;
}

int fleet_load_energy(sqlite3 *db, const char *verb, const char *host)
{
	char h[300], host_id[300];
	sqlite3_stmt *st;
	int rc = store_has_energy_samples(verb);

	if (rc <= 0)
		return rc;
	rc = 0;
	fleet_quote(host, h, sizeof(h));
	if (sqlite3_prepare_v2(db,
			       "SELECT coalesce(host_id, ''), start_ns, coalesce(end_ns, start_ns) "
			       "FROM runs ORDER BY start_ns",
			       -1, &st, NULL) != SQLITE_OK) {
		cli_error(verb, "the runs read: %s\n", sqlite3_errmsg(db));
		return -1;
	}
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		fleet_quote((const char *)sqlite3_column_text(st, 0), host_id, sizeof(host_id));
		rc = copy_bracket(db, verb, h, host_id, sqlite3_column_int64(st, 1),
				  sqlite3_column_int64(st, 2));
	}
	sqlite3_finalize(st);
	return rc;
}
