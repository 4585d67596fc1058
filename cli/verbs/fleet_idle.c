/*
 * tracer --fleet idle: which hosts stopped reporting. Each host's newest word in
 * the fleet store (its collector's last row, its newest host sample); a host is
 * silent when that is older than FLEET_SILENT_NS, or its collector's last stream
 * ended (stopped) with none after it. cmd_idle.c sweeps every host with these
 * (tracer --fleet idle) or reads one (tracer --fleet idle HOST) over the fleet store.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/db/fleet.h"
#include "cli/db/liveness.h"
#include "cli/render/clierror.h"
#include "cli/render/format.h"
#include "cli/verbs/commands.h"
#include "cli/verbs/fleet_idle.h"
#include "common/timeutil.h"

static int64_t number(json_t *r, const char *name)
{
	json_t *v = json_object_get(r, name);

	return json_is_string(v) ? strtoll(json_string_value(v), NULL, 10)
				 : (int64_t)json_integer_value(v);
}

/* One row per host: its name, newest collector row (and whether it was final), newest sample. */
static json_t *host_rows(char *err, size_t size)
{
	char sql[1024];
	const char *d = fleet_database();

	snprintf(sql, sizeof(sql),
		 "SELECT h, max(name) AS hostname, max(seen) AS last_seen_ns, "
		 "argMax(fin, seen) AS stopped, max(sampled) AS last_sample_ns FROM ("
		 "SELECT _host AS h, hostname AS name, ifNull(last_seen_ns, 0) AS seen, "
		 "ifNull(final, 0) AS fin, toInt64(0) AS sampled FROM `%s`.collector_stats FINAL "
		 "UNION ALL SELECT _host, '', toInt64(0), toInt64(0), max(ifNull(ts_ns, 0)) FROM "
		 "`%s`.host_samples GROUP BY _host) GROUP BY h ORDER BY h FORMAT JSONEachRow",
		 d, d);
	return fleet_json_rows(sql, err, size);
}

/* The host's newest word, whether it is silent, and why. */
static json_t *verdict(json_t *r, int64_t now)
{
	int64_t seen = number(r, "last_seen_ns"), sampled = number(r, "last_sample_ns");
	int64_t last = seen > sampled ? seen : sampled;
	bool stopped = number(r, "stopped") != 0;
	bool silent = stopped || now - last > FLEET_SILENT_NS;
	const char *why = !silent   ? "reporting"
			  : stopped ? "stopped reporting: its collector stopped"
				    : "stopped reporting: nothing new for over 3 minutes";
	const char *host = json_string_value(json_object_get(r, "h"));
	const char *name = json_string_value(json_object_get(r, "hostname"));

	return json_pack("{s:s, s:s, s:I, s:b, s:s}", "host", host ? host : "", "hostname",
			 name ? name : "", "last_heard_ns", (json_int_t)last, "silent", silent,
			 "state", why);
}

json_t *fleet_idle_verdicts(void)
{
	char err[1024];
	json_t *rows = host_rows(err, sizeof(err)), *r;
	int64_t now = (int64_t)now_realtime_ns();
	size_t i;

	if (!rows) {
		cli_error("idle", "%s\n", err);
		return NULL;
	}
	json_t *hosts = json_array();
	json_array_foreach(rows, i, r) json_array_append_new(hosts, verdict(r, now));
	json_decref(rows);
	return hosts;
}

void fleet_idle_print_hosts(json_t *hosts)
{
	char when[40], ago[32];
	int64_t now = (int64_t)now_realtime_ns();
	size_t i;
	json_t *r;

	printf("%-34s %-16s %-20s %9s  %s\n", "HOST", "HOSTNAME", "LAST HEARD", "AGO", "STATE");
	json_array_foreach(hosts, i, r)
	{
		int64_t last = json_integer_value(json_object_get(r, "last_heard_ns"));
		format_time(last, when, sizeof(when));
		when[19] = '\0';
		format_duration(now - last, ago, sizeof(ago));
		printf("%-34s %-16s %-20s %9s  %s\n", json_string_value(json_object_get(r, "host")),
		       json_string_value(json_object_get(r, "hostname")), when, ago,
		       json_string_value(json_object_get(r, "state")));
	}
	if (!json_array_size(hosts))
		printf("(no host has shipped to the fleet store)\n");
}
