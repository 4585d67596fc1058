#include "cli/cost/rightsize.h"
#include "cli/render/jsonfield.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cost/prices.h"
#include "cli/db/clidb.h"

/*
 * A run with no steps (`tracer run -- bwa mem ...`: one command, no script or
 * engine) is sized as one step named after its command's last program. Its
 * memory limit is known only from an OOM kill in it (runs keep no cgroup limit).
 */
#define WHOLE_RUNS_SQL                                                                             \
	" UNION ALL SELECT coalesce((SELECT t.name FROM processes c JOIN processes p ON"           \
	" p.pid = c.pid AND p.proc_start_boot_ns = c.proc_start_boot_ns AND p.run_id = r.id"       \
	" JOIN tools t ON t.id = p.tool_id WHERE c.id = r.command_process_id"                      \
	" ORDER BY p.start_ns DESC LIMIT 1), r.name) AS name, count(*), max(r.peak_rss_kb),"       \
	" max(coalesce(r.peak_cores, r.avg_cores)), avg(r.avg_cores), sum(r.end_ns - r.start_ns)," \
	" max((SELECT max(o.memcg_limit_kb) FROM oom_kills o JOIN processes p ON"                  \
	" p.id = o.process_id WHERE p.run_id = r.id)), NULL, sum(r.read_bytes + r.write_bytes),"   \
	" NULL, max(r.reclaim_ns),"                                                                \
	" max((SELECT max(p.oom_killed) FROM processes p WHERE p.run_id = r.id)),"                 \
	" sum(r.net_wait_ns)"                                                                      \
	" FROM runs r WHERE r.end_ns IS NOT NULL AND %s"                                           \
	" AND NOT EXISTS (SELECT 1 FROM steps s WHERE s.run_id = r.id) GROUP BY 1"

json_t *rightsize_steps(sqlite3 *db, bool pipeline, int64_t scope)
{
	char sql[4096];
	const char *in_scope = pipeline ? "r.pipeline_id = ?1" : "r.id = ?1";

	snprintf(
	    sql, sizeof(sql),
	    "SELECT s.name, count(*) AS instances, max(s.peak_rss_kb) AS peak_rss_kb,"
	    " max(coalesce(s.peak_cores, s.avg_cores)) AS peak_cores, avg(s.avg_cores) AS "
	    "avg_cores,"
	    " sum(s.end_ns - s.start_ns) AS wall_ns, max(s.memory_limit_kb) AS memory_limit_kb,"
	    " max(s.cpu_limit) AS cpu_limit, sum(s.read_bytes + s.write_bytes) AS io_bytes,"
	    " max(s.character) AS character, max(s.reclaim_ns) AS reclaim_ns,"
	    " max((SELECT max(p.oom_killed) FROM processes p WHERE p.step_id = s.id)) AS "
	    "oom_killed,"
	    " sum(s.net_wait_ns) AS net_wait_ns"
	    " FROM steps s JOIN runs r ON r.id = s.run_id"
	    " WHERE s.end_ns IS NOT NULL AND s.name IS NOT NULL AND %s GROUP BY "
	    "s.name" WHOLE_RUNS_SQL " ORDER BY wall_ns DESC",
	    in_scope, in_scope);
	return cli_rows_json(db, sql, scope);
}

static const char *verdict(double used, double given, double recommended)
{
	if (given <= 0)
		return "unknown";
	if (used >= 0.9 * given)
		return "under-provisioned";
	if (recommended < 0.67 * given)
		return "over-provisioned";
	return "fits";
}

/* A step blocked on the network this share of its wall time (summed over its
 * processes) used few cores because it waited: fewer would not make it cheaper. */
#define RIGHTSIZE_NET_WAIT_SHARE 0.3

/* Memory reclaim a step may spend before it counts as short of memory. */
#define RIGHTSIZE_RECLAIM_NS 1000000000LL

