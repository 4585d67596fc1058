/* A run's batch jobs and the work it handed elsewhere, as lines of show and the run report. */
#include <string.h>

#include "cli/render/format.h"
#include "cli/render/sections.h"

static const char *text_of(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : "";
}

static void print_job(FILE *out, json_t *j)
{
	char wait[32] = "-";
	json_t *w = json_object_get(j, "queue_wait_ns");

	if (json_is_integer(w))
		format_duration(json_integer_value(w), wait, sizeof(wait));
	fprintf(out, "  %-12s %-10s %9s  %s%s%s", text_of(j, "job"), text_of(j, "link"), wait,
		json_is_string(json_object_get(j, "step")) ? "step " : "(no step) ",
		text_of(j, "step"), json_is_string(json_object_get(j, "submitter")) ? "  by " : "");
	if (json_is_string(json_object_get(j, "submitter")))
		fprintf(out, "%s %s", text_of(j, "submitter"),
			*text_of(j, "script") ? text_of(j, "script") : text_of(j, "job_name"));
	if (!strcmp(text_of(j, "link"), "ambiguous"))
		fprintf(out, "  (%lld submissions could have sent it: not linked)",
			(long long)json_integer_value(json_object_get(j, "candidates")));
	fputc('\n', out);
}

static void print_elsewhere(FILE *out, json_t *s)
{
	const char *what = *text_of(s, "script") ? text_of(s, "script") : text_of(s, "command");
	const char *where = !strcmp(text_of(s, "scheduler"), "aws-batch")
				? "sent to AWS Batch: it runs there, not on this host"
				: "no job of it ran on this host (another node, or not started)";

	/* `aws batch submit-job` is its own command; sbatch's is its script. */
	bool named = !strncmp(what, text_of(s, "submitter"), strlen(text_of(s, "submitter")));
	fprintf(out, "  %s%s%s%s%s%s: %s\n", named ? "" : text_of(s, "submitter"), named ? "" : " ",
		what, *text_of(s, "job_name") ? " (job name " : "", text_of(s, "job_name"),
		*text_of(s, "job_name") ? ")" : "", where);
}

void batch_print(FILE *out, json_t *doc)
{
	json_t *jobs = json_object_get(doc, "batch_jobs");
	json_t *elsewhere = json_object_get(doc, "batch_elsewhere");
	size_t i;
	json_t *j;

	if (json_array_size(jobs)) {
		fprintf(out,
			"\nBatch jobs on this host (queue wait: submission to first process):\n");
		fprintf(out, "  %-12s %-10s %9s  %s\n", "JOB", "LINK", "QUEUED", "PART OF");
		json_array_foreach(jobs, i, j) print_job(out, j);
	}
	if (json_array_size(elsewhere)) {
		fprintf(out, "\nWork handed to a scheduler that this host did not run:\n");
		json_array_foreach(elsewhere, i, j) print_elsewhere(out, j);
	}
}
