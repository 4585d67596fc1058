#include "aggregator/model/proctable.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INITIAL_BUCKETS 4096

int proctable_init(struct proctable *t)
{
	memset(t, 0, sizeof(*t));
	t->n_buckets = INITIAL_BUCKETS;
	t->buckets = calloc(t->n_buckets, sizeof(*t->buckets));
	return t->buckets ? 0 : -1;
}

static void unlink_live(struct proctable *t, struct proc *p)
{
	if (p->links.live_prev)
		p->links.live_prev->links.live_next = p->links.live_next;
	else if (t->live == p)
		t->live = p->links.live_next;
	if (p->links.live_next)
		p->links.live_next->links.live_prev = p->links.live_prev;
	p->links.live_prev = p->links.live_next = NULL;
}

static void free_proc(struct proctable *t, struct proc *p)
{
	unlink_live(t, p);
	if (t->on_free)
		t->on_free(p);
	process_row_free_strings(&p->row);
	free(p->life.file_ids);
	free(p->life.cwd);
	proc_slab_put(&t->slabs, p);
}

void proctable_free(struct proctable *t)
{
	for (size_t i = 0; i < t->n_buckets; i++) {
		struct proc *p = t->buckets[i];
		while (p) {
			struct proc *next = p->links.hash_next;
			if (!p->links.in_gc)
				free_proc(t, p);
			p = next;
		}
	}
	/* Retired entries may already be unhashed (their pid was reused). */
	for (struct proc *p = t->gc_head; p;) {
		struct proc *next = p->links.gc_next;
		free_proc(t, p);
		p = next;
	}
	for (struct closed_row *c = t->closed; c;) {
		struct closed_row *next = c->next;
		process_row_free_strings(&c->row);
		free(c);
		c = next;
	}
	proc_slabs_free(&t->slabs);
	free(t->buckets);
	memset(t, 0, sizeof(*t));
}

static size_t bucket_of(const struct proctable *t, uint32_t pid)
{
	return (pid * 2654435761u) & (t->n_buckets - 1);
}

static void grow(struct proctable *t)
{
	size_t n = t->n_buckets * 2;
	struct proc **b = calloc(n, sizeof(*b));

	if (!b)
		return; /* keep working with longer chains */
	for (size_t i = 0; i < t->n_buckets; i++) {
		struct proc *p = t->buckets[i];
		while (p) {
			struct proc *next = p->links.hash_next;
			size_t k = (p->pid * 2654435761u) & (n - 1);
			p->links.hash_next = b[k];
			b[k] = p;
			p = next;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->n_buckets = n;
}

bool proc_same_start(uint64_t a, bool a_coarse, uint64_t b, bool b_coarse)
{
	uint64_t diff = a > b ? a - b : b - a;

	if (a == b)
		return true;
	return (a_coarse || b_coarse) && diff < START_TOLERANCE_NS;
}

struct proc *proc_by_pid(struct proctable *t, uint32_t pid)
{
	for (struct proc *p = t->buckets[bucket_of(t, pid)]; p; p = p->links.hash_next)
		if (p->pid == pid)
			return p;
	return NULL;
}

struct proc *proc_find(struct proctable *t, uint32_t pid, uint64_t start_boot_ns, bool coarse)
{
	struct proc *p = proc_by_pid(t, pid);

	if (p && proc_same_start(p->start_boot_ns, p->start_coarse, start_boot_ns, coarse))
		return p;
	return NULL;
}

struct proc *proc_add(struct proctable *t, uint32_t pid, uint64_t start_boot_ns, bool coarse)
{
	struct proc *p = proc_slab_get(&t->slabs);
	size_t k;

	if (!p)
		return NULL;
	/* At most one entry per bucket on average: a fork looks up a new pid,
	 * which walks its whole chain, each entry a cache miss. */
	if (t->count >= t->n_buckets)
		grow(t);
	p->pid = pid;
	p->start_boot_ns = start_boot_ns;
	p->start_coarse = coarse;
	k = bucket_of(t, pid);
	p->links.hash_next = t->buckets[k];
	t->buckets[k] = p;
	t->count++;
	p->links.live_next = t->live;
	if (t->live)
		t->live->links.live_prev = p;
	t->live = p;
	return p;
}

void proc_unhash(struct proctable *t, struct proc *p)
{
	struct proc **link = &t->buckets[bucket_of(t, p->pid)];

	for (; *link; link = &(*link)->links.hash_next) {
		if (*link == p) {
			*link = p->links.hash_next;
			p->links.hash_next = NULL;
			t->count--;
			return;
		}
	}
}

void proc_mark_dirty(struct proctable *t, struct proc *p)
{
	if (p->links.dirty)
		return;
	p->links.dirty = true;
	p->links.dirty_next = t->dirty;
	t->dirty = p;
}

struct proc *proc_pop_dirty(struct proctable *t)
{
	struct proc *p = t->dirty;

	if (p) {
		t->dirty = p->links.dirty_next;
		p->links.dirty = false;
		p->links.dirty_next = NULL;
	}
	return p;
}

void proc_retire(struct proctable *t, struct proc *p, uint64_t now_boot_ns)
{
	if (p->links.in_gc)
		return;
	unlink_live(t, p);
	p->links.in_gc = true;
	p->links.exited_boot_ns = now_boot_ns;
	p->links.gc_next = NULL;
	if (t->gc_tail)
		t->gc_tail->links.gc_next = p;
	else
		t->gc_head = p;
	t->gc_tail = p;
}

int proctable_add_closed(struct proctable *t, const struct process_row *row)
{
	struct closed_row *c = malloc(sizeof(*c));

	if (!c)
		return -1;
	c->row = *row;
	c->next = t->closed;
	t->closed = c;
	return 0;
}

void proctable_gc(struct proctable *t, uint64_t now_boot_ns, uint64_t grace_ns)
{
	while (t->gc_head && !t->gc_head->links.dirty &&
	       now_boot_ns - t->gc_head->links.exited_boot_ns >= grace_ns) {
		struct proc *p = t->gc_head;
		t->gc_head = p->links.gc_next;
		if (!t->gc_head)
			t->gc_tail = NULL;
		if (proc_by_pid(t, p->pid) == p)
			proc_unhash(t, p);
		free_proc(t, p);
	}
}

void process_row_free_strings(struct process_row *r)
{
	free(r->exe);
	free(r->argv_json);
	free(r->cwd);
	r->exe = r->argv_json = r->cwd = NULL;
}

static int dup_or_null(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -1;
}

int process_row_copy(struct process_row *dst, const struct process_row *src)
{
	*dst = *src;
	if (dup_or_null(&dst->exe, src->exe) || dup_or_null(&dst->argv_json, src->argv_json) ||
	    dup_or_null(&dst->cwd, src->cwd)) {
		process_row_free_strings(dst);
		return -1;
	}
	return 0;
}

void proc_program_name(const struct proc *p, char *out, size_t size)
{
	const char *exe = p->row.exe ? p->row.exe : p->row.comm;
	const char *base = exe ? strrchr(exe, '/') : NULL;
	const char *name = p->in.tool_name ? p->in.tool_name
			   : base	   ? base + 1
			   : exe && exe[0] ? exe
					   : "?";

	snprintf(out, size, "%s", name);
}
