/*
 * tracer cost: what the host cost over a period and who used it. The host's
 * price over the period is split into a CPU half and a memory half (weights
 * configurable); each process gets the share of each half it used (CPU
 * seconds over CPU capacity, GiB-seconds over memory capacity); what nobody
 * used is idle. Parts add up exactly to the host's cost (docs/cost.md).
 */
#include <ini.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cost/costfleet.h"
#include "cli/cost/costrun.h"
#include "cli/cost/hostprice.h"
#include "cli/cost/usage.h"
#include "cli/db/clidb.h"
#include "cli/db/fleet.h"
#include "cli/render/clierror.h"
#include "cli/render/export.h"
#include "cli/render/format.h"
#include "cli/render/jsonfield.h"
#include "cli/verbs/commands.h"
#include "common/timeutil.h"

static const char usage_text[] =
    "usage: tracer cost [--db PATH] [--json] [RUN]\n"
    "                   [--since DURATION [--whole-window]] [--by "
    "run|pipeline|step|tool|user|costcenter]\n" PRICE_USAGE(
	"                   ") "                   [--cpu-weight W] [--cost-centers FILE] "
			       "[--format tsv|csv|json]\n"
			       "  a run's cost by step (default: the latest run), or --since 24h "
			       "by run;\n  with tracer --fleet URL, --since prices every host of"
			       " the fleet store as its own,\n  summed, with a row per host\n";

static int center_line(void *user, const char *section, const char *name, const char *value)
{
	struct cost_query *cq = user;

	return cost_centers_add(&cq->centers, section, name, value) ? 1 : 0;
}

/* --format's columns (docs/export.md): add, never rename. */
static const char *const cost_columns[] = {
    "by", "key", "processes", "cpu_seconds", "memory_gib_hours", "usd", "share", "cpu_ns", NULL,
};

/* One row per part and one for the idle capacity: they add up to the host. */
static void print_rows(const struct cost_report *r)
{
	json_t *rows = json_array();

	for (size_t i = 0; i < r->tally->n; i++) {
		const struct cost_bucket *b = &r->tally->items[i];
		json_array_append_new(
		    rows,
		    json_pack("{s:s, s:s, s:i, s:f, s:I, s:f, s:o, s:f}", "by", r->by, "key",
			      b->key, "processes", (int)b->processes, "cpu_seconds", b->cpu_s,
			      "cpu_ns", cost_cpu_ns(b->cpu_s), "memory_gib_hours",
			      b->mem_gib_s / 3600.0, "usd",
			      r->priced ? json_real(b->usd) : json_null(), "share", b->share));
	}
	double total = r->totals.total_usd;
	json_array_append_new(rows,
			      json_pack("{s:s, s:s, s:i, s:f, s:i, s:f, s:o, s:f}", "by", r->by,
					"key", "(idle capacity)", "processes", 0, "cpu_seconds",
					0.0, "cpu_ns", 0, "memory_gib_hours", 0.0, "usd",
					r->priced ? json_real(r->totals.idle_usd) : json_null(),
					"share", total > 0 ? r->totals.idle_usd / total : 0.0));
	export_rows(stdout, r->format, cost_columns, rows);
	json_decref(rows);
}

/* How much of the window was seen, and so billed (unless --whole-window). */
static void print_observed(const struct cost_report *r)
{
	char seen[32], window[32];
	int64_t span = r->to_ns - r->from_ns;

	if (span <= 0 || r->observed_ns < 0 || r->observed_ns >= span)
		return;
	format_duration(r->observed_ns, seen, sizeof(seen));
	format_duration(span, window, sizeof(window));
	if (!r->since_window)
		return; /* a run's span: its own daemons start inside it */
	if (r->whole_window)
		printf("  observed: %s of %s; billed: all of it (--whole-window), the unseen time "
		       "as idle capacity\n",
		       seen, window);
	else
		printf("  observed: %s of %s, and only that is billed: no collector watched the "
		       "rest (--whole-window bills it as idle capacity)\n",
		       seen, window);
}

