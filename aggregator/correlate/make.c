/*
 * make as the command of `tracer run`: each job it starts (a recipe line's
 * shell, or the program it runs directly when the line needs no shell) is a
 * step, from its fork, named after the tool it runs. Only the command itself:
 * a make a script or another engine starts is part of their steps, and a make
 * typed at a shell is a build, not a run (there are too many).
 */
#include <string.h>

#include "aggregator/correlate/engines.h"
#include "common/fileutil.h"
#include "common/strutil.h"

static bool is_make(const char *program)
{
	return !strcmp(program, "make") || !strcmp(program, "gmake");
}

static bool make_run(const struct process_view *v, char *pipeline, size_t size)
{
	if (!is_make(v->tool->program))
		return false;
	const char *file = argv_value(v, "-f");
	if (!file)
		file = argv_value(v, "--file");
	if (!file)
		file = argv_value(v, "--makefile");
	const char *dir = argv_value(v, "-C");
	if (!dir)
		dir = argv_value(v, "--directory");
	/* make -f pipeline.mk: "pipeline"; a plain Makefile: its directory's name. */
	if (file && strcmp(path_basename(file), "Makefile") &&
	    strcmp(path_basename(file), "makefile") && strcmp(path_basename(file), "GNUmakefile")) {
		pipeline_from_file(file, dir ? dir : v->cwd, pipeline, size);
		return true;
	}
	pipeline_from_file("main", dir ? dir : v->cwd, pipeline, size);
	return true;
}

static bool make_step(const struct process_view *v, unsigned seq, struct step_spec *out)
{
	return direct_child_step(v, seq, "make-job", out);
}

const struct engine engine_make = {"make", make_run, make_step, true};
