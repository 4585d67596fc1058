/* What the engines share: reading argv and naming a pipeline after its file. */
#include "aggregator/correlate/engines.h"

#include <stdio.h>
#include <string.h>

#include "common/fileutil.h"
#include "common/strutil.h"

const char *argv_value(const struct process_view *v, const char *option)
{
	size_t n = strlen(option);

	for (size_t i = 1; i < v->argc; i++) {
		if (!strcmp(v->argv[i], option) && i + 1 < v->argc)
			return v->argv[i + 1];
		if (!strncmp(v->argv[i], option, n) && v->argv[i][n] == '=')
			return v->argv[i] + n + 1;
	}
	return NULL;
}

bool argv_has(const struct process_view *v, const char *word)
{
	for (size_t i = 1; i < v->argc; i++)
		if (!strcmp(v->argv[i], word))
			return true;
	return false;
}

void pipeline_from_file(const char *file, const char *cwd, char *out, size_t size)
{
	char dir[1024], name[256];
	const char *base = path_basename(file);

	copy_string(name, sizeof(name), base);
	char *dot = strrchr(name, '.');
	if (dot && dot != name)
		*dot = '\0';
	/* Generic file names say nothing: name the pipeline after the directory. */
	if (!strcmp(name, "Snakefile") || !strcmp(name, "main") || !strcmp(name, "workflow") ||
	    !strcmp(name, "snakefile")) {
		if (strchr(file, '/'))
			path_dirname(file, dir, sizeof(dir));
		else
			copy_string(dir, sizeof(dir), cwd ? cwd : "");
		copy_string(out, size, dir[0] ? path_basename(dir) : name);
		if (!out[0])
			copy_string(out, size, name);
		return;
	}
	copy_string(out, size, name);
}

bool direct_child_step(const struct process_view *v, unsigned seq, const char *kind,
		       struct step_spec *out)
{
	if (!v->parent_is_engine || v->in_step)
		return false;
	snprintf(out->kind, sizeof(out->kind), "%s", kind);
	snprintf(out->key, sizeof(out->key), "%u", seq);
	out->name[0] = '\0';
	return true;
}