static void print_text(const struct cost_report *r)
{
	char a[40], b[40], dur[32];
	double total = r->totals.total_usd, idle = r->totals.idle_usd;

	format_time(r->from_ns, a, sizeof(a));
	format_time(r->to_ns, b, sizeof(b));
	format_duration(r->to_ns - r->from_ns, dur, sizeof(dur));
	char usd[32], gib[32];
	format_amount(total, usd, sizeof(usd));
	/* The end's date only when it is another day than the start's. */
	if (r->priced) {
		printf("Host cost %s to %s (%s): $%s\n", a, strncmp(a, b, 10) ? b : b + 11, dur,
		       usd);
		print_observed(r);
		printf("  price: %s\n", r->price.source);
	} else {
		printf("Host use %s to %s (%s): shares of the host, no price known\n", a,
		       strncmp(a, b, 10) ? b : b + 11, dur);
		print_observed(r);
		printf("  price: none (set rate in /etc/tracer/cost.conf or pass --rate)\n");
	}
	printf("  split: %.0f%% by CPU (%d CPUs), %.0f%% by memory (%.1f GiB)%s\n",
	       100 * r->cpu_weight, r->capacity.cpus, 100 * (1 - r->cpu_weight),
	       r->capacity.memory_gib,
	       r->capacity.this_host ? "\n  (this host's: no host samples recorded)" : "");
	/* On a terminal the name column takes what the numbers leave (12 to 40 columns);
	 * piped, it is as wide as the longest name, so no name is cut. */
	int columns = format_terminal_columns(STDOUT_FILENO);
	int name_w = columns > 0 ? columns - 54 : 40;
	if (name_w < 12)
		name_w = 12;
	else if (name_w > 40)
		name_w = 40;
	for (size_t i = 0; columns <= 0 && i < r->tally->n; i++) {
		int chars = 0;
		for (const char *c = r->tally->items[i].key; *c; c++)
			chars += (*c & 0xC0) != 0x80;
		if (chars > name_w)
			name_w = chars;
	}
	char who[256];
	format_column(r->by[0] == 'c' ? "COST CENTER" : "WHO", name_w, who, sizeof(who));
	printf("\n%s %9s %12s %12s %10s %6s\n", who, "PROCESSES", "CPU", "MEM GiB-h", "USD",
	       "SHARE");
	for (size_t i = 0; i < r->tally->n; i++) {
		const struct cost_bucket *k = &r->tally->items[i];
		char cpu[32];
		format_duration((int64_t)(k->cpu_s * 1e9), cpu, sizeof(cpu));
		format_amount(k->mem_gib_s / 3600.0, gib, sizeof(gib));
		format_amount(k->usd, usd, sizeof(usd));
		if (!r->priced)
			snprintf(usd, sizeof(usd), "-");
		format_column(k->key, name_w, who, sizeof(who));
		printf("%s %9u %12s %12s %10s %5.1f%%\n", who, k->processes, cpu, gib, usd,
		       100 * k->share);
	}
	format_amount(idle, usd, sizeof(usd));
	if (!r->priced)
		snprintf(usd, sizeof(usd), "-");
	format_column("(idle capacity)", name_w, who, sizeof(who));
	printf("%s %9s %12s %12s %10s %5.1f%%\n", who, "", "", "", usd,
	       total > 0 ? 100 * idle / total : 0);
	format_amount(total, usd, sizeof(usd));
	if (!r->priced)
		snprintf(usd, sizeof(usd), "-");
	format_column("total", name_w, who, sizeof(who));
	printf("%s %9s %12s %12s %10s %5.1f%%\n", who, "", "", "", usd, 100.0);
}

static bool known_by(const char *by)
{
	static const char *const bys[] = {"run", "pipeline", "step", "tool", "user", "costcenter"};

	for (size_t i = 0; i < sizeof(bys) / sizeof(bys[0]); i++)
		if (!strcmp(by, bys[i]))
			return true;
	return false;
}

