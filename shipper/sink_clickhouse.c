/*
 * ClickHouse over its HTTP interface. Each shipped table becomes a table of
 * the same name and columns (types from the local schema) plus `_host`,
 * `_key` (the record's key), `_version` (its outbox id) and `_withdrawn` (1: a
 * tombstone, the host took the row back), in a ReplacingMergeTree ordered by
 * (_host, _key): a batch delivered twice, or a record queued again, leaves one
 * row per record once merged, and queries with FINAL never see duplicates
 * (docs/shipping.md); readers skip withdrawn rows after FINAL.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "shipper/sink_kind.h"

struct clickhouse {
	char base[512], database[128];
	bool prepared;
};

static struct clickhouse *ch(struct sink *s)
{
	return s->state;
}

static const char *const shipped[] = {"processes",	 "steps",	  "runs",
				      "signals",	 "samples",	  "host_samples",
				      "collector_stats", "tools",	  "batch_submissions",
				      "batch_jobs",	 "energy_samples"};

/*
 * Each table's partition: the UTC day of a time its record keeps from its first copy
 * to its last (a ReplacingMergeTree replaces only within a partition), so retention
 * drops whole days (tracer --fleet retention; ClickHouse 18.16 has no TTL). tools and
 * batch_jobs are small, and a job's first process can be learned late: one partition.
 */
static const char *partition_of(const char *table)
{
	static const struct {
		const char *table, *column;
	} by_day[] = {{"processes", "start_ns"},
		      {"steps", "start_ns"},
		      {"runs", "start_ns"},
		      {"signals", "detected_ns"},
		      {"samples", "ts_ns"},
		      {"host_samples", "ts_ns"},
		      {"energy_samples", "ts_ns"},
		      {"collector_stats", "first_seen_ns"},
		      {"batch_submissions", "submit_ns"}};
	static char expr[160];

	for (size_t i = 0; i < sizeof(by_day) / sizeof(*by_day); i++)
		if (!strcmp(table, by_day[i].table)) {
			snprintf(expr, sizeof(expr),
				 " PARTITION BY toYYYYMMDD(toDateTime(intDiv(ifNull(`%s`, 0), "
				 "1000000000)), 'UTC')",
				 by_day[i].column);
			return expr;
		}
	return "";
}

static void query(struct sink *s, const char *sql, const char *body, size_t len,
		  struct send_result *out)
{
	char url[4096];
	char *q = curl_easy_escape(NULL, sql, 0);

	snprintf(url, sizeof(url), "%s?query=%s&input_format_skip_unknown_fields=1", ch(s)->base,
		 q ? q : "");
	curl_free(q);
	sink_post(s, url, NULL, body, len, out);
}

/* A statement sent as the request body: no URL length limit for long DDL. */
static void command(struct sink *s, const char *sql, struct send_result *out)
{
	sink_post(s, ch(s)->base, NULL, sql, strlen(sql), out);
}

/* The ClickHouse type of a SQLite declared type. */
static const char *ch_type(const char *decl)
{
	char up[64];
	size_t i = 0;

	for (; decl && decl[i] && i < sizeof(up) - 1; i++)
		up[i] = (char)toupper((unsigned char)decl[i]);
	up[i] = '\0';
	if (strstr(up, "INT"))
		return "Nullable(Int64)";
	if (strstr(up, "REAL") || strstr(up, "FLOA") || strstr(up, "DOUB"))
		return "Nullable(Float64)";
	return "Nullable(String)";
}

/*
 * Adds to a table made by an older tracer the columns added since (ClickHouse
 * 18 has no ADD COLUMN IF NOT EXISTS): asks which of ours it lacks, then adds
 * those. names and types: n local columns.
 */
static void add_missing_columns(struct sink *s, const char *table, char names[][64],
				const char *const *types, size_t n, struct send_result *out)
{
	static char sql[16384];
	size_t len = (size_t)snprintf(sql, sizeof(sql), "SELECT c FROM (SELECT arrayJoin([");

	for (size_t i = 0; i < n && len < sizeof(sql) - 512; i++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s'%s'", i ? "," : "",
					names[i]);
	snprintf(sql + len, sizeof(sql) - len,
		 "]) AS c) WHERE c NOT IN (SELECT name FROM system.columns WHERE database = '%s' "
		 "AND table = '%s') FORMAT TabSeparated",
		 ch(s)->database, table);
	command(s, sql, out);
	if (out->outcome != SEND_OK || !out->answer[0])
		return;
	char missing[sizeof(out->answer)];
	snprintf(missing, sizeof(missing), "%s", out->answer);
	len = (size_t)snprintf(sql, sizeof(sql), "ALTER TABLE `%s`.`%s`", ch(s)->database, table);
	int added = 0;
	for (char *save = NULL, *c = strtok_r(missing, "\n", &save); c;
	     c = strtok_r(NULL, "\n", &save))
		for (size_t i = 0; i < n; i++)
			if (!strcmp(names[i], c) && len < sizeof(sql) - 256)
				len += (size_t)snprintf(sql + len, sizeof(sql) - len,
							"%s ADD COLUMN `%s` %s", added++ ? "," : "",
							c, types[i]);
	if (added)
		command(s, sql, out);
}

