/*
 * tracer --fleet retention --days N: the fleet store's retention. The shipper's tables
 * are partitioned by the UTC day of each record's time (docs/shipping.md); every day
 * partition older than N days is dropped, a whole day at a time (ClickHouse 18.16 has
 * no TTL; a cron line runs this). Tables without day partitions (tools, batch_jobs, and
 * tables an older tracer made) are left alone and said so, as is 19700101: records with
 * no time, whose age is unknown.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/db/fleet.h"
#include "cli/render/clierror.h"
#include "cli/verbs/commands.h"

static const char usage_text[] =
    "usage: tracer --fleet [URL|FILE] retention --days N [--dry-run]\n"
    "  drop the fleet store's day partitions older than N days (UTC); --dry-run lists\n"
    "  them. A host's own database keeps its bound itself (tracer-aggregator --retain-days)\n";

/* A day partition's value: YYYYMMDD, as the shipper's PARTITION BY writes it. */
static bool day_partition(const char *p)
{
	size_t n = strspn(p, "0123456789");

	return n == 8 && !p[n];
}

static int drop_old(const char *answer, long cutoff, bool dry_run)
{
	char err[1024], sql[512], *text = strdup(answer);
	long dropped = 0, kept = 0;
	int64_t rows = 0, bytes = 0;

	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char table[128], part[64];
		long long r, b;
		if (sscanf(line, "%127s %63s %lld %lld", table, part, &r, &b) != 4)
			continue;
		if (!day_partition(part)) {
			printf("%s: not partitioned by day, kept (docs/shipping.md)\n", table);
			continue;
		}
		if (strtol(part, NULL, 10) >= cutoff || !strcmp(part, "19700101")) {
			kept++;
			continue;
		}
		snprintf(sql, sizeof(sql), "ALTER TABLE `%s`.`%s` DROP PARTITION %s",
			 fleet_database(), table, part);
		char *ok = dry_run ? NULL : fleet_query(sql, err, sizeof(err));
		if (!dry_run && !ok) {
			cli_error("retention", "%s: %s\n", table, err);
			free(text);
			return 1;
		}
		free(ok);
		printf("%s %s %s: %lld rows, %lld bytes on disk\n",
		       dry_run ? "would drop" : "dropped", table, part, r, b);
		dropped++, rows += r, bytes += b;
	}
	printf("%s %ld day partitions (%" PRId64 " rows, %" PRId64 " bytes); %ld kept\n",
	       dry_run ? "would drop" : "dropped", dropped, rows, bytes, kept);
	free(text);
	return 0;
}

int cmd_retention(int argc, char **argv)
{
	long days = 0;
	bool dry_run = false;
	char *end;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--dry-run")) {
			dry_run = true;
		} else if (!strcmp(argv[i], "--days") && i + 1 < argc) {
			days = strtol(argv[++i], &end, 10);
			if (*end || days < 1 || days > 36500)
				days = -1;
		} else {
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (!fleet_active() || days <= 0) {
		cli_error("retention", "%s\n",
			  !fleet_active()
			      ? "the fleet store's retention: tracer --fleet [URL|FILE] "
				"retention --days N"
			      : "--days N: whole days, 1 or more");
		return 2;
	}
	/* The UTC day N days ago: partitions before it go. */
	time_t t = time(NULL) - (time_t)days * 86400;
	struct tm utc;
	gmtime_r(&t, &utc);
	long cutoff = (utc.tm_year + 1900L) * 10000 + (utc.tm_mon + 1) * 100 + utc.tm_mday;
	char sql[512], err[1024];
	snprintf(sql, sizeof(sql),
		 "SELECT table, partition, sum(rows), sum(bytes_on_disk) FROM system.parts WHERE "
		 "database = '%s' AND active GROUP BY table, partition ORDER BY table, partition "
		 "FORMAT TabSeparated",
		 fleet_database());
	char *answer = fleet_query(sql, err, sizeof(err));
	if (!answer) {
		cli_error("retention", "%s\n", err);
		return 1;
	}
	int rv = drop_old(answer, cutoff, dry_run);
	free(answer);
	return rv;
}
