/* tracer status's text, from its JSON document (verbs/cmd_status.c builds it). */
#include "cli/render/status_text.h"

#include <stdio.h>
#include <string.h>

#include "cli/render/format.h"
#include "cli/render/jsonfield.h"
#include "common/timeutil.h"

/* What the aggregator did with the events of well-formed frames (schema v8). */
static void print_event_outcomes(json_t *agg)
{
	if (!json_object_get(agg, "events_ingested"))
		return; /* a database older than v8 */
	printf("  of %lld events: dropped %lld samples, %lld file opens (process unknown or "
	       "ended), %lld execs/exits after the exit, %lld for want of memory\n",
	       (long long)jint(agg, "events_ingested"), (long long)jint(agg, "samples_unmatched"),
	       (long long)jint(agg, "files_unmatched"), (long long)jint(agg, "late_events"),
	       (long long)jint(agg, "events_skipped"));
	printf("  kept in part: %lld exits never seen starting, %lld unknown parents, %lld "
	       "processes without an exit event\n",
	       (long long)jint(agg, "unmatched_exits"), (long long)jint(agg, "missing_parents"),
	       (long long)jint(agg, "lost_processes"));
	if (jint(agg, "clock_steps"))
		printf("  wall-clock steps: %lld, the last by %+.3f s\n",
		       (long long)jint(agg, "clock_steps"),
		       (double)jint(agg, "last_clock_step_ns") / 1e9);
}

/* The daemons' database: no shipper configured means no outbox (docs/shipping.md). */
static void print_shipper_configured(json_t *doc, json_t *ship)
{
	json_t *configured = json_object_get(doc, "shipper_configured");

	if (json_is_false(configured) && !ship)
		printf("\nshipping: none configured (no %s): the outbox is off, nothing is "
		       "queued (docs/shipping.md)\n",
		       jstr(doc, "shipper_config"));
	else if (json_is_false(configured))
		printf("  no shipper is configured (no %s): nothing will deliver these; the "
		       "outbox is off until one is\n",
		       jstr(doc, "shipper_config"));
	else if (json_is_true(configured) && !ship)
		printf("\nshipping: configured (%s), nothing queued or delivered yet\n",
		       jstr(doc, "shipper_config"));
}

/* The verdict, the database and whether the daemons listen. */
static void print_header(json_t *doc)
{
	char size[32];

	format_bytes((uint64_t)jint(doc, "db_bytes"), size, sizeof(size));
	if (json_is_true(json_object_get(doc, "healthy")))
		printf("tracer status: healthy\n");
	else
		printf("tracer status: DEGRADED: %s\n", jstr(doc, "problem"));
	printf("  database   %s (schema v%lld, %s", jstr(doc, "db"),
	       (long long)jint(doc, "schema_version"), size);
	if (json_is_integer(json_object_get(doc, "db_free_bytes"))) {
		char free_text[32];
		format_bytes((uint64_t)jint(doc, "db_free_bytes"), free_text, sizeof(free_text));
		printf(", %s free", free_text);
	}
	printf(", check: %s)\n", jstr(doc, "db_check"));
	printf("  daemons    %s on %s%s%s\n",
	       json_is_true(json_object_get(doc, "listening")) ? "listening" : "not listening",
	       jstr(doc, "socket"),
	       !strcmp(jstr(doc, "listening_known_by"), "database")
		   ? " (as the database says: a collector wrote it in the last minute; the "
		     "socket is not open to this user)"
		   : "",
	       json_is_true(json_object_get(doc, "daemons_database"))
		   ? ""
		   : " (not checked: the daemons there do not write this database; --socket "
		     "names the ones that do)");
}

