/*
 * A run's batch jobs for show and the report: the jobs on this host linked to
 * it (batch_jobs), with their queue wait, and the submissions whose work no
 * job here took (another host, AWS Batch, or not started yet). Slurm array
 * tasks have a raw job id of their own in the cgroup path; what users and
 * sacct call them (JOB_TASK) only Slurm knows, so the names are asked of
 * `sacct` at read time when it answers (the submitter's side shows only the
 * array's spec, never which raw id became which task).
 */
#include "cli/model/batchjobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/db/fleet.h"
#include "cli/db/rows.h"
#include "cli/render/format.h"

static const char jobs_sql[] =
    "SELECT b.job_id AS job_id_raw, b.host_id AS host, b.scheduler, b.link, b.candidates, "
    "b.run_id, b.step_id, "
    "s.name AS step, b.first_ns, b.queue_wait_ns, b.cwd, b.snakefile, b.engine_rule AS rule, "
    "b.engine_job_id, sub.submitter, sub.script, sub.job_name, sub.array_spec, sub.submit_ns "
    "FROM batch_jobs b LEFT JOIN steps s ON s.id = b.step_id "
    "LEFT JOIN batch_submissions sub ON sub.id = b.submission_id "
    "WHERE b.run_id = ?1 ORDER BY b.first_ns";

static const char elsewhere_sql[] =
    "SELECT id AS submission_id, scheduler, submitter, step_id, work_dir, script, command, "
    "job_name, array_spec, waits, submit_ns FROM batch_submissions "
    "WHERE run_id = ?1 AND jobs = 0 ORDER BY submit_ns";

/* Reads "RAW|JOBID" lines of sacct into names; false if sacct did not answer. */
static bool read_sacct(FILE *in, json_t *names)
{
	char line[256];

	while (fgets(line, sizeof(line), in)) {
		char *bar = strchr(line, '|');
		if (!bar)
			continue;
		*bar = '\0';
		bar[1 + strcspn(bar + 1, "|\n")] = '\0';
		if (!strchr(line, '.') && bar[1])
			json_object_set_new(names, line, json_string(bar + 1));
	}
	return json_object_size(names) > 0;
}

/* sacct -X -n -P -j RAW,... --format=JobIDRaw,JobID: raw id -> JOB_TASK. */
static json_t *sacct_names(json_t *jobs)
{
	char list[4096] = "";
	size_t used = 0, i;
	json_t *j, *names = json_object();
	int fds[2];

	json_array_foreach(jobs, i, j)
	{
		const char *raw = json_string_value(json_object_get(j, "job_id_raw"));
		const char *sched = json_string_value(json_object_get(j, "scheduler"));
		if (raw && sched && !strcmp(sched, "slurm") &&
		    used + strlen(raw) + 2 < sizeof(list))
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
						 used ? "," : "", raw);
	}
	if (!used || pipe(fds) != 0)
		return names;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
		execlp("sacct", "sacct", "-X", "-n", "-P", "-j", list, "--format=JobIDRaw,JobID",
		       (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	FILE *in = pid > 0 ? fdopen(fds[0], "r") : NULL;
	if (in) {
		read_sacct(in, names);
		fclose(in);
	} else {
		close(fds[0]);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return names;
}

json_t *batch_load(sqlite3 *db, int64_t run_id)
{
	json_t *jobs = cli_rows_json(db, jobs_sql, run_id);
	json_t *elsewhere = cli_rows_json(db, elsewhere_sql, run_id);
	size_t i;
	json_t *j;

	if (!jobs)
		jobs = json_array();
	if (!elsewhere)
		elsewhere = json_array();
	json_t *names = json_array_size(jobs) ? sacct_names(jobs) : json_object();
	json_array_foreach(jobs, i, j)
	{
		json_t *raw = json_object_get(j, "job_id_raw");
		json_t *named = json_object_get(names, json_string_value(raw));
		json_object_set(j, "job", named ? named : raw);
		json_object_set_new(j, "job_named_by", json_string(named ? "sacct" : "cgroup"));
		if (!fleet_active()) /* every job here ran on this host */
			json_object_del(j, "host");
	}
	json_decref(names);
	fleet_job_parents_add(db, jobs);
	/* fleet: read from the fleet store, for render/ to word (it never asks db/). */
	json_t *doc = json_pack("{s:o, s:o, s:b}", "batch_jobs", jobs, "batch_elsewhere", elsewhere,
				"fleet", fleet_active());
	json_t *hosts = fleet_hosts_json(db);
	if (hosts)
		json_object_set_new(doc, "hosts", hosts);
	return doc;
}

void batch_add(json_t *structure, json_t *batch)
{
	json_t *steps = json_object_get(structure, "steps");
	size_t i, k;
	json_t *j, *s;

	json_array_foreach(json_object_get(batch, "batch_jobs"), i, j)
	{
		json_int_t step = json_integer_value(json_object_get(j, "step_id"));
		json_array_foreach(steps, k, s)
		{
			if (!step || json_integer_value(json_object_get(s, "id")) != step)
				continue;
			json_object_set(s, "queue_wait_ns", json_object_get(j, "queue_wait_ns"));
			json_object_set(s, "batch_job", json_object_get(j, "job"));
		}
	}
	json_object_update(structure, batch);
	json_decref(batch);
}
