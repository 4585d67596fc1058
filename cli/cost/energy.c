#include "cli/cost/energy.h"

#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/confkey.h"

/* Green Algorithms' defaults (docs/energy.md has their sources). */
#define DEFAULT_W_PER_CORE 12.0
#define DEFAULT_W_PER_GB 0.3725
#define DEFAULT_PUE 1.67
#define WORLD "WORLD"

struct conf_state {
	struct energy_model *m;
	const char *path;
	char *err;
	size_t err_size;
	char region[64], instance_type[64];
};

static int set_number(struct conf_state *s, const char *name, const char *value, double min,
		      double max, double *out, char *source, size_t source_size)
{
	char *end;
	errno = 0;
	double v = strtod(value, &end);

	if (errno || end == value || *end || !(v >= min && v <= max)) {
		snprintf(s->err, s->err_size, "%s: %s = '%s': a number from %g to %g", s->path,
			 name, value, min, max);
		return 0;
	}
	*out = v;
	snprintf(source, source_size, "%s (%s)", s->path, name);
	return 1;
}

static int conf_line(void *user, const char *section, const char *name, const char *value)
{
	struct conf_state *s = user;
	struct energy_model *m = s->m;

	if (strcmp(section, "energy") != 0) {
		snprintf(s->err, s->err_size, "%s: [%s]: the only section is [energy]", s->path,
			 section);
		return 0;
	}
	if (config_key_is(name, "cpu-watts-per-core"))
		return set_number(s, name, value, 0, 1000, &m->cpu_w_per_core, m->cpu_source,
				  sizeof(m->cpu_source));
	if (config_key_is(name, "memory-watts-per-gb"))
		return set_number(s, name, value, 0, 100, &m->mem_w_per_gb, m->mem_source,
				  sizeof(m->mem_source));
	if (config_key_is(name, "pue"))
		return set_number(s, name, value, 1, 10, &m->pue, m->pue_source,
				  sizeof(m->pue_source));
	if (config_key_is(name, "grid-gco2e-per-kwh"))
		return set_number(s, name, value, 0, 5000, &m->grid_g_per_kwh, m->grid_source,
				  sizeof(m->grid_source));
	if (config_key_is(name, "instance-type")) {
		snprintf(s->instance_type, sizeof(s->instance_type), "%s", value);
		return 1;
	}
	if (config_key_is(name, "region")) {
		snprintf(s->region, sizeof(s->region), "%s", value);
		return 1;
	}
	snprintf(s->err, s->err_size, "%s: unknown setting '%s'", s->path, name);
	return 0;
}

/* The CPU's model name as /proc/cpuinfo gives it ("" if none). */
static void cpu_model_name(const char *path, char *out, size_t size)
{
	FILE *f = fopen(path ? path : "/proc/cpuinfo", "r");
	char line[512];

	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10) != 0)
			continue;
		const char *colon = strchr(line, ':');
		if (colon) {
			snprintf(out, size, "%s", colon + 1 + (colon[1] == ' '));
			out[strcspn(out, "\n")] = '\0';
		}
		break;
	}
	if (f)
		fclose(f);
}

/* The instance type's family in the table: 1 if found. */
static int resolve_instance(const char *type, const char *how, struct energy_model *m)
{
	const char *entry, *source;
	double w = type && type[0] ? energy_instance_table(type, &entry, &source) : 0;

	if (w <= 0)
		return 0;
	m->cpu_w_per_core = w;
	snprintf(m->cpu_kind, sizeof(m->cpu_kind), "instance-type table");
	snprintf(m->cpu_source, sizeof(m->cpu_source), "%s (%s): %s: %s", type, how, entry, source);
	return 1;
}

static void resolve_cpu(const struct energy_options *o, const char *conf_type,
			struct energy_model *m)
{
	char model[256];
	const char *entry, *source;

	if (m->cpu_source[0]) {
		snprintf(m->cpu_kind, sizeof(m->cpu_kind), "config");
		return;
	}
	if (conf_type[0] && resolve_instance(conf_type, "energy.conf", m))
		return;
	if (o->instance_type &&
	    resolve_instance(o->instance_type, o->instance_source ? o->instance_source : "given",
			     m))
		return;
	snprintf(m->cpu_kind, sizeof(m->cpu_kind), "CPU model table");
	cpu_model_name(o->cpuinfo_path, model, sizeof(model));
	double w = o->cpu_is_this_host && model[0] ? energy_cpu_table(model, &entry, &source) : 0;
	if (w > 0) {
		m->cpu_w_per_core = w;
		snprintf(m->cpu_source, sizeof(m->cpu_source), "%s: %s", entry, source);
		return;
	}
	m->cpu_w_per_core = DEFAULT_W_PER_CORE;
	snprintf(m->cpu_kind, sizeof(m->cpu_kind), "default");
	snprintf(m->cpu_source, sizeof(m->cpu_source),
		 "default (Green Algorithms' 'Any' CPU)%s%s%s",
		 !o->cpu_is_this_host ? ": the runs' host is not this one"
		 : model[0]	      ? ": no entry for "
				      : ": no CPU model in /proc/cpuinfo",
		 o->cpu_is_this_host && model[0] ? model : "", "");
}

