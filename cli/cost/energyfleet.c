#include "cli/cost/energyfleet.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cost/energyrun.h"
#include "cli/db/fleet.h"
#include "cli/render/jsonfield.h"

json_t *energy_fleet_hosts(int64_t from, int64_t to, bool *here)
{
	char me[256] = "";
	json_t *hosts = fleet_window_hosts("energy", from, to), *h, *name;
	size_t i, j, named = 0;

	*here = false;
	if (!hosts)
		return NULL;
	if (gethostname(me, sizeof(me) - 1) != 0)
		return hosts;
	/* As energy_recorded_here: the runs' hostnames are this machine's alone. */
	*here = true;
	json_array_foreach(hosts, i, h){json_array_foreach(
	    json_object_get(h, "hostnames"), j, name){const char *s = json_string_value(name);
	if (!s || !s[0])
		continue;
	named++;
	*here = *here && !strcmp(s, me);
}
}
*here = *here && named > 0;
return hosts;
}

json_t *energy_fleet_document(json_t *hosts, int64_t from, int64_t to, const char *by,
			      const struct energy_options *o, char *err, size_t err_size)
{
	struct energy_gather *e = energy_gather_new(o, by, err, err_size);
	json_t *h;
	size_t i;
	char label[300];

	if (!e)
		return NULL;
	json_array_foreach(hosts, i, h)
	{
		const char *host = jstr(h, "host");
		sqlite3 *db = fleet_memory_db("energy");
		int rc = db ? fleet_load_host_window(db, "energy", host, from, to) : -1;
		snprintf(label, sizeof(label), "%s:", host);
		if (rc == 0)
			rc = energy_gather_db(e, db, label, 0, from, to, err, err_size);
		else
			snprintf(err, err_size, "the fleet store's rows of %s could not be read",
				 host);
		sqlite3_close(db);
		if (rc != 0) {
			energy_gather_free(e);
			return NULL;
		}
	}
	return energy_gather_finish(e);
}
