#include "cli/cost/costfleet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/db/fleet.h"
#include "cli/render/clierror.h"
#include "cli/render/jsonfield.h"

/* One host's own `cost --since --json` document, from its rows in the store; NULL said,
 * or NULL with *no_capacity set: the store has no host samples of it to price it by. */
static json_t *host_document(const char *host, const struct price_options *po,
			     const struct cost_query *cq, const struct cost_report *window,
			     bool *no_capacity)
{
	struct cost_query mine = {.by = cq->by, .centers = cq->centers};
	struct cost_report r = *window;
	sqlite3 *db = fleet_memory_db("cost");
	json_t *doc = NULL;

	if (!db || fleet_load_host_cost(db, "cost", host, r.from_ns, r.to_ns) != 0) {
		sqlite3_close(db);
		return NULL;
	}
	r.db = db;
	int rc = cost_compute(db, "cost", po, &mine, &r);
	*no_capacity = rc == COST_NO_CAPACITY;
	if (rc == -1)
		cli_error("cost", "%s: %s\n", host, sqlite3_errmsg(db));
	else if (rc == 0)
		doc = cost_json(&r);
	cost_tally_free(&mine.tally);
	sqlite3_close(db);
	return doc;
}

static void add_real(json_t *o, const char *key, double v)
{
	json_object_set_new(o, key, json_real(jnum(o, key) + v));
}

/* A host's parts into the fleet's, by key. */
static void add_parts(json_t *parts, json_t *host_doc)
{
	size_t i;
	json_t *b;

	json_array_foreach(json_object_get(host_doc, "breakdown"), i, b)
	{
		json_t *p = json_object_get(parts, jstr(b, "key"));
		if (!p) {
			p = json_pack("{s:s, s:I, s:I, s:f, s:f}", "key", jstr(b, "key"),
				      "processes", (json_int_t)0, "cpu_ns", (json_int_t)0,
				      "memory_gib_hours", 0.0, "usd", 0.0);
			json_object_set_new(parts, jstr(b, "key"), p);
		}
		json_object_set_new(p, "processes",
				    json_integer(jint(p, "processes") + jint(b, "processes")));
		json_object_set_new(p, "cpu_ns",
				    json_integer(jint(p, "cpu_ns") + jint(b, "cpu_ns")));
		add_real(p, "memory_gib_hours", jnum(b, "memory_gib_hours"));
		add_real(p, "usd", jnum(b, "usd"));
	}
}

static int by_usd(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	double cx = jnum(x, "usd") + 1e-12 * (double)jint(x, "cpu_ns"),
	       cy = jnum(y, "usd") + 1e-12 * (double)jint(y, "cpu_ns");

	return (cx < cy) - (cx > cy);
}

/* The parts, largest first, each with its share of the fleet's total (null unpriced). */
static json_t *sorted_parts(json_t *parts, double total, bool priced)
{
	size_t n = json_object_size(parts), i = 0;
	json_t **items = calloc(n ? n : 1, sizeof(*items)), *p, *out = json_array();
	const char *key;

	json_object_foreach(parts, key, p) items[i++] = p;
	qsort(items, n, sizeof(*items), by_usd);
	for (i = 0; i < n; i++) {
		json_t *o = json_deep_copy(items[i]);
		json_object_set_new(o, "share",
				    priced && total > 0 ? json_real(jnum(o, "usd") / total)
							: json_null());
		if (!priced)
			json_object_set_new(o, "usd", json_null());
		json_array_append_new(out, o);
	}
	free(items);
	return out;
}

/* The fleet's totals over the hosts' documents, in cost_json's vocabulary. */
static json_t *summed(json_t *hosts, const struct cost_report *r)
{
	json_t *parts = json_object(), *h, *first = NULL;
	double total = 0, idle = 0, work = 0, mem = 0;
	json_int_t cpus = 0, observed = 0;
	bool any_observed = false, priced = true;
	size_t i;

	json_array_foreach(hosts, i, h)
	{
		json_t *d = json_object_get(h, "cost");
		first = first ? first : d;
		priced = priced && json_is_number(json_object_get(d, "total_usd"));
		total += jnum(d, "total_usd");
		idle += jnum(d, "idle_usd");
		work += jnum(d, "work_usd");
		cpus += jint(d, "cpus");
		mem += jnum(d, "memory_gib");
		if (json_is_integer(json_object_get(d, "observed_ns"))) {
			any_observed = true;
			observed += jint(d, "observed_ns");
		}
		add_parts(parts, d);
	}
	priced = priced && first;
#define USD(v) (priced ? json_real(v) : json_null())
	json_t *doc = json_pack(
	    "{s:s, s:I, s:I, s:O, s:O, s:f, s:I, s:f, s:o, s:o, s:o, s:o, s:o, s:o, s:b}", "by",
	    r->by, "from_ns", (json_int_t)r->from_ns, "to_ns", (json_int_t)r->to_ns, "usd_per_hour",
	    first ? json_object_get(first, "usd_per_hour") : json_null(), "price_source",
	    first ? json_object_get(first, "price_source") : json_null(), "cpu_weight",
	    r->cpu_weight, "cpus", cpus, "memory_gib", mem, "total_usd", USD(total), "breakdown",
	    sorted_parts(parts, total, priced), "idle_usd", USD(idle), "work_usd", USD(work),
	    "idle_share", priced && total > 0 ? json_real(idle / total) : json_null(),
	    "observed_ns", any_observed ? json_integer(observed) : json_null(), "whole_window",
	    r->whole_window);
#undef USD
	json_decref(parts);
	return doc;
}

json_t *cost_fleet_document(const struct price_options *po, const struct cost_query *cq,
			    const struct cost_report *r)
{
	json_t *seen = fleet_window_hosts("cost", r->from_ns, r->to_ns), *h;
	json_t *hosts = json_array(), *skipped = json_array();
	size_t i;

	if (!seen)
		return NULL;
	json_array_foreach(seen, i, h)
	{
		bool no_capacity = false;
		json_t *doc = host_document(jstr(h, "host"), po, cq, r, &no_capacity);
		if (doc) {
			json_object_set_new(h, "cost", doc);
			json_array_append(hosts, h);
		} else if (no_capacity) {
			/* A host that shipped work but no host samples (its aggregator's
			 * sampler off, or they fell outside retention): left out, said. */
			fprintf(stderr,
				"tracer cost: %s is not priced: no host samples of it in the fleet "
				"store, so its CPUs and memory are unknown\n",
				jstr(h, "host"));
			json_array_append_new(
			    skipped, json_pack("{s:s, s:s}", "host", jstr(h, "host"), "reason",
					       "no host samples: its CPUs and memory are unknown"));
		} else {
			json_decref(seen);
			json_decref(hosts);
			json_decref(skipped);
			return NULL;
		}
	}
	json_decref(seen);
	json_t *doc = summed(hosts, r);
	json_object_set_new(doc, "hosts", hosts);
	json_object_set_new(doc, "skipped", skipped);
	return doc;
}
