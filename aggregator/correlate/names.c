/* Tool and pipeline ids: one per distinct name, kept for the aggregator's life. */
#include "aggregator/correlate/internal.h"
#include "aggregator/outbox/outbox.h"

#include <stdlib.h>
#include <string.h>

#include "common/strmap.h"
#include "common/strutil.h"
#include "common/timeutil.h"
#include "common/vec.h"

/* NAME's id, or 0; *kept (if asked) the copy of it the list keeps. */
static int64_t name_lookup(const struct name_ids *v, const char *name, const char **kept)
{
	if (!v->unindexed) {
		const char *in_map = NULL;
		int64_t id = (int64_t)(intptr_t)strmap_get_kept(&v->index, name, &in_map);
		if (id && kept)
			*kept = in_map;
		return id;
	}
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->items[i].name, name)) {
			if (kept)
				*kept = v->items[i].name;
			return v->items[i].id;
		}
	return 0;
}

static int64_t name_add(struct name_ids *v, const char *name, int64_t id, bool written,
			const char **kept)
{
	struct name_id entry = {.name = strdup(name), .id = id, .written = written};

	if (!entry.name || !vec_push(v, entry)) {
		free(entry.name);
		return 0;
	}
	if (kept)
		*kept = entry.name;
	/* The index keeps the name the array owns (strdup'd: it does not move). */
	if (!v->unindexed && !strmap_put(&v->index, entry.name, (void *)(intptr_t)id))
		v->unindexed = true; /* without memory for the index, lookups scan */
	return id;
}

int64_t pipeline_id(struct correlator *c, const char *name)
{
	int64_t id = name_lookup(&c->pipelines, name, NULL);

	if (id)
		return id;
	return name_add(&c->pipelines, name, c->next_pipeline_id++, false, NULL);
}

int64_t tool_id(struct correlator *c, const struct tool_identity *t, const char **kept_name)
{
	int64_t id = name_lookup(&c->tools, t->name, kept_name);

	if (id)
		return id;
	return name_add(&c->tools, t->name, c->next_tool_id++, false, kept_name);
}

static void load_tool(void *ctx, int64_t id, const char *name)
{
	name_add(&((struct correlator *)ctx)->tools, name, id, true, NULL);
}

static void load_pipeline(void *ctx, int64_t id, const char *name)
{
	name_add(&((struct correlator *)ctx)->pipelines, name, id, true, NULL);
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
		/* Shipped too: the fleet's readers name tools as the host does. */
		if (store_put_tool(c->store, t->id, t->name, program,
				   tool_category(&c->lists, program)) != 0 ||
		    store_ship_tool(c->store, t->id) != 0)
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
	strmap_free(&c->tools.index);
	strmap_free(&c->pipelines.index);
	c->tools.unindexed = c->pipelines.unindexed = false;
	vec_free(&c->tools);
	vec_free(&c->pipelines);
}
