/* Signal thresholds from `--signal NAME=VALUE` (docs/insight.md lists them). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/insight/insight.h"
#include "common/timeutil.h"

enum unit { SECONDS, SHARE, FACTOR, COUNT };

struct threshold {
	const char *name;
	enum unit unit;
	size_t offset;
};

#define AT(field) offsetof(struct insight_config, field)

static const struct threshold thresholds[] = {
    {"stall-seconds", SECONDS, AT(stall_ns)},
    {"io-wait-seconds", SECONDS, AT(io_wait_min_ns)},
    {"io-wait-share", SHARE, AT(io_wait_share)},
    {"network-wait-seconds", SECONDS, AT(net_wait_min_ns)},
    {"network-wait-share", SHARE, AT(net_wait_share)},
    {"runq-seconds", SECONDS, AT(runq_min_ns)},
    {"runq-share", SHARE, AT(runq_share)},
    {"reclaim-seconds", SECONDS, AT(reclaim_min_ns)},
    {"near-limit-share", SHARE, AT(near_limit_share)},
    {"slow-factor", FACTOR, AT(slow_factor)},
    {"slow-min-extra-seconds", SECONDS, AT(slow_min_extra_ns)},
    {"slow-min-history", COUNT, AT(slow_min_history)},
};

int insight_config_set(struct insight_config *cfg, const char *assignment, char *err,
		       size_t err_size)
{
	const char *eq = strchr(assignment, '=');
	char *end;

	if (!eq) {
		snprintf(err, err_size, "'%s': expected NAME=VALUE", assignment);
		return -1;
	}
	size_t n = (size_t)(eq - assignment);
	for (size_t i = 0; i < sizeof(thresholds) / sizeof(*thresholds); i++) {
		const struct threshold *t = &thresholds[i];
		if (strlen(t->name) != n || strncmp(t->name, assignment, n) != 0)
			continue;
		double v = strtod(eq + 1, &end);
		if (end == eq + 1 || *end || !isfinite(v) || v < 0 || (t->unit == SHARE && v > 1) ||
		    (t->unit == FACTOR && v < 1) ||
		    (t->unit == COUNT && (v != floor(v) || v > 1000)) ||
		    (t->unit == SECONDS && v > 1e7)) {
			snprintf(err, err_size, "%s: bad value '%s'", t->name, eq + 1);
			return -1;
		}
		char *field = (char *)cfg + t->offset;
		switch (t->unit) {
		case SECONDS:
			*(uint64_t *)(void *)field = (uint64_t)(v * 1e9);
			break;
		case SHARE:
		case FACTOR:
			*(double *)(void *)field = v;
			break;
		case COUNT:
			*(unsigned *)(void *)field = (unsigned)v;
			break;
		}
		return 0;
	}
	snprintf(err, err_size, "unknown signal threshold '%.*s'", (int)n, assignment);
	return -1;
}
