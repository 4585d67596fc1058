/* A run's batch jobs and the work it handed elsewhere, as lines of show and the run report. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/render/format.h"
#include "cli/render/sections.h"

static const char *text_of(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : "";
}

static void print_job(FILE *out, json_t *j, bool fleet)
{
	char wait[32] = "-";
	json_t *w = json_object_get(j, "queue_wait_ns");

	if (json_is_integer(w))
		format_duration(json_integer_value(w), wait, sizeof(wait));
	if (fleet)
		fprintf(out, "  %-20.20s", text_of(j, "host"));
	fprintf(out, "  %-12s %-10s %9s  %s%s%s", text_of(j, "job"), text_of(j, "link"), wait,
		json_is_string(json_object_get(j, "step")) ? "step " : "(no step) ",
		text_of(j, "step"), json_is_string(json_object_get(j, "submitter")) ? "  by " : "");
	if (json_is_string(json_object_get(j, "submitter")))
		fprintf(out, "%s %s", text_of(j, "submitter"),
			*text_of(j, "script") ? text_of(j, "script") : text_of(j, "job_name"));
	if (!strcmp(text_of(j, "link"), "ambiguous"))
		fprintf(out, "  (%lld submissions could have sent it: not linked)",
			(long long)json_integer_value(json_object_get(j, "candidates")));
	if (json_is_string(json_object_get(j, "fleet_run")))
		fprintf(out, "  (fleet: %s to run %s)", text_of(j, "fleet_link"),
			text_of(j, "fleet_run"));
	else if (!strcmp(text_of(j, "fleet_link"), "ambiguous"))
		fprintf(out, "  (fleet: %lld submissions could have sent it: not joined)",
			(long long)json_integer_value(json_object_get(j, "fleet_candidates")));
	else if (json_is_string(json_object_get(j, "fleet_link")))
		fprintf(out, "  (fleet: not joined, no submission found in the fleet store)");
	fputc('\n', out);
}

static void print_elsewhere(FILE *out, json_t *s, bool fleet)
{
	const char *what = *text_of(s, "script") ? text_of(s, "script") : text_of(s, "command");
	const char *where = !strcmp(text_of(s, "scheduler"), "aws-batch")
				? "sent to AWS Batch: it runs there, not on this host"
			    : fleet
				? "not joined: no job of it found in the fleet store"
				: "no job of it ran on this host (another node, or not started)";

	/* `aws batch submit-job` is its own command; sbatch's is its script. */
	bool named = !strncmp(what, text_of(s, "submitter"), strlen(text_of(s, "submitter")));
	fprintf(out, "  %s%s%s%s%s%s: %s\n", named ? "" : text_of(s, "submitter"), named ? "" : " ",
		what, *text_of(s, "job_name") ? " (job name " : "", text_of(s, "job_name"),
		*text_of(s, "job_name") ? ")" : "", where);
}

/* A run joined across hosts in the fleet store: each host's share. */
static void print_hosts(FILE *out, json_t *hosts)
{
	size_t i;
	json_t *h;

	if (!json_array_size(hosts))
		return;
	fprintf(out, "\nHosts of this run (peak memory: the most one host held):\n");
	fprintf(out, "  %-20s %-16s %-4s %5s %9s %10s %9s\n", "HOST", "HOSTNAME", "ROLE", "JOBS",
		"PROCESSES", "CPU", "PEAK MEM");
	json_array_foreach(hosts, i, h)
	{
		char cpu[32], mem[32];
		const char *name = json_string_value(json_object_get(h, "hostname"));
		format_duration(json_integer_value(json_object_get(h, "cpu_ns")), cpu, sizeof(cpu));
		format_bytes((uint64_t)json_integer_value(json_object_get(h, "peak_rss_kb")) * 1024,
			     mem, sizeof(mem));
		fprintf(out, "  %-20.20s %-16.16s %-4s %5lld %9lld %10s %9s\n",
			json_string_value(json_object_get(h, "host")), name ? name : "-",
			json_integer_value(json_object_get(h, "head")) ? "head" : "jobs",
			(long long)json_integer_value(json_object_get(h, "jobs")),
			(long long)json_integer_value(json_object_get(h, "processes")), cpu, mem);
	}
}

