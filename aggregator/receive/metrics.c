#include "aggregator/receive/metrics.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/version.h"

struct metric {
	const char *name, *type, *help;
	/* Rows of label columns, then the value last; the column names are the labels. */
	const char *sql;
	int shipper; /* run against the shipper's state database */
};

/*
 * Labels are what stays across restarts: the host, a hop, an event type. A
 * collector's stream id is new at each start, so streams are summed by host
 * (a counter that falls when retention drops an old stream reads as a reset);
 * what changes (a stream stopped) is a value, never a label.
 */
static const struct metric metrics[] = {
    {"tracer_collector_events_total", "counter", "Events the collectors of a host delivered.",
     "SELECT hostname AS host, sum(events_received) FROM collector_stats GROUP BY hostname", 0},
    {"tracer_collector_frames_total", "counter", "Frames the collectors of a host delivered.",
     "SELECT hostname AS host, sum(frames_received) FROM collector_stats GROUP BY hostname", 0},
    {"tracer_collector_lost_events_total", "counter",
     "Events lost before the aggregator, by hop: kernel (ring buffer full), collector "
     "(queue full), transport (frames that never arrived, counted in frames).",
     "SELECT hostname AS host, 'kernel' AS hop, sum(kernel_drops) FROM collector_stats "
     "GROUP BY hostname UNION ALL "
     "SELECT hostname, 'collector', sum(collector_drops) FROM collector_stats GROUP BY hostname "
     "UNION ALL SELECT hostname, 'transport', sum(seq_gaps) FROM collector_stats GROUP BY hostname",
     0},
    {"tracer_collector_last_seen_timestamp_seconds", "gauge",
     "When the aggregator last heard from a collector of the host (Unix time).",
     "SELECT hostname AS host, max(last_seen_ns) / 1e9 FROM collector_stats GROUP BY hostname", 0},
    {"tracer_collector_running", "gauge",
     "1 while the host's newest collector has not said it stopped; 0 once it did.",
     "SELECT hostname AS host, final = 0 FROM collector_stats c WHERE last_seen_ns = "
     "(SELECT max(last_seen_ns) FROM collector_stats WHERE hostname IS c.hostname) "
     "GROUP BY hostname",
     0},
    {"tracer_events_lost_total", "counter",
     "Lost events by hop and event type, every collector since the database began.",
     "SELECT hop, event_type AS type, sum(count) FROM event_loss GROUP BY hop, event_type", 0},
    {"tracer_aggregator_frames_total", "counter", "Frames the aggregator received.",
     "SELECT frames_received FROM aggregator_stats ORDER BY id DESC LIMIT 1", 0},
    {"tracer_aggregator_bad_frames_total", "counter", "Frames rejected as malformed.",
     "SELECT bad_frames FROM aggregator_stats ORDER BY id DESC LIMIT 1", 0},
    {"tracer_aggregator_refused_peers_total", "counter", "Connections refused.",
     "SELECT refused_peers FROM aggregator_stats ORDER BY id DESC LIMIT 1", 0},
    {"tracer_aggregator_events_total", "counter", "Events of well-formed frames.",
     "SELECT events_ingested FROM aggregator_stats ORDER BY id DESC LIMIT 1", 0},
    {"tracer_aggregator_events_skipped_total", "counter",
     "Events the aggregator had no memory to apply (lost).",
     "SELECT events_skipped FROM aggregator_stats ORDER BY id DESC LIMIT 1", 0},
    {"tracer_processes_recorded_total", "counter",
     "Process images written to the database (by id: ids are never reused, so those "
     "retention deleted since still count).",
     "SELECT coalesce(max(id), 0) FROM processes", 0},
    {"tracer_runs_running", "gauge",
     "Runs not ended (a run whose collector stopped before its end stays until it ends or "
     "retention removes it).",
     "SELECT count(*) FROM runs WHERE end_ns IS NULL", 0},
    {"tracer_outbox_pending_records", "gauge", "Records waiting for the shipper.",
     "SELECT count(*) FROM outbox WHERE id > ?1", 0},
    {"tracer_outbox_pending_bytes", "gauge", "Bytes of records waiting for the shipper.",
     "SELECT total(length(payload)) FROM outbox WHERE id > ?1", 0},
    {"tracer_outbox_dropped_records_total", "counter", "Records dropped: the outbox was full.",
     "SELECT coalesce(sum(records), 0) FROM outbox_drops", 0},
    {"tracer_shipper_delivered_records_total", "counter", "Records the sink acknowledged.",
     "SELECT CAST(value AS INTEGER) FROM shipper_state WHERE key = 'delivered_records'", 1},
    {"tracer_shipper_delivered_through_id", "gauge",
     "The last outbox id delivered; queued ids above it are pending.",
     "SELECT CAST(value AS INTEGER) FROM shipper_state WHERE key = 'delivered_through'", 1},
    {"tracer_shipper_last_delivery_timestamp_seconds", "gauge",
     "When a batch was last acknowledged (Unix time).",
     "SELECT CAST(value AS INTEGER) / 1e9 FROM shipper_state WHERE key = 'last_success_ns'", 1},
    {"tracer_shipper_dead_letter_records", "gauge", "Records the sink refused, set aside.",
     "SELECT coalesce(sum(records), 0) FROM dead_letters", 1},
};

