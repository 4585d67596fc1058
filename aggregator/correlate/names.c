/* Tool and pipeline ids: one per distinct name, kept for the aggregator's life. */
#include "aggregator/correlate/internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"
#include "common/timeutil.h"
#include "common/vec.h"

static size_t name_hash(const char *name)
{
	size_t h = 14695981039346656037u; /* FNV-1a */

	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = (h ^ *c) * 1099511628211u;
	return h;
}

static void index_put(struct name_ids *v, size_t position)
{
	size_t mask = v->n_slots - 1;
	size_t k = name_hash(v->items[position].name) & mask;

	while (v->slots[k])
		k = (k + 1) & mask;
	v->slots[k] = (uint32_t)(position + 1);
}

/* Keeps the index at most half full; without memory for it, lookups scan. */
static void index_added(struct name_ids *v)
{
	size_t want = v->n_slots ? v->n_slots : 64;

	if (v->slots && v->n * 2 <= v->n_slots) {
		index_put(v, v->n - 1);
		return;
	}
	while (v->n * 2 > want)
		want *= 2;
	free(v->slots);
	v->n_slots = 0;
	if (v->n >= UINT32_MAX || !(v->slots = calloc(want, sizeof(*v->slots))))
		return;
	v->n_slots = want;
	for (size_t i = 0; i < v->n; i++)
		index_put(v, i);
}

static int64_t name_lookup(const struct name_ids *v, const char *name)
{
	if (!v->slots) {
		for (size_t i = 0; i < v->n; i++)
			if (!strcmp(v->items[i].name, name))
				return v->items[i].id;
		return 0;
	}
	for (size_t k = name_hash(name) & (v->n_slots - 1); v->slots[k];
	     k = (k + 1) & (v->n_slots - 1)) {
		const struct name_id *e = &v->items[v->slots[k] - 1];
		if (!strcmp(e->name, name))
			return e->id;
	}
	return 0;
}

static int64_t name_add(struct name_ids *v, const char *name, int64_t id, bool written)
{
	struct name_id entry = {.name = strdup(name), .id = id, .written = written};

	if (!entry.name || !vec_push(v, entry)) {
		free(entry.name);
		return 0;
	}
	index_added(v);
	return id;
}

int64_t pipeline_id(struct correlator *c, const char *name)
{
	int64_t id = name_lookup(&c->pipelines, name);

	if (id)
		return id;
	return name_add(&c->pipelines, name, c->next_pipeline_id++, false);
}

int64_t tool_id(struct correlator *c, const struct tool_identity *t)
{
	int64_t id = name_lookup(&c->tools, t->name);

	if (id)
		return id;
	return name_add(&c->tools, t->name, c->next_tool_id++, false);
}

static void load_tool(void *ctx, int64_t id, const char *name)
{
	name_add(&((struct correlator *)ctx)->tools, name, id, true);
}

static void load_pipeline(void *ctx, int64_t id, const char *name)
{
	name_add(&((struct correlator *)ctx)->pipelines, name, id, true);
}

void names_load(struct correlator *c)
{
	c->next_tool_id = store_max_id(c->store, "tools") + 1;
	c->next_pipeline_id = store_max_id(c->store, "pipelines") + 1;
	store_each_name(c->store, "tools", load_tool, c);
	store_each_name(c->store, "pipelines", load_pipeline, c);
}

int names_write(struct correlator *c)
{
	for (size_t i = 0; i < c->pipelines.n; i++) {
		const struct name_id *p = &c->pipelines.items[i];
		if (!p->written &&
		    store_put_pipeline(c->store, p->id, p->name, (int64_t)now_realtime_ns()) != 0)
			return -1;
	}
	for (size_t i = 0; i < c->tools.n; i++) {
		const struct name_id *t = &c->tools.items[i];
		char program[sizeof(((struct tool_identity *)0)->program)];
		if (t->written)
			continue;
		/* The program is the name's first word ("samtools sort" -> samtools). */
		copy_string(program, sizeof(program), t->name);
		char *space = strchr(program, ' ');
		if (space)
			*space = '\0';
		if (store_put_tool(c->store, t->id, t->name, program,
				   tool_category(&c->lists, program)) != 0)
			return -1;
	}
	return 0;
}

bool names_pending(const struct correlator *c)
{
	for (size_t i = 0; i < c->pipelines.n; i++)
		if (!c->pipelines.items[i].written)
			return true;
	for (size_t i = 0; i < c->tools.n; i++)
		if (!c->tools.items[i].written)
			return true;
	return false;
}

void names_committed(struct correlator *c)
{
	for (size_t i = 0; i < c->pipelines.n; i++)
		c->pipelines.items[i].written = true;
	for (size_t i = 0; i < c->tools.n; i++)
		c->tools.items[i].written = true;
}

void names_free(struct correlator *c)
{
	for (size_t i = 0; i < c->tools.n; i++)
		free(c->tools.items[i].name);
	for (size_t i = 0; i < c->pipelines.n; i++)
		free(c->pipelines.items[i].name);
	free(c->tools.slots);
	free(c->pipelines.slots);
	c->tools.slots = c->pipelines.slots = NULL;
	c->tools.n_slots = c->pipelines.n_slots = 0;
	vec_free(&c->tools);
	vec_free(&c->pipelines);
}
