#include "cli/cost/energyrun.h"

#include <pwd.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cost/costconf.h"
#include "cli/render/jsonfield.h"
#include "cli/db/rows.h"
#include "cli/cost/energymeasure.h"
#include "cli/cost/usage.h"

struct gather {
	const char *by;
	const struct energy_model *m;
	json_t *measured; /* run id -> its RAPL measurement (energymeasure.h) */
	json_t *parts;	  /* key -> {processes, cpu_s, cpu_j, measured, mem_gib_s, step_id} */
};

/* Joules per CPU-second of the process's run where RAPL measured it, else 0. */
static double measured_watts(json_t *measured, int64_t run_id)
{
	char id[24];

	if (!run_id || !measured)
		return 0;
	snprintf(id, sizeof(id), "%lld", (long long)run_id);
	json_t *r = json_object_get(measured, id);
	return r ? jnum(r, "watts_per_cpu_second") : 0;
}

static bool is_measured(json_t *measured, int64_t run_id)
{
	char id[24];

	snprintf(id, sizeof(id), "%lld", (long long)run_id);
	return run_id && measured && json_object_get(measured, id);
}

static void bucket_key(const char *by, const struct process_usage *u, char *key, size_t size)
{
	if (!strcmp(by, "run"))
		snprintf(key, size, "%s", u->run_id ? u->run : "(not in a run)");
	else if (!strcmp(by, "pipeline"))
		snprintf(key, size, "%s",
			 !u->run_id	  ? "(not in a run)"
			 : u->pipeline[0] ? u->pipeline
					  : "(no pipeline)");
	else if (!strcmp(by, "step") && u->step_id)
		snprintf(key, size, "%s (step %lld)", u->step, (long long)u->step_id);
	else if (!strcmp(by, "step"))
		snprintf(key, size, "%s", u->run_id ? "(outside steps)" : "(not in a run)");
	else if (!strcmp(by, "tool"))
		snprintf(key, size, "%s", u->tool[0] ? u->tool : "(unknown)");
	else {
		struct passwd *pw = getpwuid(u->uid);
		if (pw)
			snprintf(key, size, "%s", pw->pw_name);
		else
			snprintf(key, size, "uid %u", u->uid);
	}
}

static void add(const struct process_usage *u, void *ctx)
{
	struct gather *g = ctx;
	char key[300];

	bucket_key(g->by, u, key, sizeof(key));
	json_t *p = json_object_get(g->parts, key);
	if (!p) {
		p = json_pack("{s:i, s:i, s:f, s:f, s:f}", "processes", 0, "measured", 0, "cpu_s",
			      0.0, "cpu_j", 0.0, "mem_gib_s", 0.0);
		if (!strcmp(g->by, "step") && u->step_id)
			json_object_set_new(p, "step_id", json_integer(u->step_id));
		json_object_set_new(g->parts, key, p);
	}
	json_object_set_new(p, "processes", json_integer(jint(p, "processes") + 1));
	json_object_set_new(p, "cpu_s", json_real(jnum(p, "cpu_s") + u->cpu_s));
	json_object_set_new(p, "mem_gib_s", json_real(jnum(p, "mem_gib_s") + u->mem_gib_s));
	bool measured = is_measured(g->measured, u->run_id);
	double w = measured ? measured_watts(g->measured, u->run_id) : g->m->cpu_w_per_core;
	json_object_set_new(p, "cpu_j", json_real(jnum(p, "cpu_j") + u->cpu_s * w));
	json_object_set_new(p, "measured", json_integer(jint(p, "measured") + measured));
}

/* How a part's CPU energy is known: by RAPL, estimated, or both (some runs measured). */
static const char *cpu_how(const struct energy_model *m, json_t *sums, char *buf, size_t size)
{
	int64_t n = jint(sums, "processes"), measured = jint(sums, "measured");

	if (n && measured == n)
		return "measured (RAPL)";
	snprintf(buf, size, "%sestimated (%s)", measured ? "measured (RAPL) and " : "",
		 m->cpu_kind);
	return buf;
}

