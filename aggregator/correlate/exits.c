/*
 * A member process ended: what its step and run become (their status, the tool
 * that failed them), and the ends of Slurm's own steps and jobs.
 */
#include "aggregator/correlate/internal.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "aggregator/insight/insight.h"

static enum group_status status_of(const struct process_row *row)
{
	/* Ended by SIGPIPE: its reader had all it wanted (`yes | head`). */
	if (row->has_signal && row->signal == SIGPIPE)
		return GROUP_OK;
	if (row->has_signal)
		return GROUP_KILLED;
	return row->has_exit_code && row->exit_code != 0 ? GROUP_FAILED : GROUP_OK;
}

/* The first failed tool of a step or run: not a shell, wrapper or the engine's helper. */
static void set_failed_tool(struct failed_tool *f, const struct proc *p)
{
	const struct process_row *row = &p->row;

	proc_program_name(p, f->name, sizeof(f->name));
	f->process_id = row->id;
	f->parent_pid = row->ppid;
	f->parent_start_boot_ns = p->life.parent_start_boot_ns;
	f->tool_id = row->tool_id;
	f->has_signal = row->has_signal;
	f->code = row->has_signal ? row->signal : row->exit_code;
}

/* The first and the latest tool that failed in a step or run. */
static void note_failed_tool(struct failed_tool *first, struct failed_tool *last,
			     const struct proc *p, bool failed)
{
	if (!failed || p->row.helper || p->in.plumbing)
		return;
	/* `make` failing after its recipe failed: the recipe's tool is the cause. */
	const char *exe = p->row.exe ? strrchr(p->row.exe, '/') : NULL;
	if (first->process_id && exe && tool_is_driver(exe + 1))
		return;
	/* A script ending with its last command's status ($?) passes that failure on. */
	if (p->in.script &&
	    failed_tool_ended_alike(last, p->row.has_signal, p->row.signal, p->row.exit_code))
		return;
	if (!first->process_id)
		set_failed_tool(first, p);
	set_failed_tool(last, p);
}

/*
 * A step nothing named by its root's end: the root ran no program it could
 * be named after (a subshell, or a command the shell could not run). It is
 * named by how it ended, as the shell would say it.
 */
static void name_unnamed_step(struct step *s, const struct proc *root)
{
	const struct process_row *row = &root->row;
	const char *shell = row->comm[0] ? row->comm : "shell";

	if (s->naming.named || s->name[0])
		return;
	if (!root->life.execed && row->has_exit_code && row->exit_code == 127)
		snprintf(s->name, sizeof(s->name), "%s: command not found", shell);
	else if (!root->life.execed && row->has_exit_code && row->exit_code == 126)
		snprintf(s->name, sizeof(s->name), "%s: command not executable", shell);
	else if (!root->life.execed)
		snprintf(s->name, sizeof(s->name), "%s (subshell)", shell);
	else
		snprintf(s->name, sizeof(s->name), "%s", shell);
	/* Not `named`: a program its orphans run later (setsid ... &) still names it. */
}

void correlate_step_exit(struct correlator *c, struct step *s, struct proc *p, bool failed)
{
	const struct process_row *row = &p->row;

	note_failed_tool(&s->failed, &s->last_failed, p, failed);
	rollup_add_process(&s->r, row, p->life.epoch_offset_ns, failed, !p->life.had_children);
	s->r.rss_now_kb -= (int64_t)p->in.last_sample_rss;
	if (s->r.live)
		s->r.live--;
	step_work_add(s, p, row);
	bool root = same_process(s->root_pid, s->root_start_boot_ns, p);
	if (root && step_is_helper(s, p)) {
		step_dissolve(s, p);
		return;
	}
	step_name_by_work(s, root); /* settled at the root's end, which ends the step */
	if (root) {
		name_unnamed_step(s, p);
		failed_tool_settle(&s->failed, &s->last_failed, row->has_signal, row->signal,
				   row->exit_code);
		s->status = status_of(row);
		s->has_exit_code = row->has_exit_code;
		s->exit_code = row->exit_code;
		s->has_signal = row->has_signal;
		s->signal = row->signal;
	}
	if (s->status == GROUP_RUNNING && s->r.live == 0)
		s->status = GROUP_OK; /* the root exited earlier, unseen */
	step_mark_dirty(s);
	if (s->status != GROUP_RUNNING && c->insight)
		insight_step_end(c->insight, s, row->end_epoch_ns);
}

