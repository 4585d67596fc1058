/*
 * Deny-listed programs inside a run. Outside runs they are system noise,
 * never written. Inside one (`sudo apt-get install x` in a script step, a
 * `dpkg-query` a tool runs) the machine spent that time on the run, and its
 * totals count it: so their rows are kept too, flagged helper = 1 as an
 * engine's plumbing is, so that every total is the sum of the rows a user
 * sees. Like plumbing, they and what they start (apt's `http` method) never
 * name a step, are never its failed tool, and stay out of tool_usage.
 */
#include "aggregator/correlate/internal.h"

void noise_after_exec(struct proc *p, const struct proc *parent)
{
	bool was = p->in.noise;

	p->in.noise = p->in.run && (p->in.denied || (parent && parent->in.noise));
	if (p->in.noise)
		p->row.helper = true;
	else if (was) /* a deny-listed launcher exec'd the user's program (systemd-run --scope) */
		p->row.helper = parent && parent->row.helper;
}
