/*
 * tracer cost: what the host cost over a period and who used it. The host's
 * price over the period is split into a CPU half and a memory half (weights
 * configurable); each process gets the share of each half it used (CPU
 * seconds over CPU capacity, GiB-seconds over memory capacity); what nobody
 * used is idle. Parts add up exactly to the host's cost (docs/cost.md).
 */
#include <grp.h>
#include <ini.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/clidb.h"
#include "cli/commands.h"
#include "cli/format.h"
#include "cli/hostprice.h"
#include "cli/usage.h"
#include "common/timeutil.h"

static const char usage_text[] =
    "usage: tracer cost [--db PATH] [--json] [RUN]\n"
    "                   [--since DURATION] [--by run|pipeline|step|tool|user|costcenter]\n"
    "                   [--rate USD_PER_HOUR | --instance-type T [--region R] [--lifecycle L]]\n"
    "                   [--prices FILE] [--no-detect] [--imds-endpoint URL]\n"
    "                   [--cpu-weight W] [--cost-centers FILE]\n"
    "  a run's cost by step (default: the latest run), or --since 24h by run\n";

struct center_map {
	char kind[8]; /* user, group, cgroup */
	char key[256];
	char center[128];
};

struct bucket {
	char key[256];
	double cpu_s, mem_gib_s;
	unsigned processes;
};

struct tally {
	const char *by;
	struct bucket *b;
	size_t n, cap;
	struct center_map *centers;
	size_t n_centers;
	double cpu_s, mem_gib_s;
};

static int center_line(void *user, const char *section, const char *name, const char *value)
{
	struct tally *t = user;
	const char *kind = !strcmp(section, "users")	 ? "user"
			   : !strcmp(section, "groups")	 ? "group"
			   : !strcmp(section, "cgroups") ? "cgroup"
							 : NULL;
	if (!kind)
		return 0;
	struct center_map *bigger = realloc(t->centers, (t->n_centers + 1) * sizeof(*bigger));
	if (!bigger)
		return 0;
	t->centers = bigger;
	struct center_map *m = &t->centers[t->n_centers++];
	snprintf(m->kind, sizeof(m->kind), "%s", kind);
	snprintf(m->key, sizeof(m->key), "%s", name);
	snprintf(m->center, sizeof(m->center), "%s", value);
	return 1;
}

static void user_name(uint32_t uid, char *out, size_t size)
{
	struct passwd *pw = getpwuid(uid);
	if (pw)
		snprintf(out, size, "%s", pw->pw_name);
	else
		snprintf(out, size, "uid %u", uid);
}

/* user first, then group, then the longest matching cgroup prefix. */
static void center_of(const struct tally *t, const struct process_usage *u, char *out, size_t size)
{
	char user[64], group[64];
	size_t best = 0;
	struct group *gr = getgrgid(u->gid);

	user_name(u->uid, user, sizeof(user));
	snprintf(group, sizeof(group), "%s", gr ? gr->gr_name : "");
	snprintf(out, size, "(unassigned)");
	for (size_t i = 0; i < t->n_centers; i++)
		if (!strcmp(t->centers[i].kind, "user") && !strcmp(t->centers[i].key, user)) {
			snprintf(out, size, "%s", t->centers[i].center);
			return;
		}
	for (size_t i = 0; i < t->n_centers; i++)
		if (!strcmp(t->centers[i].kind, "group") && !strcmp(t->centers[i].key, group)) {
			snprintf(out, size, "%s", t->centers[i].center);
			return;
		}
	for (size_t i = 0; i < t->n_centers; i++) {
		size_t n = strlen(t->centers[i].key);
		if (!strcmp(t->centers[i].kind, "cgroup") && n > best &&
		    !strncmp(u->memory_cgroup, t->centers[i].key, n)) {
			snprintf(out, size, "%s", t->centers[i].center);
			best = n;
		}
	}
}