static json_t *part_json(const struct energy_model *m, const char *by, const char *key,
			 json_t *sums)
{
	struct energy_figures f;
	char how[64];
	double cpu_s = jnum(sums, "cpu_s"), mem = jnum(sums, "mem_gib_s");
	json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:f, s:s}", "by", by, "key", key, "processes",
			      (json_int_t)jint(sums, "processes"), "cpu_ns",
			      (json_int_t)(cpu_s * 1e9 + 0.5), "memory_gib_hours", mem / 3600.0,
			      "cpu", cpu_how(m, sums, how, sizeof(how)));

	energy_of_joules(m, jnum(sums, "cpu_j"), mem, &f);
	energy_set_json(o, &f);
	if (json_object_get(sums, "step_id"))
		json_object_set(o, "step_id", json_object_get(sums, "step_id"));
	return o;
}

/* Largest first, as cost lists its parts. */
static int by_energy(const void *a, const void *b)
{
	double x = jnum(*(json_t *const *)a, "energy_wh"),
	       y = jnum(*(json_t *const *)b, "energy_wh");

	return x < y ? 1 : x > y ? -1 : 0;
}

static json_t *sorted_parts(const struct energy_model *m, const char *by, json_t *sums,
			    json_t *total)
{
	size_t n = json_object_size(sums), i = 0;
	json_t **items = calloc(n ? n : 1, sizeof(*items)), *s, *out = json_array();
	const char *key;

	json_object_foreach(sums, key, s)
	{
		items[i++] = part_json(m, by, key, s);
		json_object_set_new(total, "processes",
				    json_integer(jint(total, "processes") + jint(s, "processes")));
		json_object_set_new(total, "cpu_s",
				    json_real(jnum(total, "cpu_s") + jnum(s, "cpu_s")));
		json_object_set_new(total, "mem_gib_s",
				    json_real(jnum(total, "mem_gib_s") + jnum(s, "mem_gib_s")));
		json_object_set_new(total, "cpu_j",
				    json_real(jnum(total, "cpu_j") + jnum(s, "cpu_j")));
		json_object_set_new(total, "measured",
				    json_integer(jint(total, "measured") + jint(s, "measured")));
	}
	qsort(items, n, sizeof(*items), by_energy);
	for (i = 0; i < n; i++)
		json_array_append_new(out, items[i]);
	free(items);
	return out;
}

struct energy_gather {
	struct energy_model m;
	struct gather g;
	bool no_rapl;
	json_t *measured; /* every database's runs measured, by (label) run id */
};

struct energy_gather *energy_gather_new(const struct energy_options *o, const char *by, char *err,
					size_t err_size)
{
	struct energy_gather *e = calloc(1, sizeof(*e));

	if (!e || energy_model_resolve(o, &e->m, err, err_size) != 0) {
		if (e == NULL)
			snprintf(err, err_size, "out of memory");
		free(e);
		return NULL;
	}
	e->g = (struct gather){.by = by, .m = &e->m, .parts = json_object()};
	e->no_rapl = o->no_rapl;
	e->measured = json_object();
	return e;
}

int energy_gather_db(struct energy_gather *e, sqlite3 *db, const char *label, int64_t run,
		     int64_t from, int64_t to, char *err, size_t err_size)
{
	const char *id;
	json_t *r;
	char key[400];

	e->g.measured = e->no_rapl ? json_object() : rapl_runs(db, run, from, to);
	int rc = usage_scan(db, from, to, run, add, &e->g);
	if (rc != 0)
		snprintf(err, err_size, "%s", sqlite3_errmsg(db));
	json_object_foreach(e->g.measured, id, r)
	{
		snprintf(key, sizeof(key), "%s%s", label ? label : "", id);
		json_object_set(e->measured, key, r);
	}
	json_decref(e->g.measured);
	e->g.measured = NULL;
	return rc;
}

