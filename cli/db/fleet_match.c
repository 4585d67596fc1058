/*
 * Which submission sent which batch job, across hosts: the keys both sides ship
 * (docs/shipping.md, "One run across hosts"). The job's side knows its scheduler,
 * job id, host, first process (uid, start, cwd, Slurm step) and what an engine inside
 * it shows; the submitter's side its scheduler, submitter, uid, start, work dir,
 * whether it waits and its engine's jobscript. The rules are the aggregator's on one
 * host (aggregator/correlate/batch.c), with the hosts' clock skew allowed.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/db/fleet_join.h"

int64_t fleet_int(json_t *row, const char *column)
{
	json_t *v = json_object_get(row, column);

	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_string(v))
		return strtoll(json_string_value(v), NULL, 10);
	return 0;
}

const char *fleet_text(json_t *row, const char *column)
{
	const char *s = json_string_value(json_object_get(row, column));

	return s ? s : "";
}

/* Both say it and disagree: a hint that rules the pair out. */
static bool differ(json_t *a, json_t *b, const char *column)
{
	const char *x = fleet_text(a, column), *y = fleet_text(b, column);

	return x[0] && y[0] && strcmp(x, y) != 0;
}

/* sbatch starts a job's batch step; srun and salloc its other steps. */
static bool starts_step(const struct fleet_sub *s, const struct fleet_job *j)
{
	const char *submitter = fleet_text(s->row, "submitter");

	if (strcmp(fleet_text(j->row, "scheduler"), "slurm") != 0)
		return true;
	if (!j->step[0] || !strcmp(j->step, "batch"))
		return !strcmp(submitter, "sbatch");
	return strcmp(submitter, "sbatch") != 0;
}

/* Was s still waiting for a job when j's first process started? */
static bool waiting(const struct fleet_sub *s, int64_t first_ns)
{
	/* One job per submission, unless an array (we cannot count its tasks here). */
	if (s->taken && !fleet_text(s->row, "array_spec")[0])
		return false;
	if (fleet_int(s->row, "waits"))
		return !s->end_ns || s->end_ns + FLEET_SKEW_NS >= first_ns;
	return !s->failed; /* a refused sbatch submitted nothing */
}

static bool could_submit(const struct fleet_sub *s, const struct fleet_job *j)
{
	const char *work_dir = fleet_text(s->row, "work_dir");
	int64_t first_ns = fleet_int(j->row, "first_ns");

	if (strcmp(fleet_text(s->row, "scheduler"), fleet_text(j->row, "scheduler")) != 0 ||
	    j->uid < 0 || fleet_int(s->row, "uid") != j->uid ||
	    fleet_int(s->row, "submit_ns") > first_ns + FLEET_SKEW_NS || !starts_step(s, j) ||
	    !waiting(s, first_ns))
		return false;
	/* A work dir the submitter cannot tell (PBS without -d) is no evidence. */
	if (work_dir[0] && strcmp(work_dir, fleet_text(j->row, "cwd")) != 0)
		return false;
	return !differ(s->row, j->row, "engine_dir") && !differ(s->row, j->row, "engine_rule") &&
	       !differ(s->row, j->row, "engine_job_id");
}

static bool same_run(const struct fleet_sub *a, const struct fleet_sub *b)
{
	return !strcmp(fleet_text(a->row, "_host"), fleet_text(b->row, "_host")) &&
	       fleet_int(a->row, "run_id") == fleet_int(b->row, "run_id");
}

static void decide(struct fleet_sub *subs, int n_subs, struct fleet_job *j)
{
	bool one_run = true, one_step = true, one_rule = true;
	int earliest = -1, n = 0;

	for (int i = 0; i < n_subs; i++) {
		struct fleet_sub *s = &subs[i];
		if (!could_submit(s, j))
			continue;
		j->ours |= s->ours;
		if (earliest >= 0) {
			struct fleet_sub *e = &subs[earliest];
			one_run &= same_run(e, s);
			one_step &= same_run(e, s) &&
				    fleet_int(e->row, "step_id") == fleet_int(s->row, "step_id");
			one_rule &= fleet_text(e->row, "engine_rule")[0] &&
				    !differ(e->row, s->row, "engine_rule");
			if (fleet_int(s->row, "submit_ns") < fleet_int(e->row, "submit_ns"))
				earliest = i;
		} else {
			earliest = i;
		}
		n++;
	}
	j->candidates = n;
	j->sub = -1;
	if (!n) {
		j->link = "unmatched";
	} else if (!one_run || (n > 1 && !one_step && !one_rule)) {
		j->link = "ambiguous";
	} else {
		j->link = n == 1 ? "linked" : "ordered";
		j->sub = earliest;
		subs[earliest].taken++;
	}
}

void fleet_match(struct fleet_sub *subs, int n_subs, struct fleet_job *jobs, int n_jobs)
{
	for (int k = 0; k < n_jobs; k++)
		decide(subs, n_subs, &jobs[k]);
}
