/* The containers a run started, as lines of show, explain and the run report. */
#include <stdint.h>

#include "cli/render/jsonfield.h"
#include "cli/render/sections.h"

static void print_command(FILE *out, const json_t *command)
{
	for (size_t i = 0; i < json_array_size(command); i++)
		fprintf(out, " %s", json_string_value(json_array_get(command, i)));
}

static void print_other_runs(FILE *out, const json_t *others)
{
	size_t none = 0, n = json_array_size(others);

	for (size_t i = 0; i < n; i++) {
		const json_t *r = json_array_get(others, i);
		if (json_is_integer(r))
			fprintf(out, "%srun %lld", i ? ", " : "", (long long)json_integer_value(r));
		else
			none++;
	}
	if (none)
		fprintf(out, "%s%zu not in any run recorded here", none < n ? " and " : "", none);
}

void containers_print(FILE *out, const json_t *containers, int64_t unlinked, const char *indent)
{
	size_t n = json_array_size(containers);

	if (unlinked)
		fprintf(out,
			"%snote: %lld container %s of this run (docker/podman/nerdctl run) had no "
			"container linked: one running its image's own command (nothing after the "
			"image to match), or none started. Its work is not in this run\n",
			indent, (long long)unlinked, unlinked == 1 ? "CLI" : "CLIs");
	if (!n)
		return;
	fprintf(out, "%sContainers (%zu):\n", indent, n);
	for (size_t i = 0; i < n; i++) {
		const json_t *k = json_array_get(containers, i);
		fprintf(out, "%s  %.12s %s %s:", indent, jstr(k, "container_id"), jstr(k, "engine"),
			jstr(k, "image"));
		print_command(out, json_object_get(k, "command"));
		if (jint(k, "ambiguous")) {
			fprintf(
			    out,
			    "\n%s    AMBIGUOUS, counted in no run: %lld CLIs started this command "
			    "at that moment (this run and ",
			    indent, (long long)jint(k, "candidates"));
			print_other_runs(out, json_object_get(k, "other_runs"));
			fprintf(out, "); its processes are in no run\n");
			continue;
		}
		if (jint(k, "step_id"))
			fprintf(out, "\n%s    in step %lld (%s), linked by %s\n", indent,
				(long long)jint(k, "step_id"), jstr(k, "step_name"),
				jstr(k, "method"));
		else
			fprintf(out, "\n%s    in the run, linked by %s\n", indent,
				jstr(k, "method"));
	}
}
