#include "common/confkey.h"

#include <string.h>

/* Every section any tracer program reads: collector, aggregator, shipper, cost, fleet. */
static const char *const known_sections[] = {"collector", "probes", "files", "scope",
					     "shipper",	  "cost",   "fleet", NULL};

static bool is_dash(char c)
{
	return c == '-' || c == '_';
}

bool config_key_is(const char *name, const char *key)
{
	for (; *name && *key; name++, key++)
		if (*name != *key && !(is_dash(*name) && is_dash(*key)))
			return false;
	return !*name && !*key;
}

static bool listed(const char *section, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(section, *list))
			return true;
	return false;
}

const char *config_section_check(const char *section, const char *const *mine, bool *is_mine)
{
	*is_mine = false;
	if (!section[0])
		return "a setting outside any section";
	if (listed(section, mine)) {
		*is_mine = true;
		return NULL;
	}
	if (!listed(section, known_sections))
		return "unknown section";
	return NULL;
}
