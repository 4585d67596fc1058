/*
 * Energy and carbon of what ran (docs/energy.md), computed at read time from
 * the CPU time and memory each process held (cli/usage.h, the same figures
 * cost splits by):
 *   IT energy (Wh) = (CPU seconds x W per core + GiB-seconds x W per GB x GB per GiB) / 3600
 *   energy (Wh)    = IT energy x PUE
 *   CO2e (g)       = energy / 1000 x grid intensity (gCO2e per kWh)
 * Each coefficient comes from energy.conf, else a documented table, else a
 * documented default, and says which.
 */
#ifndef TRACER_CLI_ENERGY_H
#define TRACER_CLI_ENERGY_H

#include <stdbool.h>

#include <jansson.h>

#define ENERGY_CONF_PATH "/etc/tracer/energy.conf"
#define GB_PER_GIB 1.073741824

struct energy_model {
	double cpu_w_per_core, mem_w_per_gb, pue, grid_g_per_kwh;
	char cpu_source[256], mem_source[128], pue_source[128], grid_source[256];
	/* Where the W per core came from: "config", "instance-type table", "CPU model
	 * table", "default" (a run measured by RAPL says so apart: energymeasure.h). */
	char cpu_kind[32];
	char region[64];
};

struct energy_options {
	const char *conf_path;	  /* NULL: ENERGY_CONF_PATH (missing means defaults) */
	const char *region;	  /* --region: a cloud region or a grid location code */
	const char *cost_region;  /* cost.conf's region, if any */
	const char *cpuinfo_path; /* NULL: /proc/cpuinfo */
	bool cpu_is_this_host;	  /* the runs were recorded on this machine */
	/* The cloud instance type (m6i.large, n2-standard-4, Standard_D4s_v5) and how it is
	 * known (--instance-type, a file, IMDSv2); NULL: none. energy.conf's wins. */
	const char *instance_type, *instance_source;
	const char *cloud_region; /* the metadata service's region, last for the grid */
	bool no_rapl;		  /* --no-rapl: the estimate even where RAPL measured */
};

/* The model's coefficients; 0, or -1 with the reason (the config line) in err. */
int energy_model_resolve(const struct energy_options *o, struct energy_model *m, char *err,
			 size_t err_size);

struct energy_figures {
	double cpu_wh, memory_wh, energy_wh, co2e_g;
};

void energy_of(const struct energy_model *m, double cpu_s, double mem_gib_s,
	       struct energy_figures *out);
/* The same with the CPU's energy given in joules (W per core already applied, or measured). */
void energy_of_joules(const struct energy_model *m, double cpu_j, double mem_gib_s,
		      struct energy_figures *out);
/* The model as JSON: every coefficient with its source. */
json_t *energy_model_json(const struct energy_model *m);
/* A part's figures as JSON fields added to o. */
void energy_set_json(json_t *o, const struct energy_figures *f);

/* The documented tables (cli/energytable.c). */
/* W per core of a CPU whose /proc/cpuinfo model name contains the entry's name; 0 if none. */
double energy_cpu_table(const char *model_name, const char **entry, const char **source);
/* W per vCPU of a cloud instance type's family (aws c6i.large, gcp n2-standard-4, azure
 * Standard_D4s_v5); 0 if none. entry names the family and its processor. */
double energy_instance_table(const char *instance_type, const char **entry, const char **source);
/* gCO2e/kWh of a cloud region (aws, gcp, azure names) or grid location code; 0 if none. */
double energy_grid_table(const char *region, const char **location, const char **source);

#endif
