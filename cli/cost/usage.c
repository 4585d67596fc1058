#include "cli/cost/usage.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/hostinfo.h"

#define GIB_KB (1024.0 * 1024.0)

struct sample_point {
	int64_t ts;
	double cpu_s, rss_gib;
};

/* Cumulative CPU at time t from the process's samples (linear in between). */
static double cpu_at(const struct sample_point *s, size_t n, int64_t start, double total,
		     int64_t end, int64_t t)
{
	int64_t prev_t = start;
	double prev_c = 0;

	for (size_t i = 0; i <= n; i++) {
		int64_t nt = i < n ? s[i].ts : end;
		double nc = i < n ? s[i].cpu_s : total;
		if (t <= nt) {
			if (nt <= prev_t)
				return nc;
			return prev_c +
			       (nc - prev_c) * (double)(t - prev_t) / (double)(nt - prev_t);
		}
		prev_t = nt;
		prev_c = nc;
	}
	return total;
}

static void finish(struct process_usage *u, const struct sample_point *s, size_t n, int64_t start,
		   int64_t end, double total_cpu, double peak_gib, int64_t from, int64_t to,
		   void (*fn)(const struct process_usage *, void *), void *ctx)
{
	int64_t a = start > from ? start : from, b = end < to ? end : to;

	if (b <= a && !(start >= from && end <= to))
		return;
	if (b < a)
		b = a;
	u->cpu_s = cpu_at(s, n, start, total_cpu, end, b) - cpu_at(s, n, start, total_cpu, end, a);
	if (u->cpu_s < 0)
		u->cpu_s = 0;
	u->mem_gib_s = 0;
	if (n == 0) {
		u->mem_gib_s = peak_gib * (double)(b - a) / 1e9;
	} else {
		/* Before the first sample: its first RSS; each sample holds until the next. */
		for (size_t i = 0; i <= n; i++) {
			int64_t seg_a = i == 0 ? start : s[i - 1].ts;
			int64_t seg_b = i < n ? s[i].ts : end;
			double rss = i == 0 ? s[0].rss_gib : s[i - 1].rss_gib;
			int64_t x = seg_a > a ? seg_a : a, y = seg_b < b ? seg_b : b;
			if (y > x)
				u->mem_gib_s += rss * (double)(y - x) / 1e9;
		}
	}
	fn(u, ctx);
}

static void copy_text(char *dst, size_t size, sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	snprintf(dst, size, "%s", t ? (const char *)t : "");
}

