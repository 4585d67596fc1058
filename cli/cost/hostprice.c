#include "cli/cost/hostprice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cost/costconf.h"
#include "cli/render/clierror.h"

/* The options, with what the cost config says for each one not given. */
struct price_inputs {
	const char *rate, *rate_from, *instance_type, *region, *lifecycle;
	bool ask; /* may the metadata service be asked */
	char why_not_asked[600];
};

static const char *first(const char *option, const char *conf)
{
	return option ? option : conf[0] ? conf : NULL;
}

static void merge(const struct price_options *o, const struct cost_conf *c, struct price_inputs *in)
{
	in->rate = first(o->rate, c->rate);
	in->rate_from = o->rate ? "--rate" : c->path;
	in->instance_type = first(o->instance_type, c->instance_type);
	in->region = first(o->region, c->region);
	in->lifecycle = first(o->lifecycle, c->lifecycle);
	in->why_not_asked[0] = '\0';
	if (o->no_detect) {
		in->ask = false;
		snprintf(in->why_not_asked, sizeof(in->why_not_asked), "--no-detect");
	} else if (o->detect || o->imds_endpoint || o->gcp_endpoint || c->detect == DETECT_YES) {
		in->ask = true;
	} else if (c->detect == DETECT_NO) {
		in->ask = false;
		snprintf(in->why_not_asked, sizeof(in->why_not_asked), "detect = no in %.500s",
			 c->path);
	} else {
		in->ask = cost_firmware_cloud(DMI_DIR) != NULL;
		if (!in->ask)
			snprintf(in->why_not_asked, sizeof(in->why_not_asked),
				 "not a cloud instance: the firmware (%s) names no cloud", DMI_DIR);
	}
}

static int priced_by_rate(const char *verb, const struct price_inputs *in, struct price_table *t,
			  const struct price_options *o, struct host_price *hp)
{
	char *end, err[512];

	hp->usd_per_hour = strtod(in->rate, &end);
	if (*end || hp->usd_per_hour <= 0) {
		cli_error(verb, "--rate is USD per hour, got '%s'", in->rate);
		return HOST_PRICE_ERROR;
	}
	snprintf(hp->source, sizeof(hp->source), "configured rate (%.200s)", in->rate_from);
	/* A rate needs no table; recommendations use it when there is one. */
	if (prices_load(t, o->prices_path, err, sizeof(err)) != 0 && o->prices_path) {
		cli_error(verb, "%s", err);
		return HOST_PRICE_ERROR;
	}
	return 0;
}

int host_price_resolve(const char *verb, const struct price_options *o, struct price_table *t,
		       struct host_price *hp)
{
	char err[512];
	struct cost_conf conf;
	struct price_inputs in;

	memset(hp, 0, sizeof(*hp));
	if (cost_conf_load(&conf, o->cost_conf, err, sizeof(err)) != 0) {
		cli_error(verb, "%s", err);
		return HOST_PRICE_ERROR;
	}
	merge(o, &conf, &in);
	if (in.rate)
		return priced_by_rate(verb, &in, t, o, hp);
	if (prices_load(t, o->prices_path, err, sizeof(err)) != 0) {
		cli_error(verb, "%s", err);
		return o->prices_path ? HOST_PRICE_ERROR : HOST_UNPRICED;
	}
	if (in.instance_type) {
		snprintf(hp->facts.instance_type, sizeof(hp->facts.instance_type), "%s",
			 in.instance_type);
		snprintf(hp->facts.region, sizeof(hp->facts.region), "%s",
			 in.region ? in.region : "us-east-1");
		snprintf(hp->facts.lifecycle, sizeof(hp->facts.lifecycle), "%s",
			 in.lifecycle ? in.lifecycle : "on-demand");
		snprintf(hp->facts.provider, sizeof(hp->facts.provider), "aws");
		hp->facts.known = true;
	} else if (in.ask) {
		if (cloud_detect(o->imds_endpoint ? o->imds_endpoint : AWS_METADATA_ENDPOINT,
				 o->gcp_endpoint ? o->gcp_endpoint : GCP_METADATA_ENDPOINT, 1000,
				 &hp->facts, err, sizeof(err)) != 0) {
			cli_error(verb,
				  "instance unknown (%s): pass --rate USD/h or "
				  "--instance-type TYPE, or set rate in %s (docs/cost.md)",
				  err, COST_CONF_PATH);
			return HOST_UNPRICED;
		}
	} else {
		cli_error(verb,
			  "no price for this host (%s; no rate set): set rate = USD/h "
			  "in %s or pass --rate, or --detect to ask a cloud's metadata service",
			  in.why_not_asked, COST_CONF_PATH);
		return HOST_UNPRICED;
	}
	const char *region = hp->facts.region;
	hp->row = prices_find(t, region, hp->facts.instance_type, hp->facts.lifecycle);
	if (!hp->row && !strcmp(hp->facts.lifecycle, "spot")) {
		/* No spot price in the table: the on-demand price is an upper bound. */
		hp->row = prices_find(t, region, hp->facts.instance_type, "on-demand");
	}
	if (!hp->row) {
		cli_error(verb, "%s %s in %s is not in the price table %s; pass --rate",
			  hp->facts.instance_type, hp->facts.lifecycle, region, t->path);
		/* A type someone wrote down is a mistake to fix; one a cloud named is news. */
		return in.instance_type ? HOST_PRICE_ERROR : HOST_UNPRICED;
	}
	hp->usd_per_hour = hp->row->usd_per_hour;
	bool given = in.instance_type != NULL;
	snprintf(hp->source, sizeof(hp->source), "%s %s %s, $%.4g/h (%.120s%s)",
		 hp->facts.instance_type, hp->row->lifecycle, hp->row->region, hp->usd_per_hour,
		 given ? (o->instance_type ? "given" : conf.path) : hp->facts.provider,
		 given ? "" : " metadata");
	return 0;
}
