/*
 * Resuming after an aggregator restart: the processes, runs and steps a
 * previous aggregator left running, so later events find them.
 */
#include "aggregator/ingest/internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/strutil.h"
#include "common/timeutil.h"

static void load_process(void *ctx, struct process_row *r)
{
	struct ingest *g = ctx;
	struct proc *p = proc_by_pid(&g->table, r->pid);

	if (p) {
		process_row_free_strings(r);
		return;
	}
	p = proc_add(&g->table, r->pid, r->proc_start_boot_ns, r->from_snapshot);
	if (!p) {
		process_row_free_strings(r);
		return;
	}
	p->row = *r;
	p->life.execed = true;
	p->life.seen_gen = 0;
	/*
	 * The clock it started under (proc_epoch_ns). A later image's boot-clock
	 * start is not stored, but its first image's row holds the process's
	 * offset; only without that row does today's offset stand in.
	 */
	if (r->image == 0)
		p->life.epoch_offset_ns = r->start_epoch_ns - (int64_t)r->proc_start_boot_ns;
	else if (store_first_image_offset(g->store, r, &p->life.epoch_offset_ns) != 0)
		p->life.epoch_offset_ns = realtime_offset_ns();
}

static struct proc *entry_with_row_id(struct ingest *g, int64_t id)
{
	for (size_t i = 0; i < g->table.n_buckets && id; i++)
		for (struct proc *p = g->table.buckets[i]; p; p = p->links.hash_next)
			if (p->row.id == id)
				return p;
	return NULL;
}

struct resume_step_ctx {
	struct ingest *g;
	struct run *run;
};

/* A step of a resumed run, so later processes join it rather than a new one. */
static int resume_step(void *ctx, const struct stored_step *row)
{
	struct resume_step_ctx *c = ctx;
	struct run *r = c->run;
	struct step *s = calloc(1, sizeof(*s));

	if (!s)
		return -1;
	s->id = row->id;
	s->run = r;
	copy_string(s->key, sizeof(s->key), row->key);
	copy_string(s->name, sizeof(s->name), row->name);
	s->naming.named = s->name[0] != '\0';
	copy_string(s->kind, sizeof(s->kind), row->kind);
	copy_string(s->engine_job, sizeof(s->engine_job), row->engine_job);
	if (row->engine_job[0]) /* a retry after the restart is still known by its job */
		s->identity = strdup(row->engine_job);
	s->root_process_id = row->root_process_id;
	struct proc *root = entry_with_row_id(c->g, s->root_process_id);
	if (root) {
		s->root_pid = root->pid;
		s->root_start_boot_ns = root->start_boot_ns;
	}
	/* The step's clock is its root's, like the run's (resume_run). */
	rollup_start(&s->r, row->start_epoch_ns,
		     root ? root->life.epoch_offset_ns : r->r.clock_offset_ns);
	correlate_add_step(r, s);
	r->step_seq++;
	return 0;
}

/* The processes that started and that end the run, if they still run. */
static void find_run_processes(struct ingest *g, struct run *r, struct proc **engine,
			       struct proc **command)
{
	*engine = entry_with_row_id(g, r->engine_process_id);
	if (*engine) {
		r->engine_pid = (*engine)->pid;
		r->engine_start_boot_ns = (*engine)->start_boot_ns;
	}
	*command = entry_with_row_id(g, r->row.command_process_id);
	if (*command) {
		r->tracer_run.has_command = true;
		r->tracer_run.command_pid = (*command)->pid;
		r->tracer_run.command_start_boot_ns = (*command)->start_boot_ns;
		r->tracer_run.command_coarse = (*command)->start_coarse;
	}
}

static int resume_run(void *ctx, struct open_run *o)
{
	struct ingest *g = ctx;
	struct run *r = correlate_explicit_run(&g->corr, &o->row);
	struct proc *engine, *command, *launcher = NULL;

	if (!r) {
		free(o->row.name);
		free(o->row.pipeline);
		return -1;
	}
	r->source = run_source_parse(o->source);
	r->row.source = NULL;
	r->row.engine = NULL;
	copy_string(r->engine, sizeof(r->engine), o->engine);
	copy_string(r->toil_job_store, sizeof(r->toil_job_store), o->toil_job_store);
	r->engine_process_id = o->row.engine_process_id;
	r->pipeline_id = o->row.pipeline_id;
	r->dirty = false;
	find_run_processes(g, r, &engine, &command);
	/* The run's clock is that of the process that started it, if it still runs. */
	struct proc *first = command ? command : engine;
	rollup_start(&r->r, o->row.start_epoch_ns,
		     first ? first->life.epoch_offset_ns : realtime_offset_ns());
	if (o->row.launcher_pid)
		launcher =
		    proc_find(&g->table, o->row.launcher_pid, o->row.launcher_start_boot_ns, true);
	if (launcher) {
		launcher->life.launched = r;
		r->refs++;
	}
	/* The process that ends it is gone: it ended while we were down. */
	if (r->source == RUN_EXPLICIT ? !launcher : !engine)
		r->finished = true;
	/* A launcher gone before it started a command ran nothing. */
	if (r->source == RUN_EXPLICIT && !launcher && !o->row.command_process_id)
		launch_abandon(r);
	struct resume_step_ctx sc = {g, r};
	store_each_step_of_run(g->store, r->row.id, resume_step, &sc);
	return 0;
}

/* Points the resumed processes at their runs and steps. */
static void rejoin_processes(struct ingest *g)
{
	for (size_t i = 0; i < g->table.n_buckets; i++) {
		for (struct proc *p = g->table.buckets[i]; p; p = p->links.hash_next) {
			struct run *r = correlate_run_by_id(&g->corr, p->row.run_id);
			int64_t step_id = p->row.step_id;
			if (!r)
				continue;
			correlate_join(&g->corr, p, r);
			for (struct step *s = r->steps; s; s = s->next)
				if (s->id == step_id)
					correlate_resume_step(p, s);
		}
	}
}

int ingest_load_state(struct ingest *g)
{
	if (store_each_running_process(g->store, load_process, g) != 0)
		return -1;
	/* Runs that had not ended, with their engines and steps. */
	if (store_each_open_run(g->store, resume_run, g) != 0)
		return -1;
	rejoin_processes(g);
	log_info("resumed %zu running processes from the database", g->table.count);
	return 0;
}
