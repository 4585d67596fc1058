/* The host's price per hour: given (--rate, --instance-type) or detected (IMDSv2/GCP). */
#ifndef TRACER_HOSTPRICE_H
#define TRACER_HOSTPRICE_H

#include <stdbool.h>

#include "cli/prices.h"
#include "common/cloudmeta.h"

struct price_options {
	const char *rate;	   /* USD per hour (on-prem) */
	const char *instance_type; /* with region and lifecycle */
	const char *region, *lifecycle;
	const char *prices_path;
	const char *no_detect; /* non-NULL: never ask a metadata service */
	const char *imds_endpoint, *gcp_endpoint;
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
	{"imds-endpoint", true, &(po).imds_endpoint},           \
	{"gcp-endpoint", true, &(po).gcp_endpoint}
/* clang-format on */

struct host_price {
	double usd_per_hour;
	char source[256]; /* how we know: "--rate", "m5.large on-demand us-east-1 (IMDSv2)" */
	struct instance_facts facts;
	const struct price *row; /* in the table, if from it */
};

/* Fills hp; -1 with the reason printed (prefixed with verb). Loads t if needed. */
int host_price_resolve(const char *verb, const struct price_options *o, struct price_table *t,
		       struct host_price *hp);

#endif
