/* Which processes are written: every one on the host, or only those in a run;
 * of those, only the ones in the cgroup subtree named (correlate/scope.c). */
#include "aggregator/ingest/internal.h"

bool ingest_recordable(const struct ingest *g, const struct proc *p)
{
	return (g->scope == SCOPE_ALL || p->row.run_id > 0) && correlate_recordable(p) &&
	       correlate_in_scope(&g->corr, &p->row);
}

void ingest_touch(struct ingest *g, struct proc *p)
{
	p->life.seen_gen = g->gen;
	if (p->life.row_final) {
		/* Written for good, its strings freed: only the columns a late fact sets. */
		struct process_update u = {.id = p->row.id,
					   .late = true,
					   .files_overflow = p->row.files_overflow,
					   .oom_killed = p->row.oom_killed};
		if (ingest_recordable(g, p) && !vec_push(&g->pending.row_updates, u))
			g->stats.oom++;
		return;
	}
	/* A process that became deny-listed at exec may have been written at fork:
	 * it goes through the write path once more, to be forgotten. */
	if (ingest_recordable(g, p) || p->in.denied)
		proc_mark_dirty(&g->table, p);
}
