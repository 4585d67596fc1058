/*
 * The fleet's batch rows read for a join: the store's answers as JSON rows, the
 * processes they name, and the submissions and jobs filled in for fleet_match.
 * Shared by the run's join (fleet_join.c), a job's own run (fleet_jobside.c) and
 * the runs list (fleet_runs_join.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/db/fleet.h"
#include "cli/db/fleet_join.h"
#include "cli/render/clierror.h"

json_t *fleet_json_rows(const char *sql, char *err, size_t size)
{
	char *text = fleet_query(sql, err, size);
	json_t *rows, *r;

	if (!text)
		return NULL;
	rows = json_array();
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		if ((r = json_loads(line, 0, NULL)))
			json_array_append_new(rows, r);
	free(text);
	return rows;
}

/* The store's answer to sql as an array of row objects; NULL said why. */
json_t *fleet_rows_of(const char *verb, const char *sql)
{
	char err[1024];
	json_t *rows = fleet_json_rows(sql, err, sizeof(err));

	if (!rows)
		cli_error(verb, "%s\n", err);
	return rows;
}

/* "host:id" -> the processes row's object, for the rows of the store's processes that
 * select (an IN subquery over (_host, id)) names. PREWHERE on the record's key (the same
 * in every copy, a tombstone's too): only those processes' granules are read, where the
 * outer filter over every process under FINAL read the whole table (9 s of `runs` on
 * 47 M processes). */
json_t *fleet_processes_by_key(const char *verb, const char *select)
{
	char sql[4096];
	json_t *rows, *by = json_object(), *r;
	size_t i;

	snprintf(sql, sizeof(sql),
		 "SELECT _host, toString(id) AS key_id, uid, slurm_step, end_ns, exit_code, signal "
		 "FROM `%s`.processes FINAL PREWHERE (_host, id) IN (%s) WHERE _withdrawn = 0 "
		 "FORMAT JSONEachRow",
		 fleet_database(), select);
	if (!(rows = fleet_rows_of(verb, sql))) {
		json_decref(by);
		return NULL;
	}
	json_array_foreach(rows, i, r)
	{
		char key[300];
		snprintf(key, sizeof(key), "%s:%s", fleet_text(r, "_host"),
			 fleet_text(r, "key_id"));
		json_object_set(by, key, r);
	}
	json_decref(rows);
	return by;
}

static json_t *process_of(json_t *by, json_t *row, const char *id_column)
{
	char key[300];

	snprintf(key, sizeof(key), "%s:%" PRId64, fleet_text(row, "_host"),
		 fleet_int(row, id_column));
	return json_object_get(by, key);
}

int fleet_fill_subs(struct fleet_sub *subs, json_t *rows, json_t *procs, const char *host,
		    int64_t run)
{
	size_t i;
	json_t *r;

	json_array_foreach(rows, i, r)
	{
		json_t *p = process_of(procs, r, "id");
		struct fleet_sub *s = &subs[i];
		s->row = r;
		s->end_ns = p ? fleet_int(p, "end_ns") : 0;
		s->failed = p && (json_is_string(json_object_get(p, "signal")) ||
				  json_is_integer(json_object_get(p, "signal")) ||
				  fleet_int(p, "exit_code") != 0);
		s->ours = !host ||
			  (!strcmp(fleet_text(r, "_host"), host) && fleet_int(r, "run_id") == run);
		s->taken = 0;
	}
	return (int)json_array_size(rows);
}

int fleet_fill_jobs(struct fleet_job *jobs, json_t *rows, json_t *procs)
{
	size_t i;
	json_t *r;

	json_array_foreach(rows, i, r)
	{
		json_t *p = process_of(procs, r, "first_process_id");
		jobs[i] = (struct fleet_job){.row = r, .uid = -1, .step = "", .sub = -1};
		if (p && json_object_get(p, "uid") && !json_is_null(json_object_get(p, "uid")))
			jobs[i].uid = fleet_int(p, "uid");
		if (p)
			jobs[i].step = fleet_text(p, "slurm_step");
	}
	return (int)json_array_size(rows);
}

/* A store no shipper that ships batch rows wrote to has no batch tables: nothing to join. */
int fleet_has_batch_tables(const char *verb, const char *d)
{
	char sql[512];

	snprintf(sql, sizeof(sql),
		 "SELECT name FROM system.tables WHERE database = '%s' AND name IN "
		 "('batch_submissions', 'batch_jobs') FORMAT JSONEachRow",
		 d);
	json_t *rows = fleet_rows_of(verb, sql);
	int n = rows ? (int)json_array_size(rows) : -1;
	json_decref(rows);
	return n < 0 ? -1 : n == 2;
}

/* The rows of one batch table that where selects, ordered, and the processes they name. */
static int load_side(const char *verb, const char *table, const char *id_column, const char *where,
		     const char *order, int max, json_t **rows, json_t **procs)
{
	const char *d = fleet_database();
	char sql[4096];

	snprintf(sql, sizeof(sql),
		 "SELECT * FROM `%s`.%s FINAL WHERE %s ORDER BY %s LIMIT %d FORMAT JSONEachRow", d,
		 table, where, order, max);
	if (!(*rows = fleet_rows_of(verb, sql)))
		return -1;
	snprintf(sql, sizeof(sql), "SELECT _host, %s FROM `%s`.%s FINAL WHERE %s", id_column, d,
		 table, where);
	*procs = fleet_processes_by_key(verb, sql);
	return *procs ? 0 : -1;
}

int fleet_batch_load(struct fleet_batch *b, const char *verb, const struct fleet_batch_query *q)
{
	int max = q->max ? q->max : FLEET_BATCH_MAX;

	*b = (struct fleet_batch){0};
	if (load_side(verb, "batch_submissions", "id", q->subs_where,
		      q->subs_order ? q->subs_order : "submit_ns", max, &b->sub_rows,
		      &b->sub_procs) < 0 ||
	    load_side(verb, "batch_jobs", "first_process_id", q->jobs_where,
		      q->jobs_order ? q->jobs_order : "first_ns", max, &b->job_rows,
		      &b->job_procs) < 0)
		return -1;
	b->subs = calloc(json_array_size(b->sub_rows) + 1, sizeof(*b->subs));
	b->jobs = calloc(json_array_size(b->job_rows) + 1, sizeof(*b->jobs));
	if (!b->subs || !b->jobs) {
		cli_error(verb, "out of memory for the fleet's batch rows\n");
		return -1;
	}
	b->n_subs = fleet_fill_subs(b->subs, b->sub_rows, b->sub_procs, q->host, q->run);
	b->n_jobs = fleet_fill_jobs(b->jobs, b->job_rows, b->job_procs);
	return 0;
}

void fleet_batch_free(struct fleet_batch *b)
{
	free(b->subs);
	free(b->jobs);
	json_decref(b->sub_rows);
	json_decref(b->job_rows);
	json_decref(b->sub_procs);
	json_decref(b->job_procs);
	*b = (struct fleet_batch){0};
}