/* Whether a step's root ended and was seen to: its status is its root's. */
static bool step_root_ended(const struct step *s)
{
	return s->status != GROUP_RUNNING && (s->has_exit_code || s->has_signal);
}

/* Slurm's own step: a process holding the job's cgroup (PrologFlags=Contain), killed at its end. */
static bool slurm_step_is(const struct step *s, const char *which)
{
	const char *dot = strrchr(s->key, '.');

	return dot && !strcmp(dot + 1, which);
}

/*
 * A job without a batch step (a bare srun, salloc) ends as its steps did, as
 * sacct says: failed if a step failed, with that step's exit (a handled
 * failure inside a step that exited 0 fails nothing). Without any step seen
 * to end, it failed if any process failed.
 */
static void slurm_steps_ended(struct run *r)
{
	const struct step *failed = NULL;
	bool any = false;

	for (const struct step *s = r->steps; s; s = s->next) {
		if (!step_root_ended(s) || slurm_step_is(s, "extern"))
			continue;
		any = true;
		if (s->status != GROUP_OK && (!failed || s->exit_code > failed->exit_code))
			failed = s;
	}
	if (!any) {
		r->status = r->r.failed ? GROUP_FAILED : GROUP_OK;
		return;
	}
	r->row.has_exit_code = failed ? failed->has_exit_code : true;
	r->row.exit_code = failed ? failed->exit_code : 0;
	r->row.has_signal = failed && failed->has_signal;
	r->row.signal = failed ? failed->signal : 0;
	r->status = failed ? failed->status : GROUP_OK;
	if (failed)
		r->failed = failed->failed; /* the tool that failed that step */
}

/*
 * A batch job ends as its script did (Slurm's ExitCode and State): an srun
 * step that failed and that the script went on past does not fail it.
 */
static void slurm_job_ended(struct run *r)
{
	const struct step *batch = NULL;

	for (const struct step *s = r->steps; s; s = s->next)
		if (slurm_step_is(s, "batch") && s->status != GROUP_RUNNING)
			batch = s;
	if (!batch || !step_root_ended(batch)) {
		slurm_steps_ended(r);
		return;
	}
	r->row.has_exit_code = batch->has_exit_code;
	r->row.exit_code = batch->exit_code;
	r->row.has_signal = batch->has_signal;
	r->row.signal = batch->signal;
	r->status = batch->status;
	failed_tool_settle(&r->failed, &r->last_failed, batch->has_signal, batch->signal,
			   batch->exit_code);
}

void correlate_run_exit(struct correlator *c, struct run *r, struct proc *p, bool failed)
{
	const struct process_row *row = &p->row;

	note_failed_tool(&r->failed, &r->last_failed, p, failed);
	rollup_add_process(&r->r, row, p->life.epoch_offset_ns, failed, !p->life.had_children);
	r->r.rss_now_kb -= (int64_t)p->in.last_sample_rss;
	if (r->r.live)
		r->r.live--;
	bool engine_ended =
	    r->engine_pid && same_process(r->engine_pid, r->engine_start_boot_ns, p);
	if (engine_ended && r->source != RUN_EXPLICIT) {
		failed_tool_settle(&r->failed, &r->last_failed, row->has_signal, row->signal,
				   row->exit_code);
		r->row.end_epoch_ns = row->end_epoch_ns;
		r->row.has_exit_code = row->has_exit_code;
		r->row.exit_code = row->exit_code;
		r->row.has_signal = row->has_signal;
		r->row.signal = row->signal;
		r->status = status_of(row);
		r->finished = true;
	}
	if (!strcmp(r->engine, "slurm") && r->r.live == 0) {
		r->row.end_epoch_ns = r->r.end_epoch_ns;
		slurm_job_ended(r);
		r->finished = true;
	}
	r->dirty = true;
	if (r->status != GROUP_RUNNING && c->insight) {
		/* While the failed attempts' signals are still open: the run's end closes them. */
		correlate_run_ending(c, r);
		insight_run_end(c->insight, r, row->end_epoch_ns);
	}
}