static int load_centers(const char *path, struct cost_query *cq)
{
	int line = ini_parse(path, center_line, cq);

	if (line == 0)
		return 0;
	cli_error("cost", "%s: %s\n", path, line < 0 ? "cannot read" : "bad line");
	if (line > 0)
		cli_error("cost",
			  "%s:%d: expected NAME = COST_CENTER in [users], [groups] or "
			  "[cgroups]\n",
			  path, line);
	return -1;
}

/* The window: --since back from now, or the run's span. 0, or -1 (said why). */
static int cost_window(sqlite3 *db, struct cli_query *q, const char *since, struct cost_report *r)
{
	if (since) {
		int64_t d = format_parse_duration(since);
		if (!d) {
			cli_error("cost", "--since is like 90m, 24h, 7d\n");
			return -1;
		}
		r->to_ns = (int64_t)now_realtime_ns();
		r->from_ns = r->to_ns - d;
		r->since_window = true;
		return 0;
	}
	int64_t run = cli_run(q, db);
	if (!run)
		return -1;
	cost_run_window(db, run, r);
	return 0;
}

/* Prices the window and prints it. 0, or 1 (said why). */
static int cost_of_window(sqlite3 *db, struct cli_query *q, struct price_options *po,
			  struct cost_query *cq, struct cost_report *r)
{
	int rc = cost_compute(db, "cost", po, cq, r);

	if (rc == COST_NO_CAPACITY)
		cli_error("cost",
			  "no host samples in %s: the host's CPUs and memory are "
			  "unknown (the aggregator records them every second)\n",
			  q->db_path);
	else if (rc == -1)
		cli_error("cost", "%s: %s\n", q->db_path, sqlite3_errmsg(db));
	if (rc != 0)
		return 1;
	if (r->format != EXPORT_NONE) {
		print_rows(r);
	} else if (q->json) {
		json_t *doc = cost_json(r);
		cli_print_json(doc);
		json_decref(doc);
	} else {
		print_text(r);
	}
	return 0;
}

/* A fleet amount: its dollars, or "-" unpriced. */
static const char *fleet_usd(json_t *o, const char *key, char *out, size_t size)
{
	if (!json_is_number(json_object_get(o, key)))
		return "-";
	format_amount(jnum(o, key), out, size);
	return out;
}

/* The fleet's parts, then each host's total, from cost_fleet_document. */
static void print_fleet_text(json_t *d, const char *since)
{
	char usd[32], gib[32], cpu[32], seen[32], who[256];
	json_t *p, *h;
	size_t i;

	printf("Fleet cost over the last %s: $%s, %zu host%s\n", since,
	       fleet_usd(d, "total_usd", usd, sizeof(usd)),
	       json_array_size(json_object_get(d, "hosts")),
	       json_array_size(json_object_get(d, "hosts")) == 1 ? "" : "s");
	printf("  price: %s, every host\n",
	       jstr(d, "price_source")[0] ? jstr(d, "price_source") : "none (pass --rate)");
	printf("  split: %.0f%% by CPU, %.0f%% by memory, of each host's own CPUs and memory\n",
	       100 * jnum(d, "cpu_weight"), 100 * (1 - jnum(d, "cpu_weight")));
	printf("\n%-40s %9s %12s %12s %10s %6s\n", "WHO", "PROCESSES", "CPU", "MEM GiB-h", "USD",
	       "SHARE");
	json_array_foreach(json_object_get(d, "breakdown"), i, p)
	{
		format_duration(jint(p, "cpu_ns"), cpu, sizeof(cpu));
		format_amount(jnum(p, "memory_gib_hours"), gib, sizeof(gib));
		format_column(jstr(p, "key"), 40, who, sizeof(who));
		printf("%s %9lld %12s %12s %10s %5.1f%%\n", who, (long long)jint(p, "processes"),
		       cpu, gib, fleet_usd(p, "usd", usd, sizeof(usd)), 100 * jnum(p, "share"));
	}
	format_column("(idle capacity)", 40, who, sizeof(who));
	printf("%s %9s %12s %12s %10s %5.1f%%\n", who, "", "", "",
	       fleet_usd(d, "idle_usd", usd, sizeof(usd)), 100 * jnum(d, "idle_share"));
	format_column("total", 40, who, sizeof(who));
	printf("%s %9s %12s %12s %10s\n", who, "", "", "",
	       fleet_usd(d, "total_usd", usd, sizeof(usd)));
	printf("\n%-34s %5s %9s %12s %10s %10s\n", "HOST", "CPUS", "MEM GiB", "OBSERVED", "USD",
	       "IDLE USD");
	json_array_foreach(json_object_get(d, "hosts"), i, h)
	{
		json_t *c = json_object_get(h, "cost");
		char idle[32];
		format_duration(jint(c, "observed_ns"), seen, sizeof(seen));
		printf("%-34s %5lld %9.1f %12s %10s %10s\n", jstr(h, "host"),
		       (long long)jint(c, "cpus"), jnum(c, "memory_gib"), seen,
		       fleet_usd(c, "total_usd", usd, sizeof(usd)),
		       fleet_usd(c, "idle_usd", idle, sizeof(idle)));
	}
	json_array_foreach(json_object_get(d, "skipped"), i, h)
	    printf("%-34s not priced: %s\n", jstr(h, "host"), jstr(h, "reason"));
}

