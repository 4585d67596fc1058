/* The host's price per hour: given (--rate, --instance-type) or detected (IMDSv2/GCP). */
#ifndef TRACER_HOSTPRICE_H
#define TRACER_HOSTPRICE_H

#include <stdbool.h>

#include "cli/cost/prices.h"
#include "common/cloudmeta.h"

struct price_options {
	const char *rate;	   /* USD per hour (on-prem) */
	const char *instance_type; /* with region and lifecycle */
	const char *region, *lifecycle;
	const char *prices_path;
	const char *no_detect; /* non-NULL: never ask a metadata service */
	const char *detect;    /* non-NULL: ask one even where the firmware names no cloud */
	const char *imds_endpoint, *gcp_endpoint; /* given: asked for */
	const char *cost_conf;			  /* NULL: /etc/tracer/cost.conf */
};

/* The entries every costing verb (cost, recommend, idle) puts in its
 * cli_extra_option table to fill a struct price_options. */
/* clang-format off */
#define PRICE_EXTRA_OPTIONS(po)                                 \
	{"rate", true, &(po).rate},                             \
	{"instance-type", true, &(po).instance_type},           \
	{"region", true, &(po).region},                         \
	{"lifecycle", true, &(po).lifecycle},                   \
	{"prices", true, &(po).prices_path},                    \
	{"no-detect", false, &(po).no_detect},                  \
	{"detect", false, &(po).detect},                        \
	{"cost-conf", true, &(po).cost_conf},                   \
	{"imds-endpoint", true, &(po).imds_endpoint},           \
	{"gcp-endpoint", true, &(po).gcp_endpoint}
/* clang-format on */

/* Their usage lines, indented by the caller's prefix. */
#define PRICE_USAGE(indent)                                                                        \
	indent "[--rate USD_PER_HOUR | --instance-type T [--region R] [--lifecycle L]]\n" indent   \
	       "[--prices FILE] [--cost-conf FILE] [--detect | --no-detect]\n" indent              \
	       "[--imds-endpoint URL | --gcp-endpoint URL]\n"

struct host_price {
	double usd_per_hour;
	char source[400]; /* how we know: "--rate", "m5.large on-demand us-east-1 (IMDSv2)" */
	struct instance_facts facts;
	const struct price *row; /* in the table, if from it */
};

/*
 * What this host costs per hour, from (first found): --rate, --instance-type,
 * the rate or instance type in the cost config, or the cloud's metadata
 * service, asked only with --detect, `detect = yes`, an endpoint option, or
 * where the firmware names AWS or Google (`detect = auto`, the default): an
 * on-prem host sends no request. Fills hp and returns 0; HOST_UNPRICED when
 * nothing says (the reason printed, prefixed with verb: the caller goes on
 * without cost); HOST_PRICE_ERROR for a bad option or config line (printed).
 * Loads t if needed.
 */
#define HOST_UNPRICED (-1)
#define HOST_PRICE_ERROR (-2)
int host_price_resolve(const char *verb, const struct price_options *o, struct price_table *t,
		       struct host_price *hp);

#endif
