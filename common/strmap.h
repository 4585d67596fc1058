/*
 * String keys to values, by hash (open addressing, at most half full). The
 * map does not own the keys: each must stay valid and unchanged while it is
 * in the map (a name the item itself holds). Used where a lookup per event
 * would otherwise scan a list that grows with history (tool names, steps).
 */
#ifndef TRACER_STRMAP_H
#define TRACER_STRMAP_H

#include <stdbool.h>
#include <stddef.h>

struct strmap_slot {
	const char *key; /* NULL: empty */
	void *value;
};

struct strmap {
	struct strmap_slot *slots;
	size_t n_slots; /* 0 or a power of two */
	size_t n;
};

/* The value of key, or NULL. */
void *strmap_get(const struct strmap *m, const char *key);
/* The value of key, or NULL; *kept (if found) the map's own pointer to key,
 * the one strmap_put was given. One lookup for both. */
void *strmap_get_kept(const struct strmap *m, const char *key, const char **kept);
/* Sets key's value (non-NULL), replacing one it had (the key pointer too);
 * false if memory ran out (map unchanged). */
bool strmap_put(struct strmap *m, const char *key, void *value);
/* Takes key out; false if it was not in. */
bool strmap_remove(struct strmap *m, const char *key);
void strmap_free(struct strmap *m);

#endif
