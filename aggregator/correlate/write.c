/* Writing what changed: runs and steps (with their totals), tools and pipelines. */
#include "aggregator/correlate/internal.h"

#include <stdlib.h>

#include "aggregator/insight/insight.h"
#include "aggregator/outbox/outbox.h"

static void fill_run_row(struct run *r)
{
	r->row.source = run_source_name(r->source);
	r->row.pipeline_id = r->pipeline_id;
	r->row.engine = r->engine[0] ? r->engine : NULL;
	r->row.engine_process_id = r->engine_process_id;
	r->row.status = group_status_name(r->status);
	r->row.steps = r->n_steps;
	r->row.toil_job_store = r->toil_job_store;
	rollup_totals(&r->r, &r->row.totals);
	if (!r->row.start_epoch_ns)
		r->row.start_epoch_ns = r->r.start_epoch_ns;
}

static void fill_step_row(const struct step *s, struct step_row *row)
{
	*row = (struct step_row){
	    .id = s->id,
	    .run_id = s->run->row.id,
	    .key = s->key,
	    .name = s->name,
	    .kind = s->kind,
	    .status = group_status_name(s->status),
	    .start_epoch_ns = s->r.start_epoch_ns,
	    .end_epoch_ns = s->status != GROUP_RUNNING ? s->r.end_epoch_ns : 0,
	    .has_exit_code = s->has_exit_code,
	    .has_signal = s->has_signal,
	    .exit_code = s->exit_code,
	    .signal = s->signal,
	    .root_process_id = s->root_process_id,
	    .container_id = s->container_id,
	    .slurm_job = s->slurm_job,
	    .slurm_step = s->slurm_step,
	    .character = s->character,
	    .memory_limit_kb = s->memory_limit_kb,
	    .cpu_limit = s->cpu_limit,
	    .signature = s->signature,
	    .engine_job = s->engine_job,
	};
	rollup_totals(&s->r, &row->totals);
}

int correlate_write(struct correlator *c)
{
	if (names_write(c) != 0 || containers_write(c) != 0)
		return -1;
	for (struct run *r = c->runs; r; r = r->next) {
		if (r->tracer_run.abandoned) {
			if (r->dirty && store_forget_run(c->store, r->row.id) != 0)
				return -1;
			continue;
		}
		/* Forgotten first: the next step may reuse a forgotten one's number. */
		if (steps_forget_write(c, r) != 0)
			return -1;
		steps_share_retry_names(c, r);
		for (struct step *s = r->dirty_steps; s; s = s->dirty_next) {
			s->character = insight_character(&s->r);
			struct step_row row;
			fill_step_row(s, &row);
			if (store_put_step(c->store, &row) != 0 ||
			    (s->status != GROUP_RUNNING && store_ship_step(c->store, s->id) != 0))
				return -1;
		}
		if (r->dirty) {
			fill_run_row(r);
			if (store_put_run(c->store, &r->row) != 0 ||
			    (r->status != GROUP_RUNNING &&
			     store_ship_run(c->store, r->row.id) != 0))
				return -1;
		}
	}
	return batch_write(c);
}

bool correlate_has_pending(const struct correlator *c)
{
	if (names_pending(c) || containers_pending(c) || batch_pending(c))
		return true;
	for (struct run *r = c->runs; r; r = r->next) {
		if (r->dirty || r->dirty_steps)
			return true;
	}
	return false;
}

void correlate_committed(struct correlator *c)
{
	names_committed(c);
	containers_committed(c);
	batch_committed(c);
	for (struct run **link = &c->runs; *link;) {
		struct run *r = *link;
		r->dirty = false;
		for (struct step *s = r->dirty_steps; s;) {
			struct step *next = s->dirty_next;
			s->dirty = false;
			s->dirty_next = NULL;
			s = next;
		}
		r->dirty_steps = NULL;
		steps_dissolved_committed(r);
		if (r->finished && r->refs == 0) {
			*link = r->next;
			free_run(r);
			continue;
		}
		link = &r->next;
	}
}