/* A label value with \, " and newline escaped as the text format requires. */
static void put_label_value(FILE *out, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', out);
		if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
}

/* ?1 in a query: the last outbox id the shipper delivered. */
static void put_rows(sqlite3 *db, const struct metric *m, int64_t delivered_through, FILE *out)
{
	sqlite3_stmt *st;

	if (!db || sqlite3_prepare_v2(db, m->sql, -1, &st, NULL) != SQLITE_OK)
		return; /* an older database, or no shipper state: the metric is absent */
	if (sqlite3_bind_parameter_count(st))
		sqlite3_bind_int64(st, 1, delivered_through);
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help, m->name, m->type);
	int n = sqlite3_column_count(st);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (sqlite3_column_type(st, n - 1) == SQLITE_NULL)
			continue;
		fputs(m->name, out);
		for (int i = 0; i < n - 1; i++) {
			const char *v = (const char *)sqlite3_column_text(st, i);
			fprintf(out, "%s%s=\"", i ? "," : "{", sqlite3_column_name(st, i));
			put_label_value(out, v ? v : "");
			fputc('"', out);
		}
		fprintf(out, "%s %.17g\n", n > 1 ? "}" : "", sqlite3_column_double(st, n - 1));
	}
	sqlite3_finalize(st);
}

/* The database's size in pages: its file's once the WAL is checkpointed (tracer status
 * shows the file, which trails it while the aggregator runs). */
static void put_database_size(sqlite3 *db, FILE *out)
{
	sqlite3_stmt *st;

	if (!db || sqlite3_prepare_v2(db,
				      "SELECT page_count * page_size FROM pragma_page_count(), "
				      "pragma_page_size()",
				      -1, &st, NULL) != SQLITE_OK)
		return;
	if (sqlite3_step(st) == SQLITE_ROW)
		fprintf(out,
			"# HELP tracer_database_size_bytes Size of the database (its pages).\n"
			"# TYPE tracer_database_size_bytes gauge\n"
			"tracer_database_size_bytes %lld\n",
			(long long)sqlite3_column_int64(st, 0));
	sqlite3_finalize(st);
}

int metrics_render(sqlite3 *db, const char *shipper_state, int64_t now_epoch_ns, FILE *out)
{
	sqlite3 *ship = NULL;

	if (shipper_state && access(shipper_state, R_OK) == 0 &&
	    sqlite3_open_v2(shipper_state, &ship, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(ship);
		ship = NULL;
	}
	int64_t delivered_through = 0;
	sqlite3_stmt *st;
	if (ship) {
		sqlite3_busy_timeout(ship, 1000);
		if (sqlite3_prepare_v2(
			ship,
			"SELECT CAST(value AS INTEGER) FROM shipper_state WHERE key = "
			"'delivered_through'",
			-1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			delivered_through = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	fprintf(out,
		"# HELP tracer_build_info The aggregator's version; always 1.\n"
		"# TYPE tracer_build_info gauge\n"
		"tracer_build_info{version=\"%s\"} 1\n"
		"# HELP tracer_metrics_timestamp_seconds When the aggregator wrote this file.\n"
		"# TYPE tracer_metrics_timestamp_seconds gauge\n"
		"tracer_metrics_timestamp_seconds %.3f\n",
		TRACER_VERSION, (double)now_epoch_ns / 1e9);
	put_database_size(db, out);
	for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
		put_rows(metrics[i].shipper ? ship : db, &metrics[i], delivered_through, out);
	sqlite3_close(ship);
	return ferror(out) ? -1 : 0;
}

int metrics_write(sqlite3 *db, const char *shipper_state, const char *path, int64_t now_epoch_ns)
{
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "we");
	if (!f)
		return -1;
	/* Counters for a scraper running as its own user (node_exporter's prometheus): the
	 * file is world-readable whatever the daemon's umask (0027 in its unit). */
	if (fchmod(fileno(f), 0644) != 0) {
		int saved = errno;
		fclose(f);
		unlink(tmp);
		errno = saved;
		return -1;
	}
	int rc = metrics_render(db, shipper_state, now_epoch_ns, f);
	if (fclose(f) != 0 || rc != 0 || rename(tmp, path) != 0) {
		int saved = errno;
		unlink(tmp);
		errno = saved;
		return -1;
	}
	return 0;
}
