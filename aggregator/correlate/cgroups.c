/*
 * The cgroup id -> path map (events carry ids, the collector reports paths as
 * cgroups appear) and what a process's cgroups say about its context.
 */
#include "aggregator/correlate/internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/hostinfo.h"

static unsigned cgroup_bucket(uint64_t id, bool v1)
{
	return (unsigned)((id * 11400714819323198485ull + v1) >> 54) & 1023;
}

void correlate_cgroup(struct correlator *c, uint64_t id, bool v1_memory, const char *path)
{
	unsigned b = cgroup_bucket(id, v1_memory);

	if (!path)
		return;
	for (struct cgroup_entry *e = c->cgroups[b]; e; e = e->next) {
		if (e->id == id && e->v1_memory == v1_memory) {
			if (strcmp(e->path, path) != 0) {
				char *copy = strdup(path);
				if (copy) {
					free(e->path);
					e->path = copy;
					cgroup_path_parse(copy, &e->context);
				}
			}
			return;
		}
	}
	struct cgroup_entry *e = malloc(sizeof(*e));
	if (!e || !(e->path = strdup(path))) {
		free(e);
		return;
	}
	e->id = id;
	e->v1_memory = v1_memory;
	cgroup_path_parse(e->path, &e->context);
	e->next = c->cgroups[b];
	c->cgroups[b] = e;
}

static const struct cgroup_entry *cgroup_entry_of(const struct correlator *c, uint64_t id,
						  bool v1_memory)
{
	if (!id)
		return NULL;
	for (struct cgroup_entry *e = c->cgroups[cgroup_bucket(id, v1_memory)]; e; e = e->next)
		if (e->id == id && e->v1_memory == v1_memory)
			return e;
	return NULL;
}

const char *cgroup_path_of(const struct correlator *c, uint64_t id, bool v1_memory)
{
	const struct cgroup_entry *e = cgroup_entry_of(c, id, v1_memory);

	return e ? e->path : NULL;
}

void cgroup_context_of(struct correlator *c, const struct process_row *r,
		       struct cgroup_context *out)
{
	static const struct cgroup_context none;
	const struct cgroup_entry *e1 = cgroup_entry_of(c, r->cgroup1_id, true);
	const struct cgroup_entry *e2 = cgroup_entry_of(c, r->cgroup_id, false);
	const struct cgroup_context *v1 = e1 ? &e1->context : &none;

	*out = e2 ? e2->context : none;
#define PREFER_V1(f)                                                                               \
	if (v1->f[0])                                                                              \
	memcpy(out->f, v1->f, sizeof(out->f))
	PREFER_V1(runtime);
	PREFER_V1(container_id);
	PREFER_V1(pod_uid);
	PREFER_V1(ecs_task);
	PREFER_V1(slurm_job);
	PREFER_V1(slurm_step);
	if (!out->unit[0])
		PREFER_V1(unit);
#undef PREFER_V1
}

static void load_cgroup(void *ctx, uint64_t id, bool v1_memory, const char *path)
{
	correlate_cgroup(ctx, id, v1_memory, path);
}

/* Cgroups of this boot the database already knows (an aggregator restart). */
void cgroups_load(struct correlator *c)
{
	uint8_t boot[BOOT_ID_LEN];
	char boot_hex[33] = "";

	if (read_boot_id(boot) == 0)
		format_hex(boot, sizeof(boot), boot_hex, sizeof(boot_hex));
	store_each_cgroup(c->store, boot_hex, load_cgroup, c);
}

void cgroups_free(struct correlator *c)
{
	for (size_t b = 0; b < 1024; b++) {
		for (struct cgroup_entry *e = c->cgroups[b]; e;) {
			struct cgroup_entry *next = e->next;
			free(e->path);
			free(e);
			e = next;
		}
		c->cgroups[b] = NULL;
	}
}
