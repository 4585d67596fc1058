/*
 * Where process entries live. An entry is 1.3 KB, past glibc's small bins, so
 * a malloc of its own first merged every freed small chunk (the strings of
 * the entries before it) and took ~7% of the aggregator's CPU in an exec
 * storm. Entries come instead from slabs of PROCS_PER_SLAB; a slab with no
 * entry in use is freed once a few empty ones are kept for the next burst.
 */
#ifndef TRACER_PROCSLAB_H
#define TRACER_PROCSLAB_H

#include <stddef.h>

struct proc;
struct proc_slab;

struct proc_slabs {
	struct proc_slab *with_room; /* slabs with a free entry; the newest first */
	size_t n_slabs;
	size_t n_empty; /* slabs on with_room that have no entry in use */
};

/* A zeroed entry, or NULL when memory is exhausted. */
struct proc *proc_slab_get(struct proc_slabs *s);
/* Gives the entry back; its memory must not be touched after. */
void proc_slab_put(struct proc_slabs *s, struct proc *p);
/* Frees the slabs once every entry was given back (proctable_free does): a
 * slab whose entries are all in use is on no list, so it is not found here. */
void proc_slabs_free(struct proc_slabs *s);

#endif