/* tracer --fleet cost --since D: every host priced as its own cost --since, summed. */
static int fleet_since(struct cli_query *q, const char *since, const struct price_options *po,
		       struct cost_query *cq, struct cost_report *r)
{
	int64_t d = format_parse_duration(since);

	if (!d) {
		cli_error("cost", "--since is like 90m, 24h, 7d\n");
		return 2;
	}
	if (r->format != EXPORT_NONE) {
		cli_error("cost",
			  "--format is not available over the fleet: --json has each host\n");
		return 2;
	}
	r->to_ns = (int64_t)now_realtime_ns();
	r->from_ns = r->to_ns - d;
	r->since_window = true;
	json_t *doc = cost_fleet_document(po, cq, r);
	if (!doc)
		return 1;
	if (q->json)
		cli_print_json(doc);
	else
		print_fleet_text(doc, since);
	json_decref(doc);
	return 0;
}

int cmd_cost(int argc, char **argv)
{
	struct cli_query q = {.verb = "cost"};
	struct price_options po = {0};
	const char *since = NULL, *by = NULL, *weight_arg = NULL, *centers_path = NULL;
	const char *format_arg = NULL, *whole = NULL;
	const struct cli_extra_option extra[] = {
	    {"since", true, &since},
	    {"whole-window", false, &whole},
	    {"by", true, &by},
	    PRICE_EXTRA_OPTIONS(po),
	    {"cpu-weight", true, &weight_arg},
	    {"cost-centers", true, &centers_path},
	    {"format", true, &format_arg},
	    {NULL, false, NULL},
	};
	struct cost_query cq = {0};
	struct cost_report r = {0};
	bool done;
	int rc = cli_parse(argc, argv, &q, usage_text, extra, &done);

	if (done)
		return rc;
	r.cpu_weight = 0.5;
	r.whole_window = whole != NULL;
	if (cli_number("cost", "cpu-weight", weight_arg, 0, 1, &r.cpu_weight) != 0 ||
	    export_format_parse("cost", format_arg, &r.format) != 0)
		return 2;
	cq.by = r.by = by ? by : (since ? "run" : "step");
	if (!known_by(cq.by)) {
		cli_error("cost", "--by is run, pipeline, step, tool, user or costcenter\n");
		return 2;
	}
	rc = 1;
	if (centers_path && load_centers(centers_path, &cq) != 0)
		goto out;
	if (fleet_active())
		po.no_detect = "fleet"; /* this machine's cloud is not the run's host's */
	if (fleet_active() && since) {
		rc = fleet_since(&q, since, &po, &cq, &r);
		goto out;
	}
	sqlite3 *db = cli_open(&q);
	if (!db)
		goto out;
	r.db = db;
	if (cost_window(db, &q, since, &r) == 0)
		rc = cost_of_window(db, &q, &po, &cq, &r);
	sqlite3_close(db);
out:
	cost_tally_free(&cq.tally);
	cost_centers_free(&cq.centers);
	return rc;
}
