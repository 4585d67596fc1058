/*
 * The documented tables of docs/energy.md. Values are Green Algorithms'
 * (Lannelongue, Grealey & Inouye, Adv. Sci. 2021, doi:10.1002/advs.202100707;
 * data tables of github.com/GreenAlgorithms/green-algorithms-tool): TDP per
 * core from the manufacturers' data sheets (Intel ARK, AMD), grid carbon
 * intensities (gCO2e/kWh) from its CI_aggregated.csv v2.2 (sources there:
 * carbonfootprint.com 2022, AIB 2021, US EPA eGRID, IEA 2019 for the world).
 */
#include <stdio.h>
#include <string.h>

#include "cli/cost/energy.h"

static const struct {
	const char *name;
	double w_per_core;
} cpus[] = {
    {"Xeon(R) Gold 6142", 9.4},
    {"Xeon(R) Gold 6148", 7.5},
    {"Xeon(R) Gold 6248", 7.5},
    {"Xeon(R) Gold 6252", 6.3},
    {"Xeon(R) Platinum 9282", 7.1},
    {"Xeon(R) CPU E5-2660 v3", 10.5},
    {"Xeon(R) CPU E5-2680 v3", 10.0},
    {"Xeon(R) CPU E5-2690 v3", 11.3},
    {"Xeon(R) CPU E5-2683 v4", 7.5},
    {"Xeon(R) CPU E5-2695 v4", 6.7},
    {"Xeon(R) CPU E5-2697 v4", 8.1},
    {"Xeon(R) CPU E5-2699 v4", 6.6},
    {"Xeon(R) CPU E5-2699 v3", 8.1},
    {"Xeon(R) CPU E5-2670 v2", 11.5},
    {"Xeon(R) CPU E5-2690 v2", 13.0},
    {"AMD EPYC 7251", 15.0},
    {"AMD EPYC 7552", 4.2},
    {"Core(TM) i9-12900K", 7.8},
    {"Core(TM) i7-10700K", 15.6},
    {"Ryzen 9 3950X", 6.6},
    {"Ryzen Threadripper 3990X", 4.4},
};

double energy_cpu_table(const char *model_name, const char **entry, const char **source)
{
	for (size_t i = 0; i < sizeof(cpus) / sizeof(cpus[0]); i++)
		if (strstr(model_name, cpus[i].name)) {
			*entry = cpus[i].name;
			*source = "Green Algorithms TDP_cpu.csv (manufacturer TDP / cores)";
			return cpus[i].w_per_core;
		}
	return 0;
}

/* Grid locations (Green Algorithms' codes) and their intensity. */
static const struct {
	const char *code;
	double g_per_kwh;
} grids[] = {
    {"WORLD", 475},    {"US", 423.94},	  {"US-VA", 308},    {"US-OH", 598.58}, {"US-CA", 216.43},
    {"US-OR", 163.15}, {"US-IA", 293.85}, {"US-SC", 245.48}, {"US-NV", 342.25}, {"US-TX", 409.16},
    {"US-WA", 101.84}, {"CA", 120},	  {"CA-QC", 1.5},    {"IE", 335.99},	{"GB", 231.12},
    {"FR", 51.28},     {"DE", 338.66},	  {"SE", 5.67},	     {"FI", 95.32},	{"NL", 374.34},
    {"BE", 161.89},    {"CH", 11.52},	  {"IT", 323.84},    {"ES", 171.03},	{"PL", 759.62},
    {"NO", 7.62},      {"JP", 465.8},	  {"KR", 415.6},     {"IN", 708.2},	{"SG", 408},
    {"CN-HK", 710},    {"AU-NSW", 870},	  {"BR", 61.7},	     {"ZA", 900.6},	{"CN", 537.4},
};

/* Where each cloud region's data centres are (the providers' own region pages). */
static const struct {
	const char *region, *code;
} regions[] = {
    {"us-east-1", "US-VA"},
    {"us-east-2", "US-OH"},
    {"us-west-1", "US-CA"},
    {"us-west-2", "US-OR"},
    {"ca-central-1", "CA-QC"},
    {"eu-west-1", "IE"},
    {"eu-west-2", "GB"},
    {"eu-west-3", "FR"},
    {"eu-central-1", "DE"},
    {"eu-north-1", "SE"},
    {"eu-south-1", "IT"},
    {"ap-northeast-1", "JP"},
    {"ap-northeast-2", "KR"},
    {"ap-south-1", "IN"},
    {"ap-southeast-1", "SG"},
    {"ap-southeast-2", "AU-NSW"},
    {"ap-east-1", "CN-HK"},
    {"sa-east-1", "BR"},
    {"af-south-1", "ZA"},
    {"us-central1", "US-IA"},
    {"us-east1", "US-SC"},
    {"us-east4", "US-VA"},
    {"us-west1", "US-OR"},
    {"us-west2", "US-CA"},
    {"europe-west1", "BE"},
    {"europe-west2", "GB"},
    {"europe-west3", "DE"},
    {"europe-west4", "NL"},
    {"europe-west6", "CH"},
    {"europe-north1", "FI"},
    {"asia-northeast1", "JP"},
    {"asia-south1", "IN"},
    {"asia-southeast1", "SG"},
    {"australia-southeast1", "AU-NSW"},
    {"eastus", "US-VA"},
    {"eastus2", "US-VA"},
    {"westus", "US-CA"},
    {"westus2", "US-WA"},
    {"northeurope", "IE"},
    {"westeurope", "NL"},
    {"uksouth", "GB"},
    {"francecentral", "FR"},
    {"germanywestcentral", "DE"},
    {"swedencentral", "SE"},
    {"japaneast", "JP"},
};

double energy_grid_table(const char *region, const char **location, const char **source)
{
	const char *code = region;

	for (size_t i = 0; i < sizeof(regions) / sizeof(regions[0]); i++)
		if (!strcmp(region, regions[i].region))
			code = regions[i].code;
	for (size_t i = 0; i < sizeof(grids) / sizeof(grids[0]); i++)
		if (!strcmp(code, grids[i].code)) {
			*location = grids[i].code;
			*source = "Green Algorithms CI_aggregated.csv v2.2";
			return grids[i].g_per_kwh;
		}
	return 0;
}
