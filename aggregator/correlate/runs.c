/* Runs: created by `tracer run`, an engine, a script or a Slurm job; joined by processes. */
#include "aggregator/correlate/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/strutil.h"
#include "common/timeutil.h"

static void run_name(const char *what, int64_t start_ns, char *out, size_t size)
{
	time_t secs = (time_t)(start_ns / (int64_t)NSEC_PER_SEC);
	struct tm tm;
	char stamp[32];

	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(out, size, "%s-%s", what, stamp);
}

struct run *correlate_explicit_run(struct correlator *c, const struct run_row *row)
{
	struct run *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->row = *row;
	r->source = RUN_EXPLICIT;
	if (row->pipeline)
		r->pipeline_id = pipeline_id(c, row->pipeline);
	r->status = GROUP_RUNNING;
	r->dirty = true;
	r->next = c->runs;
	c->runs = r;
	return r;
}

struct run *new_run(struct correlator *c, enum run_source source, const char *engine,
		    const char *pipeline, struct proc *p)
{
	struct run *r = calloc(1, sizeof(*r));
	char name[PIPELINE_NAME_MAX + 32];

	if (!r)
		return NULL;
	r->row.id = c->store->next_run_id++;
	run_name(pipeline && *pipeline ? pipeline : engine, p->row.start_epoch_ns, name,
		 sizeof(name));
	r->row.name = strdup(name);
	r->row.pipeline = pipeline && *pipeline ? strdup(pipeline) : NULL;
	r->source = source;
	copy_string(r->row.boot_id, sizeof(r->row.boot_id), p->row.boot_id);
	copy_string(r->row.host_id, sizeof(r->row.host_id), c->host_id);
	copy_string(r->row.hostname, sizeof(r->row.hostname), c->hostname);
	copy_string(r->row.arch, sizeof(r->row.arch), c->machine);
	r->row.start_epoch_ns = p->row.start_epoch_ns;
	r->row.command_process_id = p->row.id;
	if (r->row.pipeline)
		r->pipeline_id = pipeline_id(c, r->row.pipeline);
	copy_string(r->engine, sizeof(r->engine), engine);
	r->status = GROUP_RUNNING;
	rollup_start(&r->r, p->row.start_epoch_ns, p->life.epoch_offset_ns);
	r->dirty = true;
	r->next = c->runs;
	c->runs = r;
	log_info("run %lld '%s' (%s) recognised from pid %u", (long long)r->row.id, name, engine,
		 p->pid);
	return r;
}

struct run *correlate_run_by_id(struct correlator *c, int64_t id)
{
	for (struct run *r = c->runs; r; r = r->next)
		if (r->row.id == id)
			return r;
	return NULL;
}

bool weak_run(const struct run *r)
{
	return r->source == RUN_SCRIPT || r->source == RUN_SLURM;
}

void set_run(struct proc *p, struct run *r)
{
	if (p->in.run == r)
		return;
	if (p->in.run) {
		/* Moving to another run: it no longer lives or holds memory here. */
		p->in.run->refs--;
		if (!p->life.exited && p->in.run->r.live)
			p->in.run->r.live--;
		p->in.run->r.rss_now_kb -= (int64_t)p->in.last_sample_rss;
		p->in.run->dirty = true;
	}
	p->in.run = r;
	p->row.run_id = r ? r->row.id : 0;
	if (r) {
		r->refs++;
		r->r.live++;
		r->r.rss_now_kb += (int64_t)p->in.last_sample_rss;
		rollup_start(&r->r, p->row.start_epoch_ns, p->life.epoch_offset_ns);
	}
}

bool same_process(uint32_t pid, uint64_t start, const struct proc *p)
{
	return p && pid == p->pid &&
	       proc_same_start(start, true, p->start_boot_ns, p->start_coarse);
}

void free_run(struct run *r)
{
	for (struct step *s = r->steps; s;) {
		struct step *next = s->next;
		step_free(s);
		s = next;
	}
	for (struct step *s = r->dissolved; s;) {
		struct step *next = s->next;
		step_free(s);
		s = next;
	}
	strmap_free(&r->steps_by_key);
	free(r->row.name);
	free(r->row.pipeline);
	free(r);
}