void batch_print(FILE *out, json_t *doc)
{
	json_t *jobs = json_object_get(doc, "batch_jobs");
	json_t *elsewhere = json_object_get(doc, "batch_elsewhere");
	bool fleet = json_is_true(json_object_get(doc, "fleet"));
	size_t i;
	json_t *j;

	if (json_array_size(jobs)) {
		fprintf(out, "\nBatch jobs %s (queue wait: submission to first process):\n",
			fleet ? "on every host" : "on this host");
		if (fleet)
			fprintf(out, "  %-20s", "HOST");
		fprintf(out, "  %-12s %-10s %9s  %s\n", "JOB", "LINK", "QUEUED", "PART OF");
		json_array_foreach(jobs, i, j) print_job(out, j, fleet);
	}
	if (json_array_size(elsewhere)) {
		fprintf(out, "\nWork handed to a scheduler that %s:\n",
			fleet ? "no host of the fleet store ran" : "this host did not run");
		json_array_foreach(elsewhere, i, j) print_elsewhere(out, j, fleet);
	}
	print_hosts(out, json_object_get(doc, "hosts"));
}

/* Jobs the run report's summary lists: the longest waits. */
#define SUMMARY_JOBS 4

static int64_t wait_of(json_t *j)
{
	json_t *w = json_object_get(j, "queue_wait_ns");

	return json_is_integer(w) ? json_integer_value(w) : -1;
}

static int by_wait_desc(const void *a, const void *b)
{
	int64_t wa = wait_of(*(json_t *const *)a), wb = wait_of(*(json_t *const *)b);

	return wa < wb ? 1 : wa > wb ? -1 : 0;
}

/* "81200_3   queued 3.20s  step 4: align", for the summary. */
static void summary_job(FILE *out, json_t *j)
{
	char wait[32] = "-";
	const char *link = text_of(j, "link");

	if (wait_of(j) >= 0)
		format_duration(wait_of(j), wait, sizeof(wait));
	fprintf(out, "  %-12s queued %-8s ", text_of(j, "job"), wait);
	if (json_is_integer(json_object_get(j, "step_id")))
		fprintf(out, "step %lld: %s",
			(long long)json_integer_value(json_object_get(j, "step_id")),
			text_of(j, "step"));
	else
		fprintf(out, "(no step)");
	if (strcmp(link, "linked") != 0 && strcmp(link, "ordered") != 0)
		fprintf(out, "  (%s)", link);
	fputc('\n', out);
}

void batch_summary_print(FILE *out, json_t *doc)
{
	json_t *jobs = json_object_get(doc, "batch_jobs");
	size_t n = json_array_size(jobs), waited = 0;
	json_t **order = n ? calloc(n, sizeof(*order)) : NULL;
	char median[32], longest[32];

	if (!order)
		return;
	for (size_t i = 0; i < n; i++)
		order[i] = json_array_get(jobs, i);
	qsort(order, n, sizeof(*order), by_wait_desc);
	while (waited < n && wait_of(order[waited]) >= 0)
		waited++;
	fprintf(out, "\nBatch jobs on this host (%zu%s", n,
		n > SUMMARY_JOBS ? "; the longest waits" : "");
	if (waited) {
		format_duration(wait_of(order[waited / 2]), median, sizeof(median));
		format_duration(wait_of(order[0]), longest, sizeof(longest));
		fprintf(out, "; queue wait, submission to first process: median %s, longest %s",
			median, longest);
	}
	fprintf(out, "):\n");
	for (size_t i = 0; i < n && i < SUMMARY_JOBS; i++)
		summary_job(out, order[i]);
	free(order);
}
