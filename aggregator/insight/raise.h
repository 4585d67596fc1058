/* Inside the insight layer: raising and updating signal rows. */
#ifndef TRACER_INSIGHT_RAISE_H
#define TRACER_INSIGHT_RAISE_H

#include <string.h>

#include "aggregator/insight/insight.h"

/* A signal row of a run, blank but for these. */
void insight_row_begin(struct signal_row *s, const char *kind, const char *severity, int64_t run_id,
		       int64_t now_ns, int64_t at_ns);
/* Queues a new signal (assigning its id); active ones are remembered. Returns the id. */
int64_t insight_raise(struct insight *in, struct signal_row *s);
/*
 * A failure that waits for its run's verdict (killed, tool_failed) but comes
 * after the run already ended (a process that outlived it): the verdict was
 * given without it, so it is settled now as not the run's cause, and shipped.
 */
void insight_settle_after_run(struct signal_row *s, const struct run *r);
/* The remembered active signal with this id, or NULL. */
struct signal_row *insight_active(struct insight *in, int64_t id);
/* Queues the changed active signal for writing; forgets it once inactive. */
void insight_update(struct insight *in, struct signal_row *s);
/* Final severities once a step or a run ended (signals.c has the rules). */
void insight_step_verdicts(struct insight *in, struct step *st);
/* cause: insight_script_cause for a script run that did not end ok, else NULL. */
void insight_run_verdicts(struct insight *in, struct run *r, const struct step *cause);
/* A run whose status is its script's last command's: a plain script, a Slurm batch job. */
static inline bool insight_run_is_script(const struct run *r)
{
	return !strcmp(r->engine, "script") || !strcmp(r->engine, "slurm");
}
/* The step a failed script run failed on; NULL when the script went on past
 * every failed step and its own status (`exit 4`) failed it. */
struct step *insight_script_cause(struct insight *in, struct run *r);
/* A pipefail script that failed on a producer's SIGPIPE: that step is its cause. */
void insight_pipefail_cause(struct insight *in, struct run *r, int64_t now_ns);
/* The process's stall, if any, is over. */
void insight_stall_end(struct insight *in, struct proc *p, int64_t now_ns);

#endif
