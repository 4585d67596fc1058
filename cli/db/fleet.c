/* The fleet store: where it is (--fleet, a [fleet] section), its credentials, its queries. */
#include "cli/db/fleet.h"

#include <ctype.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>

#include "cli/db/liveness.h"
#include "common/confkey.h"
#include "shipper/credentials.h"

static struct {
	bool active;
	char base[600];	   /* http(s)://HOST:PORT/ */
	char display[600]; /* the URL as given, for messages */
	char database[128];
	struct credentials cred;
} fleet;

struct fleet_file {
	char url[600], credentials[1024];
	char err[512];
};

bool fleet_active(void)
{
	return fleet.active;
}

bool fleet_reads(const char *verb)
{
	static const char *const verbs[] = {"runs",	 "show",     "signals", "explain",
					    "report",	 "timeline", "idle",	"cost",
					    "recommend", "energy",   "top",	"retention"};

	for (size_t i = 0; i < sizeof(verbs) / sizeof(*verbs); i++)
		if (!strcmp(verb, verbs[i]))
			return true;
	return false;
}

int64_t liveness_stale_ns(void)
{
	return fleet.active ? FLEET_SILENT_NS : HEALTH_STALE_NS;
}

const char *fleet_database(void)
{
	return fleet.database;
}

/* clickhouse://HOST:PORT/DATABASE[?secure=1]: as the shipper's --sink takes it. */
static int parse_url(const char *url, char *err, size_t size)
{
	const char *rest = url + strlen("clickhouse://");
	const char *slash = strchr(rest, '/');
	bool secure = false;

	if (strncmp(url, "clickhouse://", 13) != 0 || !slash || slash == rest ||
	    (size_t)(slash - rest) > 256) {
		snprintf(err, size, "'%s': expected clickhouse://HOST:PORT/DATABASE", url);
		return -1;
	}
	const char *db = slash + 1, *query = strchr(db, '?');
	size_t n = query ? (size_t)(query - db) : strlen(db);
	if (query && strcmp(query, "?secure=1") != 0) {
		snprintf(err, size, "'%s': the only option is ?secure=1", url);
		return -1;
	}
	secure = query != NULL;
	if (!n || n >= sizeof(fleet.database)) {
		snprintf(err, size, "'%s': no database name", url);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)db[i]) && db[i] != '_') {
			snprintf(err, size, "'%s': the database name is letters, digits and _",
				 url);
			return -1;
		}
	memcpy(fleet.database, db, n);
	fleet.database[n] = '\0';
	snprintf(fleet.base, sizeof(fleet.base), "%s://%.*s/", secure ? "https" : "http",
		 (int)(slash - rest), rest);
	snprintf(fleet.display, sizeof(fleet.display), "%s", url);
	return 0;
}

static int on_entry(void *user, const char *section, const char *name, const char *value)
{
	struct fleet_file *f = user;
	static const char *const mine[] = {"fleet", NULL};
	bool is_mine;
	const char *why = config_section_check(section, mine, &is_mine);

	if (!why && !is_mine)
		return 1;
	if (!why && config_key_is(name, "url") && strlen(value) < sizeof(f->url))
		snprintf(f->url, sizeof(f->url), "%s", value);
	else if (!why && config_key_is(name, "credentials") &&
		 strlen(value) < sizeof(f->credentials))
		snprintf(f->credentials, sizeof(f->credentials), "%s", value);
	else
		why = why ? why : "unknown setting (the [fleet] section has url and credentials)";
	if (why)
		snprintf(f->err, sizeof(f->err), "%s = %s: %s", name, value, why);
	return why == NULL;
}

/* The [fleet] file given, else the user's, else the site's: 0, 1 none found, -1 said why. */
static int read_config(const char *given, struct fleet_file *f, char *err, size_t size)
{
	char user_path[1200];
	const char *home = getenv("HOME");
	const char *paths[3] = {given, NULL, NULL};

	if (!given) {
		snprintf(user_path, sizeof(user_path), "%s/.config/tracer/fleet.conf",
			 home ? home : "");
		paths[0] = home && *home ? user_path : "/etc/tracer/fleet.conf";
		paths[1] = home && *home ? "/etc/tracer/fleet.conf" : NULL;
	}
	for (int i = 0; i < 2 && paths[i]; i++) {
		int line = ini_parse(paths[i], on_entry, f);
		if (line < 0 && !given)
			continue;
		if (line < 0) {
			snprintf(err, size, "%s: cannot read", paths[i]);
			return -1;
		}
		if (line > 0 || !f->url[0]) {
			snprintf(err, size, "%s:%d: %s", paths[i], line,
				 f->err[0] ? f->err
				 : line	   ? "syntax error"
					   : "no url in [fleet]");
			return -1;
		}
		return 0;
	}
	return 1;
}

