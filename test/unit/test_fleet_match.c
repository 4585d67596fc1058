/*
 * The fleet's cross-host join of batch jobs to their submissions (cli/fleet_match.c),
 * with rows as the store returns them (64-bit integers quoted):
 *   - one submission of the same uid and work dir, before the job: linked;
 *   - two runs' submissions that could both have sent it: ambiguous, neither gets it;
 *   - several of one step: the earliest (ordered), the next job the next one;
 *   - another uid, another dir, a job that started before the submission (beyond the
 *     clock skew), an sbatch --wait that had ended before the job, a refused sbatch, a
 *     taken submission: unmatched;
 *   - Snakemake's rule and job id tell two steps' submissions apart.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli/db/fleet_join.h"

#define S INT64_C(1000000000)

static json_t *sub_row(const char *host, int run, int step, int uid, const char *dir, int64_t at,
		       int waits)
{
	char t[32];

	snprintf(t, sizeof(t), "%lld", (long long)at);
	return json_pack("{s:s, s:s, s:i, s:i, s:s, s:s, s:i, s:s, s:s, s:i}", "_host", host, "id",
			 "7", "run_id", run, "step_id", step, "scheduler", "slurm", "submitter",
			 "sbatch", "uid", uid, "work_dir", dir, "submit_ns", t, "waits", waits);
}

static json_t *job_row(const char *host, const char *id, const char *cwd, int64_t at)
{
	char t[32];

	snprintf(t, sizeof(t), "%lld", (long long)at);
	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "_host", host, "scheduler", "slurm", "job_id",
			 id, "cwd", cwd, "first_ns", t);
}

static struct fleet_job job(json_t *row, int uid)
{
	return (struct fleet_job){.row = row, .uid = uid, .step = "batch", .sub = -1};
}

static void one_candidate_links_and_two_runs_are_ambiguous(void **state)
{
	(void)state;
	struct fleet_sub subs[2] = {
	    {.row = sub_row("a", 1, 10, 1000, "/w", 100 * S, 1), .ours = true},
	    {.row = sub_row("z", 5, 50, 1000, "/w", 101 * S, 1)}};
	struct fleet_job jobs[1] = {job(job_row("b", "42", "/w", 100 * S + S / 10), 1000)};

	/* Only a's submission was made before the job (z's 0.9 s after it: beyond the skew). */
	fleet_match(subs, 2, jobs, 1);
	assert_string_equal(jobs[0].link, "linked");
	assert_int_equal(jobs[0].sub, 0);
	assert_int_equal(jobs[0].candidates, 1);
	json_decref(jobs[0].row);

	/* A job after both: two runs could have sent it. */
	subs[0].taken = 0;
	jobs[0] = job(job_row("b", "43", "/w", 102 * S), 1000);
	fleet_match(subs, 2, jobs, 1);
	assert_string_equal(jobs[0].link, "ambiguous");
	assert_int_equal(jobs[0].sub, -1);
	assert_int_equal(jobs[0].candidates, 2);
	assert_true(jobs[0].ours);
	assert_int_equal(subs[0].taken + subs[1].taken, 0);
	json_decref(jobs[0].row);
	json_decref(subs[0].row);
	json_decref(subs[1].row);
}

static void one_steps_submissions_are_taken_in_order(void **state)
{
	(void)state;
	struct fleet_sub subs[2] = {{.row = sub_row("a", 1, 10, 0, "/w", 101 * S, 0)},
				    {.row = sub_row("a", 1, 10, 0, "/w", 100 * S, 0)}};
	struct fleet_job jobs[2] = {job(job_row("b", "1", "/w", 105 * S), 0),
				    job(job_row("c", "2", "/w", 106 * S), 0)};

	fleet_match(subs, 2, jobs, 2);
	assert_string_equal(jobs[0].link, "ordered");
	assert_int_equal(jobs[0].sub, 1); /* the earlier submission */
	assert_string_equal(jobs[1].link, "linked");
	assert_int_equal(jobs[1].sub, 0);
	for (int i = 0; i < 2; i++) {
		json_decref(jobs[i].row);
		json_decref(subs[i].row);
	}
}

static void what_rules_a_submission_out(void **state)
{
	(void)state;
	struct fleet_sub s = {.row = sub_row("a", 1, 10, 1000, "/w", 100 * S, 1)};
	json_t *rows[] = {job_row("b", "1", "/w", 110 * S), job_row("b", "2", "/other", 110 * S),
			  job_row("b", "3", "/w", 100 * S - FLEET_SKEW_NS - 1)};
	struct fleet_job j;

	j = job(rows[0], 1001); /* another user */
	fleet_match(&s, 1, &j, 1);
	assert_string_equal(j.link, "unmatched");
	j = job(rows[1], 1000); /* another work dir */
	fleet_match(&s, 1, &j, 1);
	assert_string_equal(j.link, "unmatched");
	j = job(rows[2], 1000); /* before the submission, beyond the skew */
	fleet_match(&s, 1, &j, 1);
	assert_string_equal(j.link, "unmatched");
	j = job(rows[0], 1000);
	j.step = "0"; /* a job step is srun's, not sbatch's */
	fleet_match(&s, 1, &j, 1);
	assert_string_equal(j.link, "unmatched");
	s.end_ns = 105 * S; /* sbatch --wait had ended before the job started */
	j = job(rows[0], 1000);
	fleet_match(&s, 1, &j, 1);
	assert_string_equal(j.link, "unmatched");
	s.end_ns = 0;
	fleet_match(&s, 1, &j, 1);
	assert_string_equal(j.link, "linked");
	fleet_match(&s, 1, &j, 1); /* taken: one job per submission */
	assert_string_equal(j.link, "unmatched");
	json_object_set_new(s.row, "waits", json_integer(0));
	s.taken = 0;
	s.failed = true; /* a refused sbatch submitted nothing */
	fleet_match(&s, 1, &j, 1);
	assert_string_equal(j.link, "unmatched");
	for (int i = 0; i < 3; i++)
		json_decref(rows[i]);
	json_decref(s.row);
}

static void snakemake_rules_tell_steps_apart(void **state)
{
	(void)state;
	struct fleet_sub subs[2] = {{.row = sub_row("a", 1, 10, 0, "/w", 100 * S, 0)},
				    {.row = sub_row("a", 1, 11, 0, "/w", 100 * S + 1, 0)}};
	json_object_set_new(subs[0].row, "engine_rule", json_string("align"));
	json_object_set_new(subs[1].row, "engine_rule", json_string("count"));
	struct fleet_job j = job(job_row("b", "9", "/w", 103 * S), 0);

	/* Without the job's rule: two steps of one run that it cannot tell apart. */
	fleet_match(subs, 2, &j, 1);
	assert_string_equal(j.link, "ambiguous");
	json_object_set_new(j.row, "engine_rule", json_string("count"));
	fleet_match(subs, 2, &j, 1);
	assert_string_equal(j.link, "linked");
	assert_int_equal(j.sub, 1);
	json_decref(j.row);
	json_decref(subs[0].row);
	json_decref(subs[1].row);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(one_candidate_links_and_two_runs_are_ambiguous),
	    cmocka_unit_test(one_steps_submissions_are_taken_in_order),
	    cmocka_unit_test(what_rules_a_submission_out),
	    cmocka_unit_test(snakemake_rules_tell_steps_apart),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
