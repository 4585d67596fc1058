/*
 * Stalls and slow steps, while they happen. A tracked process is stalled when
 * it is alive, has no live children, and showed no CPU time, no I/O and
 * started nothing for cfg.stall_ns. A step is slower than usual when it has
 * run cfg.slow_factor times its median wall time over earlier runs of the
 * same pipeline (and at least cfg.slow_min_extra_ns longer).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/insight/insight.h"
#include "aggregator/insight/raise.h"
#include "common/timeutil.h"
#include "common/vec.h"

void insight_stall_end(struct insight *in, struct proc *p, int64_t now_ns)
{
	struct signal_row *s = insight_active(in, p->act.stall_signal_id);
	char prog[64];

	p->act.stall_signal_id = 0;
	if (!s)
		return;
	proc_program_name(p, prog, sizeof(prog));
	double stalled = (double)(now_ns - s->at_epoch_ns) / 1e9;
	s->active = false;
	s->value = stalled;
	snprintf(s->message, sizeof(s->message),
		 "%s (pid %u) stalled for %.0f s: alive, but no CPU, no I/O and no new processes; "
		 "then it %s",
		 prog, p->pid, stalled, p->life.exited ? "ended" : "resumed");
	snprintf(s->details, sizeof(s->details), "{\"stalled_s\":%.3f,\"ended\":%s}", stalled,
		 p->life.exited ? "true" : "false");
	insight_update(in, s);
}

void insight_activity(struct insight *in, struct proc *p, uint64_t now_boot_ns, int64_t now_ns)
{
	p->act.last_activity_boot_ns = now_boot_ns;
	insight_stall_end(in, p, now_ns);
}

static void check_stall(struct insight *in, struct proc *p, uint64_t now_boot_ns, int64_t now_ns)
{
	struct signal_row s;
	char prog[64];

	if (p->life.exited || p->act.stall_signal_id || !p->row.run_id || p->row.helper ||
	    !p->act.last_activity_boot_ns || now_boot_ns < p->act.last_activity_boot_ns ||
	    now_boot_ns - p->act.last_activity_boot_ns < in->cfg.stall_ns)
		return;
	proc_program_name(p, prog, sizeof(prog));
	uint64_t quiet = now_boot_ns - p->act.last_activity_boot_ns;
	memset(&s, 0, sizeof(s));
	s.kind = "stalled";
	s.severity = "warning";
	s.detected_epoch_ns = now_ns;
	s.at_epoch_ns = now_ns - (int64_t)quiet;
	s.run_id = p->row.run_id;
	s.step_id = p->row.step_id;
	s.process_id = p->row.id;
	s.tool_id = p->row.tool_id;
	s.has_value = s.has_threshold = true;
	s.value = (double)quiet / 1e9;
	s.threshold = (double)in->cfg.stall_ns / 1e9;
	s.unit = "s";
	s.active = true;
	snprintf(
	    s.message, sizeof(s.message),
	    "%s (pid %u) is stalled: alive, but no CPU, no I/O and no new processes for %.0f s",
	    prog, p->pid, s.value);
	snprintf(s.details, sizeof(s.details), "{\"quiet_s\":%.3f}", s.value);
	p->act.stall_signal_id = insight_raise(in, &s);
}

/* Median wall time of the step in earlier runs, cached per (pipeline, name, run). */
static struct history_entry *history(struct insight *in, const struct step *st)
{
	const struct run *r = st->run;

	for (size_t i = 0; i < in->n_history; i++) {
		struct history_entry *h = &in->history[i];
		if (h->pipeline_id == r->pipeline_id && h->run_id == r->row.id &&
		    !strcmp(h->name, st->name))
			return h;
	}
	if (in->n_history >= 1024) {
		for (size_t i = 0; i < in->n_history; i++)
			free(in->history[i].name);
		in->n_history = 0;
	}
	if (!vec_grow(in->history, in->cap_history, in->n_history + 1))
		return NULL;
	struct history_entry *h = &in->history[in->n_history];
	h->name = strdup(st->name);
	if (!h->name)
		return NULL;
	h->pipeline_id = r->pipeline_id;
	h->run_id = r->row.id;
	if (store_step_history(in->store, r->pipeline_id, st->name, r->row.id, &h->median_ns,
			       &h->samples) != 0)
		h->samples = 0;
	in->n_history++;
	return h;
}

/* Is a step that has run `wall_ns` slower than usual? Fills the signal if so. */
bool insight_slow(struct insight *in, struct step *st, int64_t wall_ns, struct signal_row *s)
{
	const struct insight_config *cfg = &in->cfg;
	struct history_entry *h;

	if (!st->run || !st->run->pipeline_id || !st->name[0] || !(h = history(in, st)) ||
	    h->samples < cfg->slow_min_history || h->median_ns <= 0)
		return false;
	if ((double)wall_ns < cfg->slow_factor * (double)h->median_ns ||
	    wall_ns - h->median_ns < (int64_t)cfg->slow_min_extra_ns)
		return false;
	memset(s, 0, sizeof(*s));
	s->kind = "slower_than_usual";
	s->severity = "warning";
	s->run_id = st->run->row.id;
	s->step_id = st->id;
	s->tool_id = st->main_tool_id;
	s->at_epoch_ns = st->r.start_epoch_ns;
	s->has_value = s->has_threshold = true;
	s->value = (double)wall_ns / (double)h->median_ns;
	s->threshold = cfg->slow_factor;
	s->unit = "x usual wall time";
	snprintf(s->message, sizeof(s->message),
		 "step '%s' %s %.0f s, %.1fx its usual %.0f s (median of %u earlier runs)",
		 st->name, st->status == GROUP_RUNNING ? "has been running for" : "took",
		 (double)wall_ns / 1e9, s->value, (double)h->median_ns / 1e9, h->samples);
	snprintf(s->details, sizeof(s->details),
		 "{\"wall_s\":%.3f,\"usual_s\":%.3f,\"history\":%u}", (double)wall_ns / 1e9,
		 (double)h->median_ns / 1e9, h->samples);
	return true;
}

void insight_tick(struct insight *in, struct proctable *t, struct run *runs, uint64_t now_boot_ns,
		  int64_t now_ns)
{
	/* Without samples no activity is visible: stalls cannot be told apart. */
	bool sampling = in->last_sample_boot_ns && now_boot_ns >= in->last_sample_boot_ns &&
			now_boot_ns - in->last_sample_boot_ns < 10 * NSEC_PER_SEC;

	if (sampling) {
		in->tick_gen++;
		for (struct proc *p = t->live; p; p = p->links.live_next) {
			struct proc *parent = proc_by_pid(t, p->row.ppid);
			if (parent)
				parent->act.child_mark = in->tick_gen;
		}
		for (struct proc *p = t->live; p; p = p->links.live_next)
			if (p->act.child_mark != in->tick_gen)
				check_stall(in, p, now_boot_ns, now_ns);
	}
	for (struct run *r = runs; r; r = r->next) {
		for (struct step *st = r->steps; st; st = st->next) {
			struct signal_row s;
			if (st->status != GROUP_RUNNING || st->watch.slow_signal_id ||
			    !st->r.start_epoch_ns)
				continue;
			if (insight_slow(in, st, now_ns - st->r.start_epoch_ns, &s)) {
				s.detected_epoch_ns = now_ns;
				s.active = true;
				st->watch.slow_signal_id = insight_raise(in, &s);
			}
		}
	}
}
