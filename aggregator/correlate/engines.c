/* The engines, in the order they are tried. */
#include "aggregator/correlate/engines.h"

#include <stdio.h>
#include <string.h>

static const struct engine *const all_engines[] = {
    &engine_snakemake,
    &engine_nextflow,
    &engine_cwltool,
    &engine_toil,
};

const struct engine *engine_detect(const struct process_view *v, char *pipeline, size_t size)
{
	for (size_t i = 0; i < sizeof(all_engines) / sizeof(*all_engines); i++)
		if (all_engines[i]->is_run(v, pipeline, size))
			return all_engines[i];
	return NULL;
}

const struct engine *engine_by_name(const char *name)
{
	const struct engine *extra[] = {&engine_script, &engine_slurm, &engine_make};

	for (size_t i = 0; i < sizeof(all_engines) / sizeof(*all_engines); i++)
		if (!strcmp(all_engines[i]->name, name))
			return all_engines[i];
	for (size_t i = 0; i < sizeof(extra) / sizeof(*extra); i++)
		if (!strcmp(extra[i]->name, name))
			return extra[i];
	return NULL;
}
