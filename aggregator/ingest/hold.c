/*
 * The outbox's hold on a fork child's samples. Until the child execs, it is
 * not known whether it is recorded (an exec may make it deny-listed noise), so
 * its samples are written but not queued for the shipper; after SAMPLE_HOLD_NS
 * they are shipped anyway, and an exec then keeps the pre-exec image as a row
 * of its own.
 */
#include "aggregator/ingest/internal.h"

void hold_settle(struct ingest *g, struct proc *p)
{
	if (!p->life.samples_held)
		return;
	if (!ingest_recordable(g, p)) {
		proc_mark_dirty(&g->table, p);
		return;
	}
	/*
	 * Out of memory: the process stays held, and so do its later samples, so
	 * the release that comes later (the next settle, or the next aggregator
	 * start) queues each of them once.
	 */
	if (!vec_push(&g->pending.releases, p->row.id)) {
		g->stats.oom++;
		return;
	}
	p->life.samples_held = false;
}

/* The 5 s after the fork are over: the fork image keeps its own row, its samples ship. */
static void end_hold(struct ingest *g, struct proc *p)
{
	p->life.fork_image_shipped = true;
	hold_settle(g, p);
}

bool hold_sample(struct ingest *g, struct proc *p, uint64_t ts_boot_ns)
{
	bool held = false;

	if (g->store->outbox && !p->life.execed && !p->life.fork_image_shipped) {
		if (ts_boot_ns < p->start_boot_ns + SAMPLE_HOLD_NS) {
			struct held_proc h = {p->pid, p->start_coarse, p->start_boot_ns};
			/* Out of memory: held until a later sample, an exec or the exit instead. */
			if (!p->life.samples_held && !vec_push(&g->held, h))
				g->stats.oom++;
			held = p->life.samples_held = true;
		} else {
			end_hold(g, p);
		}
	}
	return held || p->life.samples_held; /* a release not queued yet: see hold_settle */
}

/*
 * A process sampled while young and idle since sends no further sample
 * (unchanged processes are not sampled), so without this its held samples
 * would wait for its exec or exit, however late.
 */
void hold_release_due(struct ingest *g, uint64_t now_boot_ns)
{
	size_t kept = 0;

	for (size_t i = 0; i < g->held.n; i++) {
		struct held_proc h = g->held.items[i];
		struct proc *p = proc_find(&g->table, h.pid, h.start_boot_ns, h.coarse);
		if (!p || !p->life.samples_held)
			continue; /* settled meanwhile: exec, exit, or a later sample */
		if (now_boot_ns >= p->start_boot_ns + SAMPLE_HOLD_NS && !p->life.execed) {
			end_hold(g, p);
			if (!p->life.samples_held)
				continue;
		}
		g->held.items[kept++] = h;
	}
	g->held.n = kept;
}