static void add(const struct process_usage *u, void *ctx)
{
	struct tally *t = ctx;
	char key[256];

	if (!strcmp(t->by, "run"))
		snprintf(key, sizeof(key), "%s", u->run_id ? u->run : "(not in a run)");
	else if (!strcmp(t->by, "pipeline"))
		snprintf(key, sizeof(key), "%s",
			 !u->run_id	  ? "(not in a run)"
			 : u->pipeline[0] ? u->pipeline
					  : "(no pipeline)");
	else if (!strcmp(t->by, "step"))
		snprintf(key, sizeof(key), "%s",
			 !u->run_id   ? "(not in a run)"
			 : u->step_id ? u->step
				      : "(outside steps)");
	else if (!strcmp(t->by, "tool"))
		snprintf(key, sizeof(key), "%s", u->tool[0] ? u->tool : "(unknown)");
	else if (!strcmp(t->by, "user"))
		user_name(u->uid, key, sizeof(key));
	else
		center_of(t, u, key, sizeof(key));
	t->cpu_s += u->cpu_s;
	t->mem_gib_s += u->mem_gib_s;
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->b[i].key, key)) {
			t->b[i].cpu_s += u->cpu_s;
			t->b[i].mem_gib_s += u->mem_gib_s;
			t->b[i].processes++;
			return;
		}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 32;
		struct bucket *bigger = realloc(t->b, cap * sizeof(*bigger));
		if (!bigger)
			return;
		t->b = bigger;
		t->cap = cap;
	}
	struct bucket *b = &t->b[t->n++];
	snprintf(b->key, sizeof(b->key), "%s", key);
	b->cpu_s = u->cpu_s;
	b->mem_gib_s = u->mem_gib_s;
	b->processes = 1;
}

static int by_cost(const void *a, const void *b)
{
	const struct bucket *x = a, *y = b;
	double cx = x->cpu_s + x->mem_gib_s, cy = y->cpu_s + y->mem_gib_s;
	return (cx < cy) - (cx > cy);
}

/* "24h", "90m", "2d", "3600s" -> ns; 0 if unreadable. */
static int64_t parse_duration(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	double unit = !strcmp(end, "s") || !*end ? 1
		      : !strcmp(end, "m")	 ? 60
		      : !strcmp(end, "h")	 ? 3600
		      : !strcmp(end, "d")	 ? 86400
						 : 0;
	return v > 0 && unit > 0 ? (int64_t)(v * unit * 1e9) : 0;
}