/* One collector stream: when last heard, what it lost, the gap before it, its probes. */
static void print_collector(json_t *s)
{
	char when[64], ago[32];

	format_time(jint(s, "last_seen_ns"), when, sizeof(when));
	format_duration((int64_t)now_realtime_ns() - jint(s, "last_seen_ns"), ago, sizeof(ago));
	printf("\ncollector pid %lld on %s%s\n", (long long)jint(s, "collector_pid"),
	       jstr(s, "hostname"), jint(s, "final") ? " (stopped)" : "");
	printf("  last heard %s (%s ago); %lld frames, %lld events, %lld samples taken\n", when,
	       ago, (long long)jint(s, "frames_received"), (long long)jint(s, "events_received"),
	       (long long)jint(s, "samples_taken"));
	printf("  lost: %lld in the kernel, %lld in the collector, %lld frames never "
	       "arrived\n",
	       (long long)jint(s, "kernel_drops"), (long long)jint(s, "collector_drops"),
	       (long long)jint(s, "seq_gaps"));
	if (json_is_integer(json_object_get(s, "blind_ns")) && !jint(s, "blind_processes"))
		printf("  started %.1f s after the previous collector stopped; its snapshot "
		       "found no process of this database's that began meanwhile (any that "
		       "began and ended then are unknown)\n",
		       (double)jint(s, "blind_ns") / 1e9);
	else if (json_is_integer(json_object_get(s, "blind_ns")))
		printf("  started %.1f s after the previous collector stopped: %lld processes "
		       "began unwatched (its snapshot found them; any that also ended are "
		       "unknown)\n",
		       (double)jint(s, "blind_ns") / 1e9, (long long)jint(s, "blind_processes"));
	json_t *probes = json_object_get(s, "probes");
	size_t k;
	json_t *p;
	if (json_array_size(probes))
		printf("  probes:\n");
	json_array_foreach(probes, k, p)
	    printf("    %-10s %-9s %s\n", jstr(p, "name"), jstr(p, "state"), jstr(p, "detail"));
}

/* Events lost by hop and type, and what the aggregator refused or dropped. */
static void print_losses_and_aggregator(json_t *doc)
{
	json_t *losses = json_object_get(doc, "losses");
	json_t *agg = json_object_get(doc, "aggregator");
	size_t i;
	json_t *s;

	if (json_array_size(losses)) {
		printf("\nevents lost, by hop and type:\n");
		json_array_foreach(losses, i, s)
		    printf("  %-10s %-12s %lld\n", jstr(s, "hop"), jstr(s, "event_type"),
			   (long long)jint(s, "count"));
	}
	if (!agg)
		return;
	printf("\naggregator: %lld frames, %lld rejected as malformed, %lld connections "
	       "refused\n",
	       (long long)jint(agg, "frames_received"), (long long)jint(agg, "bad_frames"),
	       (long long)jint(agg, "refused_peers"));
	if (jstr(agg, "last_bad_frame")[0])
		printf("  last rejected frame: %s\n", jstr(agg, "last_bad_frame"));
	print_event_outcomes(agg);
}

/* The outbox and the shipper: waiting, delivered, dropped, the last error. */
static void print_shipping(json_t *doc)
{
	json_t *ship = json_object_get(doc, "shipping");
	char size[32];

	if (ship) {
		format_bytes((uint64_t)jint(ship, "pending_bytes"), size, sizeof(size));
		printf("\nshipping%s%s: %lld records (%s) waiting",
		       jstr(ship, "sink")[0] ? " to " : "", jstr(ship, "sink"),
		       (long long)jint(ship, "pending_records"), size);
		if (json_is_number(json_object_get(ship, "oldest_age_s")))
			printf(", oldest %.0f s old",
			       json_number_value(json_object_get(ship, "oldest_age_s")));
		printf("; %lld delivered, %lld dropped (outbox full), %lld in dead letters\n",
		       (long long)jint(ship, "delivered_records"),
		       (long long)jint(ship, "dropped_records"),
		       (long long)jint(ship, "dead_letter_records"));
		if (jstr(ship, "last_error")[0])
			printf("  last error: %s\n", jstr(ship, "last_error"));
	}
	print_shipper_configured(doc, ship);
}

void status_print_text(json_t *doc)
{
	json_t *streams = json_object_get(doc, "collectors");
	size_t i;
	json_t *s;

	print_header(doc);
	json_array_foreach(streams, i, s) print_collector(s);
	if (json_array_size(streams) == 0)
		printf("\nno collector has delivered anything to this database yet\n");
	print_losses_and_aggregator(doc);
	print_shipping(doc);
}