int fleet_select(const char *url_or_config)
{
	struct fleet_file f;

	memset(&f, 0, sizeof(f));
	char err[1400];
	bool is_url = url_or_config && !strncmp(url_or_config, "clickhouse://", 13);

	if (!is_url) {
		int rv = read_config(url_or_config, &f, err, sizeof(err));
		if (rv != 0) {
			fprintf(stderr, "tracer: --fleet: %s\n",
				rv > 0 ? "no URL given and no [fleet] section in "
					 "~/.config/tracer/fleet.conf or /etc/tracer/fleet.conf"
				       : err);
			return -1;
		}
	}
	if (parse_url(is_url ? url_or_config : f.url, err, sizeof(err)) != 0) {
		fprintf(stderr, "tracer: --fleet: %s\n", err);
		return -1;
	}
	/* The shipper's rule: a file only its owner can read, never argv. */
	if (f.credentials[0] && credentials_load(f.credentials, &fleet.cred, err, sizeof(err))) {
		fprintf(stderr, "tracer: --fleet: credentials %s\n", err);
		return -1;
	}
	fleet.active = true;
	return 0;
}

struct answer {
	char *text;
	size_t len;
};

static size_t on_data(char *data, size_t size, size_t n, void *user)
{
	struct answer *a = user;
	size_t more = size * n;
	char *grown = realloc(a->text, a->len + more + 1);

	if (!grown)
		return 0;
	memcpy(grown + a->len, data, more);
	a->text = grown;
	a->len += more;
	a->text[a->len] = '\0';
	return more;
}

/*
 * The store's processes, steps and runs as the hosts hold them: each `DB`.T FINAL
 * of those becomes (SELECT * FROM `DB`.T FINAL WHERE _withdrawn = 0), so a row
 * its host took back (a tombstone, docs/shipping.md) is in no verb's answer. After
 * FINAL, not before: PREWHERE (or WHERE inside a merge) would drop the tombstone
 * and bring back the copy it withdrew. ClickHouse pushes the outer conditions
 * into the subquery (enable_optimize_predicate_expression, set in the URL).
 */
static char *without_withdrawn(const char *sql)
{
	static const char *const tables[] = {".processes FINAL", ".`processes` FINAL",
					     ".steps FINAL",	 ".`steps` FINAL",
					     ".runs FINAL",	 ".`runs` FINAL"};
	/* A match of 14 characters at least ("`d`.runs FINAL") grows by 37: under 4 times. */
	size_t cap = strlen(sql) * 4 + 1024, n = 0;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	for (const char *p = sql; *p;) {
		const char *hit = NULL, *tail = NULL;
		for (size_t t = 0; t < sizeof(tables) / sizeof(*tables); t++) {
			const char *h = strstr(p, tables[t]);
			if (h && (!hit || h < hit) && h > p && h[-1] == '`') {
				hit = h;
				tail = h + strlen(tables[t]);
			}
		}
		/* FINAL PREWHERE (fleet_copy.c): the query filters _withdrawn itself. */
		if (!hit || isalnum((unsigned char)*tail) || *tail == '_' ||
		    !strncmp(tail, " PREWHERE ", 10)) {
			size_t rest = hit ? (size_t)(tail - p) : strlen(p);
			memcpy(out + n, p, rest);
			n += rest;
			p += rest;
			continue;
		}
		const char *start = memrchr(p, '`', (size_t)(hit - 1 - p)); /* `DB`'s first quote */
		if (!start)
			start = hit;
		memcpy(out + n, p, (size_t)(start - p));
		n += (size_t)(start - p);
		n += (size_t)snprintf(out + n, cap - n, "(SELECT * FROM %.*s WHERE _withdrawn = 0)",
				      (int)(tail - start), start);
		p = tail;
	}
	out[n] = '\0';
	return out;
}

char *fleet_query(const char *sql_in, char *err, size_t size)
{
	char *sql = without_withdrawn(sql_in);
	char url[700];
	CURL *c = curl_easy_init();
	struct answer a = {calloc(1, 1), 0};
	struct curl_slist *headers = NULL;
	char auth[1100];
	long status = 0;

	if (!c || !a.text || !sql) {
		snprintf(err, size, "out of memory");
		free(a.text);
		free(sql);
		curl_easy_cleanup(c);
		return NULL;
	}
	snprintf(url, sizeof(url), "%s?enable_optimize_predicate_expression=1", fleet.base);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, sql);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &a);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 60000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (fleet.cred.user[0]) {
		curl_easy_setopt(c, CURLOPT_USERNAME, fleet.cred.user);
		curl_easy_setopt(c, CURLOPT_PASSWORD, fleet.cred.password);
	} else if (fleet.cred.token[0]) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", fleet.cred.token);
		headers = curl_slist_append(headers, auth);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	}
	CURLcode rc = curl_easy_perform(c);
	free(sql);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	curl_slist_free_all(headers);
	if (rc != CURLE_OK || status != 200) {
		/* One line: the store's first line of its answer, or why there was none. */
		if (rc != CURLE_OK)
			snprintf(err, size, "fleet store %s unreachable: %s", fleet.display,
				 curl_easy_strerror(rc));
		else
			snprintf(err, size, "fleet store %s answered HTTP %ld: %.200s",
				 fleet.display, status, a.text);
		err[strcspn(err, "\n")] = '\0';
		free(a.text);
		return NULL;
	}
	return a.text;
}
