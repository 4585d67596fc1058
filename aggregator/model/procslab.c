#include "aggregator/model/procslab.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/model/proctable.h"
#include "common/poison.h"

/* 48 entries: one slab is ~63 KB, under glibc's mmap threshold. */
#define PROCS_PER_SLAB 48
/* Empty slabs kept for the next burst (~250 KB) before one is freed. */
#define EMPTY_SLABS_KEPT 4

struct proc_slab {
	struct proc_slab *prev, *next; /* on with_room */
	unsigned n_free;
	uint8_t free_index[PROCS_PER_SLAB]; /* a stack: the next one to give is on top */
	struct proc entries[PROCS_PER_SLAB];
};

static void push_with_room(struct proc_slabs *s, struct proc_slab *slab)
{
	slab->prev = NULL;
	slab->next = s->with_room;
	if (s->with_room)
		s->with_room->prev = slab;
	s->with_room = slab;
}

static void unlink_with_room(struct proc_slabs *s, struct proc_slab *slab)
{
	if (slab->prev)
		slab->prev->next = slab->next;
	else
		s->with_room = slab->next;
	if (slab->next)
		slab->next->prev = slab->prev;
	slab->prev = slab->next = NULL;
}

static struct proc_slab *new_slab(struct proc_slabs *s)
{
	struct proc_slab *slab = malloc(sizeof(*slab));

	if (!slab)
		return NULL;
	slab->n_free = PROCS_PER_SLAB;
	/* Entries are given in address order, so a fresh slab's pages are touched in turn. */
	for (unsigned i = 0; i < PROCS_PER_SLAB; i++)
		slab->free_index[i] = (uint8_t)(PROCS_PER_SLAB - 1 - i);
	POISON(slab->entries, sizeof(slab->entries));
	push_with_room(s, slab);
	s->n_slabs++;
	s->n_empty++;
	return slab;
}

struct proc *proc_slab_get(struct proc_slabs *s)
{
	struct proc_slab *slab = s->with_room;
	struct proc *p;

	if (!slab && !(slab = new_slab(s)))
		return NULL;
	if (slab->n_free == PROCS_PER_SLAB)
		s->n_empty--;
	p = &slab->entries[slab->free_index[--slab->n_free]];
	if (slab->n_free == 0)
		unlink_with_room(s, slab);
	UNPOISON(p, sizeof(*p));
	memset(p, 0, sizeof(*p));
	p->links.slab = slab;
	return p;
}

void proc_slab_put(struct proc_slabs *s, struct proc *p)
{
	struct proc_slab *slab = p->links.slab;

	POISON(p, sizeof(*p));
	slab->free_index[slab->n_free++] = (uint8_t)(p - slab->entries);
	if (slab->n_free == 1)
		push_with_room(s, slab);
	if (slab->n_free < PROCS_PER_SLAB)
		return;
	if (s->n_empty < EMPTY_SLABS_KEPT) {
		s->n_empty++;
		return;
	}
	unlink_with_room(s, slab);
	s->n_slabs--;
	free(slab);
}

void proc_slabs_free(struct proc_slabs *s)
{
	while (s->with_room) {
		struct proc_slab *slab = s->with_room;
		unlink_with_room(s, slab);
		free(slab);
	}
	memset(s, 0, sizeof(*s));
}
