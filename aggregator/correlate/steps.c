/* Steps: created when an engine starts one, joined by the processes under it. */
#include "aggregator/correlate/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/insight/insight.h"
#include "aggregator/insight/limits.h"
#include "common/strutil.h"

void set_step(struct proc *p, struct step *s)
{
	if (p->in.step == s)
		return;
	if (p->in.step) {
		p->in.step->refs--;
		if (!p->life.exited && p->in.step->r.live)
			p->in.step->r.live--;
		p->in.step->r.rss_now_kb -= (int64_t)p->in.last_sample_rss;
		step_mark_dirty(p->in.step);
	}
	p->in.step = s;
	p->row.step_id = s ? s->id : 0;
	if (s) {
		s->refs++;
		s->r.live++;
		s->r.rss_now_kb += (int64_t)p->in.last_sample_rss;
		rollup_start(&s->r, p->row.start_epoch_ns, p->life.epoch_offset_ns);
		step_mark_dirty(s);
	}
}

struct step *find_step(struct run *r, const char *key)
{
	if (!r->steps_unindexed)
		return strmap_get(&r->steps_by_key, key);
	for (struct step *s = r->steps; s; s = s->next)
		if (!strcmp(s->key, key))
			return s;
	return NULL;
}

void correlate_add_step(struct run *r, struct step *s)
{
	s->next = r->steps;
	r->steps = s;
	r->n_steps++;
	/* The newest step of a key is the one found, as in the list. */
	if (!r->steps_unindexed && !strmap_put(&r->steps_by_key, s->key, s))
		r->steps_unindexed = true;
}

void step_where(struct correlator *c, struct step *s, const struct proc *root)
{
	copy_string(s->container_id, sizeof(s->container_id), root->row.container_id);
	cgroup_limits(c->cgroup_root ? c->cgroup_root : "/sys/fs/cgroup",
		      root->row.cgroup1_id ? cgroup_path_of(c, root->row.cgroup1_id, true) : NULL,
		      root->row.cgroup_id ? cgroup_path_of(c, root->row.cgroup_id, false) : NULL,
		      &s->memory_limit_kb, &s->cpu_limit);
	copy_string(s->slurm_job, sizeof(s->slurm_job), root->row.slurm_job);
	copy_string(s->slurm_step, sizeof(s->slurm_step), root->row.slurm_step);
	step_mark_dirty(s);
}

/* The job's identity: the engine's job id, or its root's argv and work dir. */
static char *step_identity(const struct step_spec *spec, const struct proc *root)
{
	const char *argv = root->row.argv_json, *cwd = root->row.cwd;
	char *out;

	if (spec->job[0])
		return strdup(spec->job);
	if (!spec->root_is_job || !argv)
		return NULL;
	size_t n = strlen(argv) + (cwd ? strlen(cwd) : 0) + 2;
	out = malloc(n);
	if (out)
		snprintf(out, n, "%s\n%s", argv, cwd ? cwd : "");
	return out;
}

struct step *new_step(struct correlator *c, struct run *r, const struct step_spec *spec,
		      struct proc *root)
{
	struct step *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->id = c->next_step_id++;
	s->run = r;
	s->outbox_mark = c->store ? store_outbox_mark(c->store) : 0;
	copy_string(s->key, sizeof(s->key), spec->key);
	copy_string(s->name, sizeof(s->name), spec->name);
	copy_string(s->kind, sizeof(s->kind), spec->kind);
	s->naming.named = spec->name[0] != '\0';
	s->root_process_id = root->row.id;
	s->root_pid = root->pid;
	s->root_start_boot_ns = root->start_boot_ns;
	s->status = GROUP_RUNNING;
	step_where(c, s, root);
	if (s->naming.named && root->row.argv_json)
		s->signature = strdup(root->row.argv_json);
	copy_string(s->engine_job, sizeof(s->engine_job), spec->job);
	s->identity = step_identity(spec, root);
	if (spec->job_store[0] && !r->toil_job_store[0])
		copy_string(r->toil_job_store, sizeof(r->toil_job_store), spec->job_store);
	step_mark_dirty(s);
	correlate_add_step(r, s);
	r->dirty = true;
	/* A job known by its identity is known as a retry from its start. */
	if (s->identity && c->insight)
		insight_step_named(c->insight, s, root->row.start_epoch_ns);
	return s;
}

/*
 * The attempts of one job carry one name: the latest attempt's, once it has one.
 * An attempt that failed early ran other programs (`mkdir`, then exit) than the
 * one that did the job's work, and a user looks for the job, not for its first
 * program. The earlier attempts' rows are rewritten (and shipped again).
 */
void steps_share_retry_names(struct correlator *c, struct run *r)
{
	for (struct step *s = r->dirty_steps; s; s = s->dirty_next) {
		if (!s->retry_of || !s->name[0])
			continue;
		/* retry_of points to an earlier step, so the walk ends. */
		for (struct step *at = s; at->retry_of;) {
			struct step *prev = NULL;
			for (struct step *o = r->steps; o && !prev; o = o->next)
				if (o->id == at->retry_of && o->id < at->id)
					prev = o;
			if (!prev || prev->dissolved)
				break;
			if (strcmp(prev->name, s->name) != 0) {
				char old[sizeof(prev->name)];
				copy_string(old, sizeof(old), prev->name);
				copy_string(prev->name, sizeof(prev->name), s->name);
				step_mark_dirty(prev);
				if (c->insight)
					insight_step_renamed(c->insight, prev, old);
			}
			/* Named by its job now: no later program of it renames it. */
			prev->naming.named = true;
			prev->naming.named_by_tool = false;
			at = prev;
		}
	}
}

void correlate_run_ending(struct correlator *c, struct run *r)
{
	steps_share_retry_names(c, r);
}

void correlate_resume_step(struct proc *p, struct step *s)
{
	p->in.step = s;
	s->refs++;
	s->r.live++;
}
