#include "common/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t key_hash(const char *key)
{
	uint64_t h = 14695981039346656037u; /* FNV-1a */

	for (const unsigned char *c = (const unsigned char *)key; *c; c++)
		h = (h ^ *c) * 1099511628211u;
	return (size_t)h;
}

static void put(struct strmap_slot *slots, size_t n_slots, const char *key, void *value)
{
	size_t k = key_hash(key) & (n_slots - 1);

	while (slots[k].key)
		k = (k + 1) & (n_slots - 1);
	slots[k].key = key;
	slots[k].value = value;
}

static struct strmap_slot *find(const struct strmap *m, const char *key)
{
	if (!m->n_slots)
		return NULL;
	for (size_t k = key_hash(key) & (m->n_slots - 1); m->slots[k].key;
	     k = (k + 1) & (m->n_slots - 1))
		if (!strcmp(m->slots[k].key, key))
			return &m->slots[k];
	return NULL;
}

void *strmap_get(const struct strmap *m, const char *key)
{
	struct strmap_slot *slot = find(m, key);

	return slot ? slot->value : NULL;
}

void *strmap_get_kept(const struct strmap *m, const char *key, const char **kept)
{
	struct strmap_slot *slot = find(m, key);

	if (!slot)
		return NULL;
	*kept = slot->key;
	return slot->value;
}

bool strmap_put(struct strmap *m, const char *key, void *value)
{
	struct strmap_slot *slot = find(m, key);

	if (slot) {
		slot->key = key;
		slot->value = value;
		return true;
	}
	if ((m->n + 1) * 2 > m->n_slots) {
		size_t want = m->n_slots ? m->n_slots * 2 : 64;
		struct strmap_slot *slots;

		if (want > SIZE_MAX / 2 / sizeof(*slots) || !(slots = calloc(want, sizeof(*slots))))
			return false;
		for (size_t i = 0; i < m->n_slots; i++)
			if (m->slots[i].key)
				put(slots, want, m->slots[i].key, m->slots[i].value);
		free(m->slots);
		m->slots = slots;
		m->n_slots = want;
	}
	put(m->slots, m->n_slots, key, value);
	m->n++;
	return true;
}

bool strmap_remove(struct strmap *m, const char *key)
{
	struct strmap_slot *slot = find(m, key);

	if (!slot)
		return false;
	size_t mask = m->n_slots - 1, hole = (size_t)(slot - m->slots);
	/* Linear probing: a later key of the run whose home is not between the
	 * hole and itself moves into the hole, so every key stays reachable. */
	for (size_t k = (hole + 1) & mask; m->slots[k].key; k = (k + 1) & mask) {
		size_t home = key_hash(m->slots[k].key) & mask;
		if (((k - home) & mask) >= ((k - hole) & mask)) {
			m->slots[hole] = m->slots[k];
			hole = k;
		}
	}
	m->slots[hole].key = NULL;
	m->slots[hole].value = NULL;
	m->n--;
	return true;
}

void strmap_free(struct strmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