json_t *energy_gather_finish(struct energy_gather *e)
{
	const char *by = e->g.by;
	json_t *sums = json_pack("{s:i, s:i, s:f, s:f, s:f}", "processes", 0, "measured", 0,
				 "cpu_s", 0.0, "cpu_j", 0.0, "mem_gib_s", 0.0);
	json_t *parts = sorted_parts(&e->m, by, e->g.parts, sums);
	json_t *model = energy_model_json(&e->m);

	json_object_set_new(model, "cpu_measured", e->measured);
	json_t *doc = json_pack("{s:o, s:s, s:o, s:o}", "model", model, "by", by, "parts", parts,
				"total", part_json(&e->m, by, "total", sums));
	json_decref(sums);
	json_decref(e->g.parts);
	free(e);
	return doc;
}

void energy_gather_free(struct energy_gather *e)
{
	if (!e)
		return;
	json_decref(e->g.parts);
	json_decref(e->measured);
	free(e);
}

json_t *energy_document(sqlite3 *db, int64_t run, int64_t from, int64_t to, const char *by,
			const struct energy_options *o, char *err, size_t err_size)
{
	struct energy_gather *e = energy_gather_new(o, by, err, err_size);

	if (!e)
		return NULL;
	if (energy_gather_db(e, db, NULL, run, from, to, err, err_size) != 0) {
		energy_gather_free(e);
		return NULL;
	}
	return energy_gather_finish(e);
}

bool energy_recorded_here(sqlite3 *db, int64_t run)
{
	char host[256] = "";
	json_t *rows = cli_rows_json(db,
				     "SELECT hostname FROM runs WHERE ?1 = 0 OR id = ?1"
				     " GROUP BY hostname",
				     run);
	bool here = gethostname(host, sizeof(host) - 1) == 0 && json_array_size(rows) == 1 &&
		    !strcmp(jstr(json_array_get(rows, 0), "hostname"), host);

	json_decref(rows);
	return here;
}

/* The coefficients the show, report and export of a run use: the site's files. */
static void default_options(sqlite3 *db, int64_t run, struct energy_options *o,
			    struct cost_conf *cc)
{
	char err[600];

	*o = (struct energy_options){.cpu_is_this_host = energy_recorded_here(db, run)};
	if (cost_conf_load(cc, NULL, err, sizeof(err)) == 0 && cc->region[0])
		o->cost_region = cc->region;
}

struct per_process {
	struct energy_model m;
	json_t *measured;
	json_t *by_id; /* process id -> figures */
};

static void add_process(const struct process_usage *u, void *ctx)
{
	struct per_process *pp = ctx;
	struct energy_figures f;
	char id[24];

	double w = is_measured(pp->measured, u->run_id) ? measured_watts(pp->measured, u->run_id)
							: pp->m.cpu_w_per_core;
	energy_of_joules(&pp->m, u->cpu_s * w, u->mem_gib_s, &f);
	snprintf(id, sizeof(id), "%lld", (long long)u->process_id);
	json_object_set_new(pp->by_id, id,
			    json_pack("{s:f, s:f}", "energy_wh", f.energy_wh, "co2e_g", f.co2e_g));
}

void energy_add_to_process_rows(sqlite3 *db, int64_t run, json_t *rows)
{
	struct cost_conf cc;
	struct energy_options o;
	struct per_process pp = {.by_id = json_object()};
	char err[600], id[24];
	size_t i;
	json_t *row;

	default_options(db, run, &o, &cc);
	pp.measured = rapl_runs(db, run, 0, INT64_MAX / 2);
	if (energy_model_resolve(&o, &pp.m, err, sizeof(err)) == 0 &&
	    usage_scan(db, 0, INT64_MAX / 2, run, add_process, &pp) == 0) {
		json_array_foreach(rows, i, row)
		{
			snprintf(id, sizeof(id), "%lld", (long long)jint(row, "process_id"));
			json_object_update(row, json_object_get(pp.by_id, id));
		}
	}
	json_decref(pp.by_id);
	json_decref(pp.measured);
}

json_t *energy_run_json(sqlite3 *db, int64_t run)
{
	struct cost_conf cc;
	char err[600];
	struct energy_options o;

	default_options(db, run, &o, &cc);
	json_t *doc = energy_document(db, run, 0, INT64_MAX / 2, "step", &o, err, sizeof(err));
	return doc ? doc : json_pack("{s:s}", "unavailable", err);
}
