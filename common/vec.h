/*
 * Growable arrays. `VEC(T) name;` declares a member { T *items; size_t n, cap; };
 * vec_push appends a copy and says whether it could. A failed push leaves the
 * array as it was, so a caller can count the loss and go on.
 */
#ifndef TRACER_VEC_H
#define TRACER_VEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define VEC(T)                                                                                     \
	struct {                                                                                   \
		T *items;                                                                          \
		size_t n, cap;                                                                     \
	}

/* The capacity to grow to for at least `need` items of `size` bytes; 0 if too large. */
static inline size_t vec_next_cap(size_t cap, size_t need, size_t size)
{
	size_t c = cap ? cap : 16;

	while (c < need) {
		if (c > SIZE_MAX / 2)
			return 0;
		c *= 2;
	}
	return c > SIZE_MAX / size ? 0 : c;
}

/*
 * Makes room for `need` items in the array at ptr with capacity cap (both
 * lvalues, for arrays kept in fields of other names); false (unchanged) if
 * memory ran out.
 */
#define vec_grow(ptr, cap, need)                                                                   \
	({                                                                                         \
		bool ok_ = true;                                                                   \
		size_t need_ = (need);                                                             \
		if (need_ > (cap)) {                                                               \
			size_t c_ = vec_next_cap((cap), need_, sizeof(*(ptr)));                    \
			void *p_ = c_ ? realloc((ptr), c_ * sizeof(*(ptr))) : NULL;                \
			if (p_) {                                                                  \
				(ptr) = p_;                                                        \
				(cap) = c_;                                                        \
			} else {                                                                   \
				ok_ = false;                                                       \
			}                                                                          \
		}                                                                                  \
		ok_;                                                                               \
	})

/* Makes room for `need` items in all; false (array unchanged) if memory ran out. */
#define vec_reserve(v, need) vec_grow((v)->items, (v)->cap, (need))

/* Appends a copy of item; false (array unchanged) if memory ran out. */
#define vec_push(v, item)                                                                          \
	({                                                                                         \
		bool pushed_ = vec_reserve((v), (v)->n + 1);                                       \
		if (pushed_)                                                                       \
			(v)->items[(v)->n++] = (item);                                             \
		pushed_;                                                                           \
	})

/* Frees the items (not what they point to) and empties the array. */
#define vec_free(v)                                                                                \
	do {                                                                                       \
		free((v)->items);                                                                  \
		(v)->items = NULL;                                                                 \
		(v)->n = (v)->cap = 0;                                                             \
	} while (0)

#endif
