/*
 * The Prometheus text file, rendered from a database the test fills itself:
 * each value is the one inserted (a host's streams summed), labels are escaped
 * as the text format says and never change with a restart, the file is 0644,
 * pending outbox records are those above the shipper's watermark, and the
 * file appears whole (renamed into place).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "aggregator/receive/metrics.h"
#include "aggregator/store/store.h"
#include "common/version.h"

static char db_path[64], state_path[64], prom_path[64];

static void sql(sqlite3 *db, const char *text)
{
	char *err = NULL;
	if (sqlite3_exec(db, text, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", text, err);
}

/* What metrics_write reads: three streams of two hosts, runs, processes, losses, the
 * aggregator's counters and the outbox in the store; the shipper's state beside it. */
static void fill_databases(struct store *s)
{
	sql(s->db,
	    "INSERT INTO collector_stats (stream_id, hostname, last_seen_ns, events_received, "
	    "frames_received, kernel_drops, collector_drops, seq_gaps, final) VALUES ('ab12', "
	    "'h\"o\\st\nx', 1800000000500000000, 1234, 56, 7, 8, 9, 0), ('cd34', "
	    "'h\"o\\st\nx', 1700000000000000000, 1000, 4, 1, 2, 3, 1), ('ef56', 'other', "
	    "1800000000000000000, 5, 1, 0, 0, 0, 1)");
	sql(s->db, "INSERT INTO runs (id, name, start_ns, end_ns) VALUES (1, 'a', 1, 2), (2, 'b', "
		   "3, NULL), (3, 'c', 4, NULL)");
	sql(s->db, "INSERT INTO processes (id, pid, proc_start_boot_ns, state) VALUES (7, 1, 1, "
		   "'exited'), (41, 2, 2, 'exited')");
	sql(s->db, "INSERT INTO event_loss (stream_id, hop, event_type, count) VALUES ('ab12', "
		   "'kernel', 'exec', 3), ('cd34', 'kernel', 'exec', 4)");
	sql(s->db,
	    "INSERT INTO aggregator_stats (started_ns, updated_ns, frames_received, "
	    "bad_frames, refused_peers, events_ingested, events_skipped) VALUES (1, 2, 60, 1, "
	    "2, 1300, 5)");
	sql(s->db,
	    "INSERT INTO outbox (kind, record_key, priority, created_ns, payload) VALUES "
	    "('runs', '1', 3, 1, 'aaaa'), ('runs', '2', 3, 1, 'bbbbbb'), ('runs', '3', 3, 1, "
	    "'cc')");
	sqlite3 *st;
	assert_int_equal(sqlite3_open(state_path, &st), SQLITE_OK);
	sql(st, "CREATE TABLE shipper_state (key TEXT PRIMARY KEY, value TEXT); INSERT INTO "
		"shipper_state VALUES ('delivered_through', '1'), ('delivered_records', '41'), "
		"('last_success_ns', '1800000001000000000'); CREATE TABLE dead_letters (records "
		"INTEGER); INSERT INTO dead_letters VALUES (2), (3)");
	sqlite3_close(st);
}

/* Every sample line: a name, optional {labels}, a space, a number. */
static void assert_every_sample_is_a_number(char *text)
{
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (line[0] == '#')
			continue;
		char *space = strrchr(line, ' ');
		assert_non_null(space);
		char *end;
		strtod(space + 1, &end);
		assert_true(*end == '\0' && end > space + 1);
	}
}

static void test_render(void **state)
{
	static struct store s;
	(void)state;
	snprintf(db_path, sizeof(db_path), "/tmp/tracer-metrics-%d.db", (int)getpid());
	snprintf(state_path, sizeof(state_path), "/tmp/tracer-metrics-%d.state", (int)getpid());
	snprintf(prom_path, sizeof(prom_path), "/tmp/tracer-metrics-%d.prom", (int)getpid());
	unlink(db_path);
	unlink(state_path);
	assert_int_equal(store_open(&s, db_path), 0);
	fill_databases(&s);

	mode_t old_mask = umask(0027); /* the unit's UMask= */
	assert_int_equal(metrics_write(s.db, state_path, prom_path, 1800000002000000000LL), 0);
	umask(old_mask);
	FILE *f = fopen(prom_path, "r");
	assert_non_null(f);
	char text[8192];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	static const char *const want[] = {
	    "tracer_build_info{version=\"" TRACER_VERSION "\"} 1\n",
	    "tracer_metrics_timestamp_seconds 1800000002.000\n",
	    /* A host's streams (a new one at each collector start) summed: no stream label. */
	    "tracer_collector_events_total{host=\"h\\\"o\\\\st\\nx\"} 2234\n",
	    "tracer_collector_events_total{host=\"other\"} 5\n",
	    "tracer_collector_frames_total{host=\"h\\\"o\\\\st\\nx\"} 60\n",
	    "tracer_collector_lost_events_total{host=\"h\\\"o\\\\st\\nx\",hop=\"kernel\"} 8\n",
	    "tracer_collector_lost_events_total{host=\"h\\\"o\\\\st\\nx\",hop=\"collector\"} 10\n",
	    "tracer_collector_lost_events_total{host=\"h\\\"o\\\\st\\nx\",hop=\"transport\"} 12\n",
	    ("tracer_collector_last_seen_timestamp_seconds{host=\"h\\\"o\\\\st\\nx\"} "
	     "1800000000.5\n"),
	    /* The newest stream of a host says whether it runs: a value, not a label. */
	    "tracer_collector_running{host=\"h\\\"o\\\\st\\nx\"} 1\n",
	    "tracer_collector_running{host=\"other\"} 0\n",
	    "tracer_events_lost_total{hop=\"kernel\",type=\"exec\"} 7\n",
	    "tracer_processes_recorded_total 41\n",
	    "tracer_runs_running 2\n",
	    "tracer_aggregator_frames_total 60\n",
	    "tracer_aggregator_bad_frames_total 1\n",
	    "tracer_aggregator_refused_peers_total 2\n",
	    "tracer_aggregator_events_total 1300\n",
	    "tracer_aggregator_events_skipped_total 5\n",
	    "tracer_outbox_pending_records 2\n",
	    "tracer_outbox_pending_bytes 8\n",
	    "tracer_outbox_dropped_records_total 0\n",
	    "tracer_shipper_delivered_records_total 41\n",
	    "tracer_shipper_last_delivery_timestamp_seconds 1800000001\n",
	    "tracer_shipper_dead_letter_records 5\n",
	    "# TYPE tracer_aggregator_events_total counter\n",
	    "# TYPE tracer_outbox_pending_records gauge\n",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(text, want[i]))
			fail_msg("missing %s in:\n%s", want[i], text);
	/* No label a collector restart changes: no stream id, no "final". */
	assert_null(strstr(text, "stream="));
	assert_null(strstr(text, "final="));
	assert_every_sample_is_a_number(text);
	/* For node_exporter, another user: world-readable whatever our umask. */
	struct stat sb;
	assert_int_equal(stat(prom_path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0644);
	char tmp[80];
	snprintf(tmp, sizeof(tmp), "%s.tmp", prom_path);
	assert_int_equal(access(tmp, F_OK), -1);
	/* A directory that does not exist: -1, nothing left behind. */
	assert_int_equal(metrics_write(s.db, state_path, "/nonexistent-dir/x.prom", 1), -1);
	store_close(&s);
	unlink(db_path);
	unlink(state_path);
	unlink(prom_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_render)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