int usage_scan(sqlite3 *db, int64_t from_ns, int64_t to_ns, int64_t only_run,
	       void (*fn)(const struct process_usage *u, void *ctx), void *ctx)
{
	/* Processes alive in the window, each with its samples (in order), in one pass. */
	const char *sql =
	    "SELECT p.id, p.run_id, p.step_id, p.uid, p.gid, r.name, r.pipeline, s.name, t.name,"
	    " c.memory_cgroup_path, p.start_ns,"
	    " coalesce(p.end_ns, (SELECT max(ts_ns) FROM samples x WHERE x.process_id = p.id),"
	    " p.start_ns),"
	    " coalesce(p.cpu_user_ns + p.cpu_sys_ns, (SELECT max(cpu_user_ns + cpu_sys_ns) FROM"
	    " samples x WHERE x.process_id = p.id), 0), coalesce(p.max_rss_kb, 0),"
	    " m.ts_ns, m.cpu_user_ns + m.cpu_sys_ns, m.rss_kb"
	    " FROM processes p LEFT JOIN runs r ON r.id = p.run_id LEFT JOIN steps s ON s.id ="
	    " p.step_id LEFT JOIN tools t ON t.id = p.tool_id LEFT JOIN process_cgroups c ON"
	    " c.process_id = p.id LEFT JOIN samples m ON m.process_id = p.id"
	    " WHERE p.start_ns <= ?2 AND (p.end_ns IS NULL OR p.end_ns >= ?1) AND (?3 = 0 OR"
	    " p.run_id = ?3) ORDER BY p.id, m.ts_ns";
	sqlite3_stmt *st;
	struct sample_point pts[4096];
	size_t n = 0;
	struct process_usage u;
	int64_t cur = 0, start = 0, end = 0;
	double total_cpu = 0, peak = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, from_ns);
	sqlite3_bind_int64(st, 2, to_ns);
	sqlite3_bind_int64(st, 3, only_run);
	memset(&u, 0, sizeof(u));
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		if (id != cur) {
			if (cur)
				finish(&u, pts, n, start, end, total_cpu, peak, from_ns, to_ns, fn,
				       ctx);
			memset(&u, 0, sizeof(u));
			cur = id;
			n = 0;
			u.process_id = id;
			u.run_id = sqlite3_column_int64(st, 1);
			u.step_id = sqlite3_column_int64(st, 2);
			u.uid = (uint32_t)sqlite3_column_int64(st, 3);
			u.gid = (uint32_t)sqlite3_column_int64(st, 4);
			copy_text(u.run, sizeof(u.run), st, 5);
			copy_text(u.pipeline, sizeof(u.pipeline), st, 6);
			copy_text(u.step, sizeof(u.step), st, 7);
			copy_text(u.tool, sizeof(u.tool), st, 8);
			copy_text(u.memory_cgroup, sizeof(u.memory_cgroup), st, 9);
			start = sqlite3_column_int64(st, 10);
			end = sqlite3_column_int64(st, 11);
			total_cpu = (double)sqlite3_column_int64(st, 12) / 1e9;
			peak = (double)sqlite3_column_int64(st, 13) / GIB_KB;
		}
		if (sqlite3_column_type(st, 14) != SQLITE_NULL) {
			/* Long-lived processes: keep every 2nd point once full (coarser, same
			 * total). */
			if (n == sizeof(pts) / sizeof(*pts)) {
				for (size_t i = 0; i < n / 2; i++)
					pts[i] = pts[2 * i + 1];
				n /= 2;
			}
			pts[n].ts = sqlite3_column_int64(st, 14);
			pts[n].cpu_s = (double)sqlite3_column_int64(st, 15) / 1e9;
			pts[n].rss_gib = (double)sqlite3_column_int64(st, 16) / GIB_KB;
			n++;
		}
	}
	if (cur)
		finish(&u, pts, n, start, end, total_cpu, peak, from_ns, to_ns, fn, ctx);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* Whether a collector of this machine (its machine id) recorded the database. */
static bool recorded_here(sqlite3 *db)
{
	char id[64];
	sqlite3_stmt *st;
	bool here = false;

	read_host_id(id, sizeof(id));
	if (!id[0] || sqlite3_prepare_v2(db, "SELECT 1 FROM collector_stats WHERE host_id = ?1", -1,
					 &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	here = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return here;
}

static void this_machine(struct host_capacity *cap)
{
	unsigned long long kb = 0;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu", &kb) == 1)
			break;
	if (f)
		fclose(f);
	cap->cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	cap->memory_gib = (double)kb / GIB_KB;
	cap->this_host = cap->cpus > 0 && kb > 0;
}

int usage_capacity(sqlite3 *db, struct host_capacity *cap)
{
	sqlite3_stmt *st;

	memset(cap, 0, sizeof(*cap));
	if (sqlite3_prepare_v2(db,
			       "SELECT max(cpus), max(mem_total_kb), min(ts_ns), max(ts_ns) FROM "
			       "host_samples",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW) {
		cap->cpus = sqlite3_column_int(st, 0);
		cap->memory_gib = (double)sqlite3_column_int64(st, 1) / GIB_KB;
		cap->first_sample_ns = sqlite3_column_int64(st, 2);
		cap->last_sample_ns = sqlite3_column_int64(st, 3);
	}
	sqlite3_finalize(st);
	if (cap->cpus <= 0 && recorded_here(db))
		this_machine(cap);
	return 0;
}
