/*
 * The batch writer: everything changed since the last commit, inside the
 * receiver's transaction. A failed transaction is retried later from the same
 * in-memory state, so nothing here forgets what it wrote until
 * ingest_committed.
 */
#include "aggregator/ingest/internal.h"

#include <stdlib.h>

#include "aggregator/outbox/outbox.h"
#include "common/log.h"
#include "common/timeutil.h"

void pending_clear(struct pending *q, bool release)
{
	for (size_t i = 0; i < q->files.n; i++)
		free(q->files.items[i].path);
	for (size_t i = 0; i < q->cgroups.n; i++) {
		free(q->cgroups.items[i].path);
		free(q->cgroups.items[i].controllers);
	}
	q->files.n = q->file_updates.n = q->ooms.n = q->cgroups.n = q->samples.n = q->hosts.n =
	    q->energy.n = 0;
	q->releases.n = q->row_updates.n = q->rows.n = 0;
	if (release) {
		vec_free(&q->rows);
		vec_free(&q->row_updates);
		vec_free(&q->releases);
		vec_free(&q->files);
		vec_free(&q->file_updates);
		vec_free(&q->ooms);
		vec_free(&q->cgroups);
		vec_free(&q->samples);
		vec_free(&q->hosts);
		vec_free(&q->energy);
	}
}

/* Writes the batch's held samples, or the others, which are queued one by one. */
static int write_samples(struct ingest *g, bool held)
{
	const struct pending *q = &g->pending;

	for (size_t i = 0; i < q->samples.n; i++) {
		const struct sample_row *r = &q->samples.items[i].row;
		if (q->samples.items[i].held != held)
			continue;
		int rc = store_put_sample(g->store, r);
		if (rc == 0 && held)
			rc = store_hold_samples(g->store, r->process_id);
		else if (rc == 0)
			rc = store_ship_sample(g->store, r->process_id, r->ts_epoch_ns);
		if (rc != 0)
			return -1;
	}
	return 0;
}

/*
 * Samples first: a process forgotten below takes this batch's with it. A
 * release queues every sample of its process written so far, so it comes
 * after the held samples and before the rest: a sample taken after the
 * release (in this batch) would otherwise be queued twice.
 */
static int write_all_samples(struct ingest *g)
{
	if (write_samples(g, true) != 0)
		return -1;
	for (size_t i = 0; i < g->pending.releases.n; i++)
		if (store_release_samples(g->store, g->pending.releases.items[i]) != 0)
			return -1;
	return write_samples(g, false);
}

static int by_row_id(const void *a, const void *b)
{
	int64_t x = ((const struct row_to_write *)a)->row->id;
	int64_t y = ((const struct row_to_write *)b)->row->id;

	return (x > y) - (x < y);
}

/*
 * Finished images and changed entries, in id order; entries no longer
 * recorded are forgotten. Ids grow with each new process, so rows in id order
 * are appended to the table's B-tree: in the order the lists keep (newest
 * first) each one went in before the last, and every page split left two
 * half-empty pages: nearly twice the pages, and half as many again to write
 * at each commit.
 */
static int write_processes(struct ingest *g)
{
	struct pending *q = &g->pending;
	int rc = 0;

	q->rows.n = 0;
	for (struct closed_row *c = g->table.closed; c; c = c->next)
		if (!vec_push(&q->rows, ((struct row_to_write){&c->row, true})))
			return -1;
	for (struct proc *p = g->table.dirty; p && rc == 0; p = p->links.dirty_next) {
		if (p->life.row_final) {
			/* Its strings are freed: written whole, it would lose exe, argv and cwd. */
			log_error("process row %lld changed after it was written for good; "
				  "the change is not written",
				  (long long)p->row.id);
			continue;
		}
		if (ingest_recordable(g, p)) {
			if (!vec_push(&q->rows, ((struct row_to_write){&p->row, p->life.exited})))
				return -1;
		} else {
			rc = store_forget_process(g->store, p->row.id);
			p->life.samples_held = false;
		}
	}
	if (rc != 0)
		return rc;
	if (q->rows.n > 1)
		qsort(q->rows.items, q->rows.n, sizeof(q->rows.items[0]), by_row_id);
	for (size_t i = 0; i < q->rows.n && rc == 0; i++)
		rc = store_write_process(g->store, q->rows.items[i].row, q->rows.items[i].ship);
	if (rc != 0) {
		store_drop_processes(g->store);
		return rc;
	}
	return store_flush_processes(g->store);
}

static int write_pending_rows(struct ingest *g)
{
	const struct pending *q = &g->pending;

	for (size_t i = 0; i < q->files.n; i++)
		if (store_put_file(g->store, &q->files.items[i]) != 0)
			return -1;
	for (size_t i = 0; i < q->file_updates.n; i++) {
		const struct file_update *u = &q->file_updates.items[i];
		if (store_update_file_counts(g->store, u->id, u->count, u->failed, u->flags) != 0)
			return -1;
	}
	for (size_t i = 0; i < q->ooms.n; i++)
		if (store_put_oom(g->store, &q->ooms.items[i]) != 0)
			return -1;
	for (size_t i = 0; i < q->cgroups.n; i++)
		if (store_put_cgroup(g->store, &q->cgroups.items[i]) != 0)
			return -1;
	for (size_t i = 0; i < q->hosts.n; i++)
		if (store_put_host_sample(g->store, &q->hosts.items[i]) != 0 ||
		    store_ship_host_sample(g->store, q->hosts.items[i].ts_epoch_ns) != 0)
			return -1;
	for (size_t i = 0; i < q->energy.n; i++)
		if (store_put_energy_sample(g->store, &q->energy.items[i]) != 0 ||
		    store_ship_energy_sample(g->store, &q->energy.items[i]) != 0)
			return -1;
	return 0;
}

/*
 * Rows written before their exit tail, file counts or OOM mark came: those
 * columns alone. The record queued for the shipper takes them too while it is
 * still queued (one record per row: never queued twice); one the shipper has
 * already delivered keeps what it had (docs/architecture.md, Known limits).
 */
static int write_row_updates(struct ingest *g)
{
	for (size_t i = 0; i < g->pending.row_updates.n; i++)
		if (store_update_process(g->store, &g->pending.row_updates.items[i]) != 0 ||
		    store_refresh_shipped_process(g->store, g->pending.row_updates.items[i].id) !=
			0)
			return -1;
	return 0;
}

int ingest_write(struct ingest *g)
{
	if (write_all_samples(g) != 0 || write_processes(g) != 0 || write_row_updates(g) != 0)
		return -1;
	if (correlate_write(&g->corr) != 0 || insight_write(&g->insight) != 0)
		return -1;
	if (write_pending_rows(g) != 0)
		return -1;
	if (g->store->outbox && outbox_trim(g->store->outbox, (int64_t)now_realtime_ns()) != 0)
		return -1;
	return 0;
}