static void clickhouse_prepare(struct sink *s, struct outbox_reader *o, struct send_result *out)
{
	static char sql[16384], names[256][64];
	const char *types[256];

	if (ch(s)->prepared)
		return;
	snprintf(sql, sizeof(sql), "CREATE DATABASE IF NOT EXISTS `%s`", ch(s)->database);
	command(s, sql, out);
	if (out->outcome != SEND_OK)
		return;
	for (size_t t = 0; t < sizeof(shipped) / sizeof(*shipped); t++) {
		sqlite3_stmt *st;
		size_t n = 0, len = (size_t)snprintf(sql, sizeof(sql),
						     "CREATE TABLE IF NOT EXISTS `%s`.`%s` (_host "
						     "String, _key String, _version UInt64, "
						     "_withdrawn UInt8 DEFAULT 0",
						     ch(s)->database, shipped[t]);
		char pragma[128];
		snprintf(pragma, sizeof(pragma), "PRAGMA table_info(%s)", shipped[t]);
		if (sqlite3_prepare_v2(o->db, pragma, -1, &st, NULL) != SQLITE_OK)
			continue;
		while (sqlite3_step(st) == SQLITE_ROW && n < 255 && len < sizeof(sql) - 256) {
			snprintf(names[n], sizeof(names[n]), "%s",
				 (const char *)sqlite3_column_text(st, 1));
			types[n] = ch_type((const char *)sqlite3_column_text(st, 2));
			len += (size_t)snprintf(sql + len, sizeof(sql) - len, ", `%s` %s", names[n],
						types[n]);
			n++;
		}
		sqlite3_finalize(st);
		/* A table made before tombstones gains their flag too (old rows read 0). */
		snprintf(names[n], sizeof(names[n]), "_withdrawn");
		types[n++] = "UInt8 DEFAULT 0";
		snprintf(sql + len, sizeof(sql) - len,
			 ") ENGINE = ReplacingMergeTree(_version)%s ORDER BY (_host, _key)",
			 partition_of(shipped[t]));
		command(s, sql, out);
		if (out->outcome != SEND_OK)
			return;
		add_missing_columns(s, shipped[t], names, types, n, out);
		if (out->outcome != SEND_OK)
			return;
	}
	ch(s)->prepared = true;
}

/* {"_host":H,"_key":K,"_version":N, + the payload's members */
static bool append_row(struct sink *s, const struct record *r, const char *host)
{
	json_t *head = json_pack("{s:s, s:s, s:I}", "_host", host, "_key", r->key, "_version",
				 (json_int_t)r->id);
	char *text = head ? json_dumps(head, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	bool ok = text && r->payload_len >= 2 && r->payload[0] == '{';

	json_decref(head);
	if (ok) {
		ok = lines_append(s, text, strlen(text) - 1) && lines_append(s, ",", 1) &&
		     lines_append(s, r->payload + 1, r->payload_len - 1) &&
		     lines_append(s, "\n", 1);
	}
	free(text);
	return ok;
}

static void clickhouse_send(struct sink *s, const struct batch *b, const char *host,
			    struct send_result *out)
{
	char sql[256];

	memset(out, 0, sizeof(*out));
	out->outcome = SEND_OK;
	/* One INSERT per table; a failure retries the whole batch (replays are harmless). */
	for (size_t t = 0; t < sizeof(shipped) / sizeof(*shipped); t++) {
		size_t start = s->lines_len;
		for (size_t i = 0; i < b->n; i++) {
			if (strcmp(b->r[i].kind, shipped[t]) != 0)
				continue;
			if (!append_row(s, &b->r[i], host)) {
				out->outcome = SEND_REJECTED;
				snprintf(out->answer, sizeof(out->answer),
					 "record %lld: payload is not a JSON object",
					 (long long)b->r[i].id);
				return;
			}
		}
		if (s->lines_len == start)
			continue;
		snprintf(sql, sizeof(sql), "INSERT INTO `%s`.`%s` FORMAT JSONEachRow",
			 ch(s)->database, shipped[t]);
		query(s, sql, s->lines + start, s->lines_len - start, out);
		if (out->outcome != SEND_OK)
			return;
	}
}

static bool clickhouse_accepts(const char *url)
{
	return !strncmp(url, "clickhouse://", 13);
}

static int clickhouse_open(struct sink *s, const char *url, char *err, size_t err_size)
{
	char hostport[256] = "", db[128] = "";
	const char *rest = url + 13;
	struct clickhouse *c;
	int used = 0;

	/* All of it or nothing: a URL cut at a stray character would pick another database. */
	if (sscanf(rest, "%255[]A-Za-z0-9.:[-]/%127[A-Za-z0-9_]%n", hostport, db, &used) != 2 ||
	    (rest[used] && strcmp(rest + used, "?secure=1") && strcmp(rest + used, "?secure=0"))) {
		snprintf(
		    err, err_size,
		    "%s: expected clickhouse://HOST[:PORT]/DATABASE[?secure=1] (the database in "
		    "letters, digits and _; credentials go in the credentials file)",
		    url);
		return -1;
	}
	bool secure = !strcmp(rest + used, "?secure=1");
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	snprintf(c->base, sizeof(c->base), "%s://%s/", secure ? "https" : "http", hostport);
	snprintf(c->database, sizeof(c->database), "%s", db);
	s->state = c;
	return 0;
}

static void clickhouse_close(struct sink *s)
{
	free(s->state);
	s->state = NULL;
}

const struct sink_ops clickhouse_sink = {
    .name = "clickhouse",
    .accepts = clickhouse_accepts,
    .open = clickhouse_open,
    .prepare = clickhouse_prepare,
    .send = clickhouse_send,
    .close = clickhouse_close,
};
