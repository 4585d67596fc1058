#include "cli/cost/costsplit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"

bool cost_tally_add(struct cost_tally *t, const char *key, double cpu_s, double mem_gib_s)
{
	struct cost_bucket *b = NULL;

	for (size_t i = 0; i < t->n && !b; i++)
		if (!strcmp(t->items[i].key, key))
			b = &t->items[i];
	if (!b) {
		struct cost_bucket fresh = {0};
		snprintf(fresh.key, sizeof(fresh.key), "%s", key);
		if (!vec_push(t, fresh))
			return false;
		b = &t->items[t->n - 1];
	}
	t->cpu_s += cpu_s;
	t->mem_gib_s += mem_gib_s;
	b->cpu_s += cpu_s;
	b->mem_gib_s += mem_gib_s;
	b->processes++;
	return true;
}

void cost_tally_free(struct cost_tally *t)
{
	vec_free(t);
}

static int by_cost(const void *a, const void *b)
{
	const struct cost_bucket *x = a, *y = b;
	double cx = x->cpu_s + x->mem_gib_s, cy = y->cpu_s + y->mem_gib_s;
	return (cx < cy) - (cx > cy);
}

void cost_split(struct cost_tally *t, double usd_per_hour, double seconds, int cpus,
		double memory_gib, double cpu_weight, struct cost_totals *out)
{
	double cpu_cap = cpus * seconds, mem_cap = memory_gib * seconds;

	out->total_usd = usd_per_hour * seconds / 3600.0;
	out->work_usd = 0;
	if (t->n > 1) /* items is NULL when empty: qsort must not see it */
		qsort(t->items, t->n, sizeof(*t->items), by_cost);
	for (size_t i = 0; i < t->n; i++) {
		struct cost_bucket *b = &t->items[i];
		b->usd = out->total_usd * (cpu_weight * b->cpu_s / cpu_cap +
					   (1 - cpu_weight) * b->mem_gib_s / mem_cap);
		b->share = out->total_usd > 0 ? b->usd / out->total_usd : 0;
		out->work_usd += b->usd;
	}
	out->idle_usd = out->total_usd - out->work_usd;
}

bool cost_centers_add(struct cost_centers *c, const char *section, const char *name,
		      const char *center)
{
	const char *kind = !strcmp(section, "users")	 ? "user"
			   : !strcmp(section, "groups")	 ? "group"
			   : !strcmp(section, "cgroups") ? "cgroup"
							 : NULL;
	struct cost_center_rule r = {0};

	if (!kind)
		return false;
	snprintf(r.kind, sizeof(r.kind), "%s", kind);
	snprintf(r.key, sizeof(r.key), "%s", name);
	snprintf(r.center, sizeof(r.center), "%s", center);
	return vec_push(c, r);
}

static const char *rule_for(const struct cost_centers *c, const char *kind, const char *key)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->items[i].kind, kind) && !strcmp(c->items[i].key, key))
			return c->items[i].center;
	return NULL;
}

const char *cost_center_of(const struct cost_centers *c, const char *user, const char *group,
			   const char *cgroup)
{
	const char *center = rule_for(c, "user", user);
	size_t best = 0;

	if (!center)
		center = rule_for(c, "group", group);
	if (center)
		return center;
	center = "(unassigned)";
	for (size_t i = 0; i < c->n; i++) {
		size_t n = strlen(c->items[i].key);
		if (!strcmp(c->items[i].kind, "cgroup") && n > best &&
		    !strncmp(cgroup, c->items[i].key, n)) {
			center = c->items[i].center;
			best = n;
		}
	}
	return center;
}

void cost_centers_free(struct cost_centers *c)
{
	vec_free(c);
}
