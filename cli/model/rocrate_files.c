#include "cli/model/rocrate_files.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/model/provpath.h"

#define NONE (-1)

/* uses[path] = [first read ns, first write ns] (NONE where it never was). */
static void note_use(json_t *uses, const char *path, const char *access, int64_t first_ns)
{
	json_t *u = json_object_get(uses, path);

	if (!u) {
		u = json_pack("[I, I]", (json_int_t)NONE, (json_int_t)NONE);
		json_object_set_new(uses, path, u);
	}
	for (int i = 0; i < 2; i++) {
		if (!strchr(access, i == 0 ? 'r' : 'w'))
			continue;
		json_int_t was = json_integer_value(json_array_get(u, (size_t)i));
		if (was == NONE || first_ns < was)
			json_array_set_new(u, (size_t)i, json_integer(first_ns));
	}
}

static json_t *unit_uses(struct prov_files *pf, const char *kind, int64_t id)
{
	char key[48];
	snprintf(key, sizeof(key), "%s:%lld", kind, (long long)id);
	json_t *u = json_object_get(pf->units, key);

	if (!u) {
		u = json_object();
		json_object_set_new(pf->units, key, u);
	}
	return u;
}

/* One open row; reasons a path is left out are settled here when the path says so. */
static void take_row(struct prov_files *pf, sqlite3_stmt *st, int by_step)
{
	const char *path = (const char *)sqlite3_column_text(st, 2);
	const char *access = (const char *)sqlite3_column_text(st, 3);
	json_t *known;

	if (!path || !access)
		return;
	known = json_object_get(pf->entries, path);
	if (sqlite3_column_int64(st, 6)) {
		json_object_set_new(pf->entries, path, json_string("truncated"));
		return;
	}
	if (prov_path_is_system(path)) {
		json_object_set_new(pf->entries, path, json_string("system"));
		return;
	}
	if (sqlite3_column_int64(st, 4) != 0) { /* a failed open read and wrote nothing */
		if (!known && !json_object_get(pf->run, path))
			json_object_set_new(pf->entries, path, json_string("failed"));
		return;
	}
	if (json_is_string(known)) /* failed before, opened now */
		json_object_del(pf->entries, path);
	int64_t first = sqlite3_column_int64(st, 5);
	bool in_step = sqlite3_column_type(st, 0) != SQLITE_NULL;
	if (by_step && in_step)
		note_use(unit_uses(pf, "step", sqlite3_column_int64(st, 0)), path, access, first);
	else if (!by_step)
		note_use(unit_uses(pf, "process", sqlite3_column_int64(st, 1)), path, access,
			 first);
	note_use(pf->run, path, access, first);
}

int prov_files_load(sqlite3 *db, int64_t run, int by_step, struct prov_files *pf)
{
	sqlite3_stmt *st;

	pf->units = json_object();
	pf->run = json_object();
	pf->entries = json_object();
	if (sqlite3_prepare_v2(db,
			       "SELECT p.step_id, p.id, f.path, f.access, f.result, f.first_ns,"
			       " f.path_truncated FROM files f JOIN processes p ON p.id ="
			       " f.process_id WHERE p.run_id = ?1 ORDER BY f.first_ns, f.id",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(st, 1, run);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		take_row(pf, st, by_step);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static bool written_in_run(const struct prov_files *pf, const char *path)
{
	return json_integer_value(json_array_get(json_object_get(pf->run, path), 1)) != NONE;
}

/* The entity of a path as stat() sees it now, or the reason it is left out. */
static json_t *describe(const struct prov_files *pf, const char *path)
{
	char uri[8192], when[40];
	struct stat st;

	if (!prov_file_uri(path, uri, sizeof(uri)))
		return json_string("truncated");
	if (stat(path, &st) != 0) {
		if (errno == ENOENT && written_in_run(pf, path))
			return json_string("temporary");
		return json_pack("{s:s, s:s, s:s, s:s}", "@id", uri, "@type", "File", "name", path,
				 "description", "not found when the record was written");
	}
	if (!S_ISREG(st.st_mode))
		return json_string("directory");
	prov_iso_time((long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec, when,
		      sizeof(when));
	char size[32];
	snprintf(size, sizeof(size), "%lld", (long long)st.st_size);
	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "@id", uri, "@type", "File", "name", path,
			 "contentSize", size, "dateModified", when);
}

json_t *prov_file_entity(struct prov_files *pf, const char *path)
{
	json_t *e = json_object_get(pf->entries, path);

	if (!e) {
		e = describe(pf, path);
		json_object_set_new(pf->entries, path, e);
	}
	return json_is_object(e) ? e : NULL;
}

static void add_ref(json_t *list, json_t *entity)
{
	json_array_append_new(list, json_pack("{s:O}", "@id", json_object_get(entity, "@id")));
}

void prov_files_of(struct prov_files *pf, json_t *uses, json_t **inputs, json_t **outputs)
{
	const char *path;
	json_t *u;

	*inputs = json_array();
	*outputs = json_array();
	json_object_foreach(uses ? uses : pf->run, path, u)
	{
		json_int_t read = json_integer_value(json_array_get(u, 0));
		json_int_t wrote = json_integer_value(json_array_get(u, 1));
		json_t *e = prov_file_entity(pf, path);
		if (!e)
			continue;
		/* Read what it had itself written before: its own intermediate, no input. */
		if (read != NONE && (wrote == NONE || read < wrote))
			add_ref(*inputs, e);
		if (wrote != NONE)
			add_ref(*outputs, e);
	}
}

json_t *prov_files_summary(const struct prov_files *pf)
{
	json_t *left = json_object();
	json_int_t kept = 0, gone = 0;
	const char *path;
	json_t *e;

	json_object_foreach(pf->entries, path, e)
	{
		if (json_is_object(e)) {
			kept++;
			gone += json_object_get(e, "contentSize") == NULL;
			continue;
		}
		const char *why = json_string_value(e);
		json_object_set_new(
		    left, why, json_integer(json_integer_value(json_object_get(left, why)) + 1));
	}
	return json_pack("{s:I, s:I, s:o}", "files", kept, "not_found", gone, "left_out", left);
}

void prov_files_free(struct prov_files *pf)
{
	json_decref(pf->units);
	json_decref(pf->run);
	json_decref(pf->entries);
	pf->units = pf->run = pf->entries = NULL;
}