int cmd_cost(int argc, char **argv)
{
	struct cli_query q = {.verb = "cost"};
	struct price_options po = {0};
	const char *since = NULL, *by = NULL, *weight_arg = NULL, *centers_path = NULL;
	const struct cli_extra_option extra[] = {
	    {"since", true, &since},
	    {"by", true, &by},
	    PRICE_EXTRA_OPTIONS(po),
	    {"cpu-weight", true, &weight_arg},
	    {"cost-centers", true, &centers_path},
	    {NULL, false, NULL},
	};
	struct tally t = {0};
	struct price_table table = {0};
	struct host_price hp;
	struct host_capacity cap;
	bool done;
	int rc = cli_parse(argc, argv, &q, usage_text, extra, &done);

	if (done)
		return rc;
	double w = weight_arg ? strtod(weight_arg, NULL) : 0.5;
	if (w < 0 || w > 1) {
		fprintf(stderr, "tracer cost: --cpu-weight is between 0 and 1\n");
		return 2;
	}
	const char *bys[] = {"run", "pipeline", "step", "tool", "user", "costcenter"};
	t.by = by ? by : (since ? "run" : "step");
	bool known_by = false;
	for (size_t i = 0; i < 6; i++)
		known_by = known_by || !strcmp(t.by, bys[i]);
	if (!known_by) {
		fprintf(stderr,
			"tracer cost: --by is run, pipeline, step, tool, user or costcenter\n");
		return 2;
	}
	if (centers_path) {
		int line = ini_parse(centers_path, center_line, &t);
		if (line != 0) {
			fprintf(stderr, "tracer cost: %s: %s\n", centers_path,
				line < 0 ? "cannot read" : "bad line");
			if (line > 0)
				fprintf(stderr,
					"tracer cost: %s:%d: expected NAME = COST_CENTER in "
					"[users], [groups] or [cgroups]\n",
					centers_path, line);
			free(t.centers);
			return 1;
		}
	}
	sqlite3 *db = cli_open(&q);
	if (!db) {
		free(t.centers);
		return 1;
	}
	int64_t from, to, run = 0;
	if (since) {
		int64_t d = parse_duration(since);
		if (!d) {
			fprintf(stderr, "tracer cost: --since is like 90m, 24h, 7d\n");
			goto fail;
		}
		to = (int64_t)now_realtime_ns();
		from = to - d;
	} else {
		if (!(run = cli_run(&q, db)))
			goto fail;
		json_t *r =
		    cli_rows_json(db,
				  "SELECT start_ns, coalesce(end_ns, (SELECT max(ts_ns) FROM "
				  "host_samples)) AS end_ns FROM runs WHERE id = ?1",
				  run);
		from = json_integer_value(json_object_get(json_array_get(r, 0), "start_ns"));
		to = json_integer_value(json_object_get(json_array_get(r, 0), "end_ns"));
		json_decref(r);
		if (to <= from)
			to = from + 1;
	}
	if (host_price_resolve("cost", &po, &table, &hp) != 0)
		goto fail;
	usage_capacity(db, &cap);
	if (cap.cpus <= 0 || cap.memory_gib <= 0) {
		fprintf(stderr,
			"tracer cost: no host samples in %s: the host's CPUs and memory are "
			"unknown (the aggregator records them every second)\n",
			q.db_path);
		goto fail;
	}
	/* Whole run's processes, or every process of the window. */
	if (usage_scan(db, from, to, 0, add, &t) != 0) {
		fprintf(stderr, "tracer cost: %s: %s\n", q.db_path, sqlite3_errmsg(db));
		goto fail;
	}
	double seconds = (double)(to - from) / 1e9;
	double total = hp.usd_per_hour * seconds / 3600.0;
	double cpu_cap = cap.cpus * seconds, mem_cap = cap.memory_gib * seconds;
	qsort(t.b, t.n, sizeof(*t.b), by_cost);
	json_t *rows = json_array();
	double used = 0;
	for (size_t i = 0; i < t.n; i++) {
		double c =
		    total * (w * t.b[i].cpu_s / cpu_cap + (1 - w) * t.b[i].mem_gib_s / mem_cap);
		used += c;
		json_array_append_new(
		    rows, json_pack("{s:s, s:i, s:f, s:f, s:f, s:f}", "key", t.b[i].key,
				    "processes", (int)t.b[i].processes, "cpu_seconds", t.b[i].cpu_s,
				    "memory_gib_hours", t.b[i].mem_gib_s / 3600.0, "usd", c,
				    "share", total > 0 ? c / total : 0));
	}
	double idle = total - used;
	if (q.json) {
		json_t *doc = json_pack(
		    "{s:s, s:I, s:I, s:f, s:s, s:f, s:i, s:f, s:f, s:O, s:f, s:f}", "by", t.by,
		    "from_ns", (json_int_t)from, "to_ns", (json_int_t)to, "usd_per_hour",
		    hp.usd_per_hour, "price_source", hp.source, "cpu_weight", w, "cpus", cap.cpus,
		    "memory_gib", cap.memory_gib, "total_usd", total, "breakdown", rows, "idle_usd",
		    idle, "work_usd", used);
		if (run)
			json_object_set_new(doc, "run", json_integer(run));
		cli_print_json(doc);
		json_decref(doc);
	} else {
		char a[40], b[40], dur[32];
		format_time(from, a, sizeof(a));
		format_time(to, b, sizeof(b));
		format_duration(to - from, dur, sizeof(dur));
		printf("Host cost %s to %s (%s): $%.4f\n", a, b + 11, dur, total);
		printf("  price: %s\n", hp.source);
		printf("  split: %.0f%% by CPU (%d CPUs), %.0f%% by memory (%.1f GiB)\n", 100 * w,
		       cap.cpus, 100 * (1 - w), cap.memory_gib);
		printf("\n%-40s %9s %12s %12s %10s %6s\n", t.by[0] == 'c' ? "COST CENTER" : "WHO",
		       "PROCESSES", "CPU", "MEM GiB-h", "USD", "SHARE");
		for (size_t i = 0; i < json_array_size(rows); i++) {
			json_t *r = json_array_get(rows, i);
			char cpu[32];
			format_duration(
			    (int64_t)(json_real_value(json_object_get(r, "cpu_seconds")) * 1e9),
			    cpu, sizeof(cpu));
			printf("%-40.40s %9lld %12s %12.4f %10.4f %5.1f%%\n",
			       json_string_value(json_object_get(r, "key")),
			       (long long)json_integer_value(json_object_get(r, "processes")), cpu,
			       json_real_value(json_object_get(r, "memory_gib_hours")),
			       json_real_value(json_object_get(r, "usd")),
			       100 * json_real_value(json_object_get(r, "share")));
		}
		printf("%-40s %9s %12s %12s %10.4f %5.1f%%\n", "(idle capacity)", "", "", "", idle,
		       total > 0 ? 100 * idle / total : 0);
		printf("%-40s %9s %12s %12s %10.4f %5.1f%%\n", "total", "", "", "", total, 100.0);
	}
	json_decref(rows);
	prices_free(&table);
	free(t.b);
	free(t.centers);
	sqlite3_close(db);
	return 0;
fail:
	prices_free(&table);
	free(t.b);
	free(t.centers);
	sqlite3_close(db);
	return 1;
}
