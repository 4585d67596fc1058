/* Start (with the names and cgroups the database already knows), reload, free. */
#include "aggregator/correlate/internal.h"

#include <string.h>

#include "common/log.h"

int correlator_init(struct correlator *c, struct store *store, const char *allow_path,
		    const char *deny_path)
{
	char err[512];

	memset(c, 0, sizeof(*c));
	c->store = store;
	c->next_step_id = store_max_id(store, "steps") + 1;
	names_load(c);
	if (allow_path || deny_path) {
		if (tool_lists_load(&c->lists, allow_path, deny_path, err, sizeof(err)) != 0) {
			/* As a bad config line stops the collector: fixed now, not found later. */
			log_error("tool lists: %s", err);
			return -1;
		}
		log_info("tool lists: %zu known tools, %zu ignored programs", c->lists.n_allow,
			 c->lists.n_deny);
	}
	cgroups_load(c);
	return 0;
}

int correlator_reload(struct correlator *c)
{
	char err[512];

	if (tool_lists_load(&c->lists, c->lists.allow_path[0] ? c->lists.allow_path : NULL,
			    c->lists.deny_path[0] ? c->lists.deny_path : NULL, err,
			    sizeof(err)) != 0) {
		log_error("reload failed, keeping the previous tool lists: %s", err);
		return -1;
	}
	log_info("tool lists reloaded: %zu known tools, %zu ignored programs", c->lists.n_allow,
		 c->lists.n_deny);
	/* Categories may have changed: rewrite every tool row with the new lists. */
	for (size_t i = 0; i < c->tools.n; i++)
		c->tools.items[i].written = false;
	return 0;
}

void correlator_free(struct correlator *c)
{
	containers_free(c);
	names_free(c);
	cgroups_free(c);
	batch_free(c);
	for (struct run *r = c->runs; r;) {
		struct run *next = r->next;
		free_run(r);
		r = next;
	}
	tool_lists_free(&c->lists);
	memset(c, 0, sizeof(*c));
}
