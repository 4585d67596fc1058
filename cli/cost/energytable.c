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

/*
 * Cloud instance families: W per vCPU at full use, the maximum of Cloud Carbon
 * Footprint's per-microarchitecture coefficients (github.com/cloud-carbon-footprint/
 * cloud-carbon-coefficients, from SPECpower_ssj2008 results: max watts over
 * threads). A family whose processor CCF has no row for takes its predecessor's,
 * and says so. The processors are the providers' own instance-type pages.
 */
#define CCF "Cloud Carbon Footprint coefficients (SPECpower_ssj2008), max W per vCPU"
#define SKYLAKE 4.19
#define CASCADE 3.97
#define BROADWELL 3.69
#define HASWELL 6.01
#define EPYC2 1.69
#define GRAVITON 1.69

static const struct {
	const char *family, *cpu;
	double w_per_vcpu;
} families[] = {
    {"c5", "Intel Skylake / Cascade Lake (Skylake's, the higher)", SKYLAKE},
    {"m5", "Intel Skylake / Cascade Lake (Skylake's, the higher)", SKYLAKE},
    {"r5", "Intel Skylake / Cascade Lake (Skylake's, the higher)", SKYLAKE},
    {"c5a", "AMD EPYC 2nd Gen", EPYC2},
    {"m5a", "AMD EPYC 1st/2nd Gen (2nd Gen's)", EPYC2},
    {"r5a", "AMD EPYC 1st/2nd Gen (2nd Gen's)", EPYC2},
    {"c6i", "Intel Ice Lake (no CCF row: Cascade Lake's)", CASCADE},
    {"m6i", "Intel Ice Lake (no CCF row: Cascade Lake's)", CASCADE},
    {"r6i", "Intel Ice Lake (no CCF row: Cascade Lake's)", CASCADE},
    {"c6a", "AMD EPYC 3rd Gen (no CCF row: 2nd Gen's)", EPYC2},
    {"m6a", "AMD EPYC 3rd Gen (no CCF row: 2nd Gen's)", EPYC2},
    {"r6a", "AMD EPYC 3rd Gen (no CCF row: 2nd Gen's)", EPYC2},
    {"c6g", "AWS Graviton2", GRAVITON},
    {"m6g", "AWS Graviton2", GRAVITON},
    {"r6g", "AWS Graviton2", GRAVITON},
    {"c7g", "AWS Graviton3 (no CCF row: Graviton2's)", GRAVITON},
    {"m7g", "AWS Graviton3 (no CCF row: Graviton2's)", GRAVITON},
    {"r7g", "AWS Graviton3 (no CCF row: Graviton2's)", GRAVITON},
    {"c4", "Intel Haswell", HASWELL},
    {"m4", "Intel Broadwell / Haswell (Broadwell's)", BROADWELL},
    {"r4", "Intel Broadwell", BROADWELL},
    {"n1", "Intel Skylake .. Sandy Bridge (Skylake's)", SKYLAKE},
    {"n2", "Intel Cascade Lake / Ice Lake (Cascade Lake's)", CASCADE},
    {"c2", "Intel Cascade Lake", CASCADE},
    {"n2d", "AMD EPYC 2nd/3rd Gen (2nd Gen's)", EPYC2},
    {"c2d", "AMD EPYC 3rd Gen (no CCF row: 2nd Gen's)", EPYC2},
    {"Dv3", "Intel Broadwell / Skylake (Broadwell's)", BROADWELL},
    {"Ev3", "Intel Broadwell / Skylake (Broadwell's)", BROADWELL},
    {"Dv4", "Intel Cascade Lake", CASCADE},
    {"Ev4", "Intel Cascade Lake", CASCADE},
    {"Dv5", "Intel Ice Lake (no CCF row: Cascade Lake's)", CASCADE},
    {"Ev5", "Intel Ice Lake (no CCF row: Cascade Lake's)", CASCADE},
    {"Dav4", "AMD EPYC 2nd Gen", EPYC2},
    {"Eav4", "AMD EPYC 2nd Gen", EPYC2},
    {"Dav5", "AMD EPYC 3rd Gen (no CCF row: 2nd Gen's)", EPYC2},
    {"Eav5", "AMD EPYC 3rd Gen (no CCF row: 2nd Gen's)", EPYC2},
    {"Fv2", "Intel Skylake / Cascade Lake (Skylake's)", SKYLAKE},
};

/*
 * The family of a type: AWS c6i.4xlarge -> c6i; GCP n2-standard-4 (or
 * .../machineTypes/n2-standard-4) -> n2; Azure Standard_D4as_v5 -> Dav5 (the
 * series letters, an 'a' for AMD, the version; other modifiers dropped).
 */
static void family_of(const char *type, char *out, size_t size)
{
	const char *slash = strrchr(type, '/');
	const char *t = slash ? slash + 1 : type;

	if (!strncmp(t, "Standard_", 9)) {
		const char *p = t + 9, *v = strstr(p, "_v");
		size_t n = strcspn(p, "0123456789_");
		const char *mods = p + n + strspn(p + n, "0123456789-");
		size_t mods_n = strcspn(mods, "_");
		bool amd = memchr(mods, 'a', mods_n) != NULL;
		snprintf(out, size, "%.*s%s%s", (int)n, p, amd ? "a" : "", v ? v + 1 : "");
		return;
	}
	snprintf(out, size, "%.*s", (int)strcspn(t, ".-"), t);
}

double energy_instance_table(const char *instance_type, const char **entry, const char **source)
{
	char family[64];

	family_of(instance_type, family, sizeof(family));
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (!strcmp(family, families[i].family)) {
			*entry = families[i].cpu;
			*source = CCF;
			return families[i].w_per_vcpu;
		}
	return 0;
}