static void resolve_grid(const char *region, struct energy_model *m)
{
	const char *location, *source;

	if (m->grid_source[0])
		return; /* configured */
	double g = region[0] ? energy_grid_table(region, &location, &source) : 0;
	if (g > 0) {
		m->grid_g_per_kwh = g;
		snprintf(m->grid_source, sizeof(m->grid_source), "%s (%s): %s", region, location,
			 source);
		return;
	}
	energy_grid_table(WORLD, &location, &source);
	m->grid_g_per_kwh = energy_grid_table(WORLD, &location, &source);
	snprintf(m->grid_source, sizeof(m->grid_source), "world average%s%s%s: %s",
		 region[0] ? " (no entry for '" : " (no region known", region,
		 region[0] ? "')" : ")", source);
}

int energy_model_resolve(const struct energy_options *o, struct energy_model *m, char *err,
			 size_t err_size)
{
	struct conf_state s = {.m = m, .err = err, .err_size = err_size};

	memset(m, 0, sizeof(*m));
	m->mem_w_per_gb = DEFAULT_W_PER_GB;
	snprintf(m->mem_source, sizeof(m->mem_source), "default (Green Algorithms, 0.3725 W/GB)");
	m->pue = DEFAULT_PUE;
	snprintf(m->pue_source, sizeof(m->pue_source),
		 "default (Green Algorithms' world average data centre, 1.67)");
	s.path = o->conf_path ? o->conf_path : ENERGY_CONF_PATH;
	FILE *f = fopen(s.path, "r");
	if (!f && (o->conf_path || errno != ENOENT)) {
		snprintf(err, err_size, "%s: %s", s.path, strerror(errno));
		return -1;
	}
	if (f) {
		err[0] = '\0';
		int line = ini_parse_file(f, conf_line, &s);
		fclose(f);
		if (line != 0) {
			if (!err[0])
				snprintf(err, err_size, "%s:%d: not NAME = VALUE", s.path, line);
			return -1;
		}
	}
	const char *region = o->region	       ? o->region
			     : s.region[0]     ? s.region
			     : o->cost_region  ? o->cost_region
			     : o->cloud_region ? o->cloud_region
					       : "";
	snprintf(m->region, sizeof(m->region), "%s", region);
	resolve_cpu(o, s.instance_type, m);
	resolve_grid(m->region, m);
	return 0;
}

void energy_of(const struct energy_model *m, double cpu_s, double mem_gib_s,
	       struct energy_figures *out)
{
	energy_of_joules(m, cpu_s * m->cpu_w_per_core, mem_gib_s, out);
}

void energy_of_joules(const struct energy_model *m, double cpu_j, double mem_gib_s,
		      struct energy_figures *out)
{
	out->cpu_wh = cpu_j / 3600.0;
	out->memory_wh = mem_gib_s * GB_PER_GIB * m->mem_w_per_gb / 3600.0;
	out->energy_wh = (out->cpu_wh + out->memory_wh) * m->pue;
	out->co2e_g = out->energy_wh / 1000.0 * m->grid_g_per_kwh;
}

json_t *energy_model_json(const struct energy_model *m)
{
	return json_pack("{s:f, s:s, s:s, s:f, s:s, s:f, s:s, s:f, s:s, s:s?}",
			 "cpu_watts_per_core", m->cpu_w_per_core, "cpu_source", m->cpu_source,
			 "cpu_estimate", m->cpu_kind, "memory_watts_per_gb", m->mem_w_per_gb,
			 "memory_source", m->mem_source, "pue", m->pue, "pue_source", m->pue_source,
			 "grid_gco2e_per_kwh", m->grid_g_per_kwh, "grid_source", m->grid_source,
			 "region", m->region[0] ? m->region : NULL);
}

void energy_set_json(json_t *o, const struct energy_figures *f)
{
	json_object_set_new(o, "cpu_wh", json_real(f->cpu_wh));
	json_object_set_new(o, "memory_wh", json_real(f->memory_wh));
	json_object_set_new(o, "energy_wh", json_real(f->energy_wh));
	json_object_set_new(o, "co2e_g", json_real(f->co2e_g));
}
