#include "cli/hostprice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int host_price_resolve(const char *verb, const struct price_options *o, struct price_table *t,
		       struct host_price *hp)
{
	char err[512];

	memset(hp, 0, sizeof(*hp));
	if (o->rate) {
		char *end;
		hp->usd_per_hour = strtod(o->rate, &end);
		if (*end || hp->usd_per_hour <= 0) {
			fprintf(stderr, "tracer %s: --rate is USD per hour, got '%s'\n", verb,
				o->rate);
			return -1;
		}
		snprintf(hp->source, sizeof(hp->source), "configured rate (--rate)");
	}
	if (prices_load(t, o->prices_path, err, sizeof(err)) != 0) {
		if (o->rate)
			return 0; /* a rate needs no table; recommendations will say so */
		fprintf(stderr, "tracer %s: %s\n", verb, err);
		return -1;
	}
	if (o->rate)
		return 0;
	if (o->instance_type) {
		snprintf(hp->facts.instance_type, sizeof(hp->facts.instance_type), "%s",
			 o->instance_type);
		snprintf(hp->facts.region, sizeof(hp->facts.region), "%s",
			 o->region ? o->region : "us-east-1");
		snprintf(hp->facts.lifecycle, sizeof(hp->facts.lifecycle), "%s",
			 o->lifecycle ? o->lifecycle : "on-demand");
		snprintf(hp->facts.provider, sizeof(hp->facts.provider), "aws");
		hp->facts.known = true;
	} else if (!o->no_detect) {
		if (cloud_detect(o->imds_endpoint ? o->imds_endpoint : AWS_METADATA_ENDPOINT,
				 o->gcp_endpoint ? o->gcp_endpoint : GCP_METADATA_ENDPOINT, 1000,
				 &hp->facts, err, sizeof(err)) != 0) {
			fprintf(
			    stderr,
			    "tracer %s: instance unknown (%s): not on a cloud? pass --rate USD/h "
			    "(on-prem) or --instance-type TYPE [--region R] [--lifecycle L]\n",
			    verb, err);
			return -1;
		}
	} else {
		fprintf(stderr, "tracer %s: pass --rate USD/h or --instance-type TYPE\n", verb);
		return -1;
	}
	const char *region = hp->facts.region;
	hp->row = prices_find(t, region, hp->facts.instance_type, hp->facts.lifecycle);
	if (!hp->row && !strcmp(hp->facts.lifecycle, "spot")) {
		/* No spot price in the table: the on-demand price is an upper bound. */
		hp->row = prices_find(t, region, hp->facts.instance_type, "on-demand");
	}
	if (!hp->row) {
		fprintf(stderr,
			"tracer %s: %s %s in %s is not in the price table %s; pass --rate\n", verb,
			hp->facts.instance_type, hp->facts.lifecycle, region, t->path);
		return -1;
	}
	hp->usd_per_hour = hp->row->usd_per_hour;
	snprintf(hp->source, sizeof(hp->source), "%s %s %s, $%.4g/h (%s%s)",
		 hp->facts.instance_type, hp->row->lifecycle, hp->row->region, hp->usd_per_hour,
		 o->instance_type ? "given" : hp->facts.provider,
		 o->instance_type ? "" : " metadata");
	return 0;
}
