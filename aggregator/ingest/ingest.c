/* Lifecycle, event dispatch, the snapshot's end and commit bookkeeping. */
#include "aggregator/ingest/internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/fileutil.h"
#include "common/timeutil.h"

static void release_entry(struct proc *p)
{
	if (p->life.launched)
		p->life.launched->refs--;
	p->life.launched = NULL;
	correlate_release(p);
}

int ingest_init(struct ingest *g, struct store *store, enum ingest_scope scope,
		const char *tools_allow, const char *tools_deny,
		const struct insight_config *signals)
{
	struct insight_config defaults;

	memset(g, 0, sizeof(*g));
	g->store = store;
	g->scope = scope;
	g->launcher_trusted = path_root_only;
	g->next_file_id = store_max_id(store, "files") + 1;
	if (correlator_init(&g->corr, store, tools_allow, tools_deny) != 0)
		return -1;
	g->corr.explicit_only = scope == SCOPE_RUNS;
	if (!signals) {
		insight_config_defaults(&defaults);
		signals = &defaults;
	}
	if (insight_init(&g->insight, store, signals) != 0)
		return -1;
	g->corr.insight = &g->insight;
	g->corr.host_id = g->host_id;
	g->corr.hostname = g->hostname;
	g->corr.machine = g->machine;
	if (proctable_init(&g->table) != 0)
		return -1;
	g->table.on_free = release_entry;
	return 0;
}

void ingest_free(struct ingest *g)
{
	vec_free(&g->held);
	pending_clear(&g->pending, true);
	proctable_free(&g->table);
	correlator_free(&g->corr);
	insight_free(&g->insight);
}

void ingest_event(struct ingest *g, const Tracer__Event *ev)
{
	g->stats.events++;
	switch (ev->kind_case) {
	case TRACER__EVENT__KIND_FORK:
		on_fork(g, ev->ts_ns, ev->fork);
		break;
	case TRACER__EVENT__KIND_EXEC:
		on_exec(g, ev->ts_ns, ev->exec);
		break;
	case TRACER__EVENT__KIND_EXIT:
		on_exit_event(g, ev->ts_ns, ev->exit);
		break;
	case TRACER__EVENT__KIND_EXIT_TAIL:
		on_exit_tail(g, ev->exit_tail);
		break;
	case TRACER__EVENT__KIND_CWD:
		on_cwd(g, ev->cwd);
		break;
	case TRACER__EVENT__KIND_OOM:
		on_oom(g, ev->ts_ns, ev->oom);
		break;
	case TRACER__EVENT__KIND_FILE:
		on_file(g, ev->ts_ns, ev->file);
		break;
	case TRACER__EVENT__KIND_FILE_COUNTS:
		on_file_counts(g, ev->file_counts);
		break;
	case TRACER__EVENT__KIND_CGROUP:
		on_cgroup(g, ev->ts_ns, ev->cgroup);
		break;
	case TRACER__EVENT__KIND_SAMPLE:
		on_sample(g, ev->ts_ns, ev->sample);
		break;
	case TRACER__EVENT__KIND_ENERGY:
		on_energy(g, ev->ts_ns, ev->energy);
		break;
	default:
		break;
	}
}

void ingest_new_generation(struct ingest *g)
{
	g->gen++;
}

void ingest_begin_blind_window(struct ingest *g, uint64_t since_boot_ns)
{
	g->blind_since_boot_ns = since_boot_ns;
	g->blind_processes = 0;
}

uint64_t ingest_end_blind_window(struct ingest *g)
{
	uint64_t n = g->blind_processes;

	g->blind_since_boot_ns = 0;
	g->blind_processes = 0;
	return n;
}

void ingest_snapshot_done(struct ingest *g, uint64_t now_boot_ns)
{
	struct proctable *t = &g->table;

	for (size_t i = 0; i < t->n_buckets; i++) {
		for (struct proc *p = t->buckets[i]; p; p = p->links.hash_next) {
			if (p->life.exited || p->life.seen_gen >= g->gen)
				continue;
			p->life.exited = true;
			p->row.state = "lost";
			g->stats.lost_processes++;
			hold_settle(g, p);
			if (ingest_recordable(g, p))
				proc_mark_dirty(t, p);
			proc_retire(t, p, now_boot_ns);
		}
	}
}

bool ingest_has_pending(const struct ingest *g)
{
	const struct pending *q = &g->pending;

	return g->table.dirty || g->table.closed || q->files.n || q->file_updates.n || q->ooms.n ||
	       q->row_updates.n || q->cgroups.n || q->samples.n || q->releases.n || q->hosts.n ||
	       q->energy.n || correlate_has_pending(&g->corr) || insight_has_pending(&g->insight);
}

void ingest_committed(struct ingest *g, uint64_t now_boot_ns)
{
	struct proctable *t = &g->table;

	for (struct closed_row *c = t->closed; c;) {
		struct closed_row *next = c->next;
		process_row_free_strings(&c->row);
		free(c);
		c = next;
	}
	t->closed = NULL;
	pending_clear(&g->pending, false);
	for (struct proc *p; (p = proc_pop_dirty(t));) {
		/* Written for good: the strings are no longer needed. The file ids
		 * stay until the entry is freed: the counts follow the exit. */
		if (p->life.exited) {
			process_row_free_strings(&p->row);
			p->life.row_final = true;
		}
	}
	/* Free old entries first: they hold the references that keep runs alive. */
	proctable_gc(t, now_boot_ns, EXITED_GRACE_NS);
	correlate_committed(&g->corr);
	insight_committed(&g->insight);
}

void ingest_tick(struct ingest *g, uint64_t now_boot_ns, int64_t now_ns)
{
	hold_release_due(g, now_boot_ns);
	insight_tick(&g->insight, &g->table, g->corr.runs, now_boot_ns, now_ns);
}