void rightsize_step(json_t *s, double headroom, const struct host_capacity *cap)
{
	double peak_gib = jnum(s, "peak_rss_kb") / (1024.0 * 1024.0);
	double cores = jnum(s, "peak_cores");
	bool mem_limited = jnum(s, "memory_limit_kb") > 0;
	double mem_given =
	    mem_limited ? jnum(s, "memory_limit_kb") / (1024.0 * 1024.0) : cap->memory_gib;
	double cpu_given = jnum(s, "cpu_limit") > 0 ? jnum(s, "cpu_limit") : cap->cpus;
	/* Killed at its limit, or reclaiming to stay under it: it needed more than it had,
	 * however little its peak shows. */
	bool short_of_memory = cli_flag(s, "oom_killed") ||
			       (mem_limited && jint(s, "reclaim_ns") >= RIGHTSIZE_RECLAIM_NS);
	double needed_gib = short_of_memory && mem_given > peak_gib ? mem_given : peak_gib;
	double rec_gib = ceil(needed_gib * (1 + headroom) * 16.0) / 16.0; /* 64 MiB steps */

	if (rec_gib < 1.0 / 16)
		rec_gib = 1.0 / 16;
	/* Headroom on CPUs, except for work that never used more than one core: a
	 * single thread cannot use a second one; never more than the host has. */
	int rec_cpus = cores <= 1.05 ? 1 : (int)ceil(cores * (1 + headroom) - 1e-9);
	if (cap->cpus > 0 && rec_cpus > cap->cpus)
		rec_cpus = cap->cpus;
	bool network_bound =
	    jnum(s, "net_wait_ns") >= RIGHTSIZE_NET_WAIT_SHARE * jnum(s, "wall_ns") &&
	    jnum(s, "net_wait_ns") > 0;
	if (network_bound && rec_cpus < (int)ceil(cpu_given - 1e-9))
		rec_cpus = (int)ceil(cpu_given - 1e-9);
	json_object_set_new(s, "memory_given_gib", json_real(mem_given));
	json_object_set_new(s, "memory_given_from",
			    json_string(mem_limited ? "cgroup limit" : "host"));
	json_object_set_new(s, "cpus_given", json_real(cpu_given));
	json_object_set_new(s, "memory_recommended_gib", json_real(rec_gib));
	json_object_set_new(s, "cpus_recommended", json_integer(rec_cpus));
	json_object_set_new(s, "memory_verdict",
			    json_string(short_of_memory ? "under-provisioned"
							: verdict(peak_gib, mem_given, rec_gib)));
	/* The CPU verdict follows the advice: fewer CPUs advised is over-provisioned. */
	const char *cpu_v = verdict(cores, cpu_given, (double)rec_cpus);
	if (!strcmp(cpu_v, "fits") && rec_cpus > cpu_given)
		cpu_v = "under-provisioned";
	if (network_bound && strcmp(cpu_v, "under-provisioned"))
		cpu_v = "network-bound";
	json_object_set_new(s, "cpu_verdict", json_string(cpu_v));
	/* Too short to be worth sizing: no advice to act on; but a step short of
	 * memory fails again however short it was, so it gets its advice. */
	if (jnum(s, "wall_ns") < RIGHTSIZE_MIN_WALL_NS && !short_of_memory)
		json_object_set_new(s, "too_short", json_true());
}

void rightsize_price(json_t *s, const struct price_table *t, const char *region, const char *arch,
		     double usd_per_hour_now, struct rightsize_totals *totals)
{
	double rec_gib = jnum(s, "memory_recommended_gib");
	int rec_cpus = (int)json_integer_value(json_object_get(s, "cpus_recommended"));
	const struct price *fit =
	    prices_cheapest_fit(t, region, "on-demand", rec_cpus, rec_gib, NULL, arch);
	const struct price *spot =
	    prices_cheapest_fit(t, region, "spot", rec_cpus, rec_gib, NULL, arch);
	double hours = jnum(s, "wall_ns") / 3.6e12;

	if (fit) {
		double now_cost = hours * usd_per_hour_now, rec_cost = hours * fit->usd_per_hour;
		json_object_set_new(s, "instance",
				    json_pack("{s:s, s:s, s:i, s:f, s:f}", "type", fit->type,
					      "class", fit->cls, "vcpu", fit->vcpu, "memory_gib",
					      fit->memory_gib, "usd_per_hour", fit->usd_per_hour));
		totals->usd_now += now_cost;
		totals->usd_recommended += rec_cost < now_cost ? rec_cost : now_cost;
		json_object_set_new(s, "usd_now", json_real(now_cost));
		json_object_set_new(s, "usd_recommended", json_real(rec_cost));
		json_object_set_new(s, "usd_saving",
				    json_real(now_cost > rec_cost ? now_cost - rec_cost : 0));
	}
	/* Another architecture only as an option: the binaries would need rebuilding. */
	const struct price *other = NULL;
	for (size_t i = 0; arch && i < t->n; i++) {
		const char *a = t->rows[i].arch;
		if (strcmp(a, arch) && (other = prices_cheapest_fit(t, region, "on-demand",
								    rec_cpus, rec_gib, NULL, a)))
			break;
	}
	if (other && (!fit || other->usd_per_hour < fit->usd_per_hour))
		json_object_set_new(s, "other_arch",
				    json_pack("{s:s, s:s, s:f, s:f}", "type", other->type, "arch",
					      other->arch, "usd_per_hour", other->usd_per_hour,
					      "usd", hours * other->usd_per_hour));
	if (spot)
		json_object_set_new(s, "spot",
				    json_pack("{s:s, s:f, s:f}", "type", spot->type, "usd_per_hour",
					      spot->usd_per_hour, "usd",
					      hours * spot->usd_per_hour));
}
