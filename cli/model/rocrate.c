/* The crate's document: its descriptor, root dataset, profiles, the run's own
 * action and the workflow where it is known (cli/rocrate.h). */
#include "cli/model/rocrate.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/render/jsonfield.h"
#include "cli/model/provpath.h"
#include "cli/db/rows.h"
#include "common/timeutil.h"

/* The engines whose workflow file the engine's argv names, and its language. */
static const struct {
	const char *engine, *language, *url, *suffix, *option, *fallback;
} workflow_kinds[] = {
    {"snakemake", "Snakemake", "https://snakemake.readthedocs.io", ".smk", "--snakefile",
     "Snakefile"},
    {"nextflow", "Nextflow", "https://www.nextflow.io/", ".nf", NULL, "main.nf"},
    {"cwltool", "Common Workflow Language", "https://w3id.org/cwl/", ".cwl", NULL, NULL},
    {"toil", "Common Workflow Language", "https://w3id.org/cwl/", ".cwl", NULL, NULL},
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && !strcmp(s + n - m, suffix);
}

/* The workflow file the engine's argv names (relative to its cwd), if it exists. */
static int workflow_path(json_t *engine, size_t kind, char *out, size_t size)
{
	json_t *argv = json_object_get(engine, "argv");
	const char *named = NULL, *a;
	size_t i, n = json_array_size(argv);
	struct stat st;

	for (i = 1; i < n && !named; i++) {
		a = json_string_value(json_array_get(argv, i));
		const char *opt = workflow_kinds[kind].option;
		if (!a)
			continue;
		if (opt && (!strcmp(a, opt) || (!strcmp(a, "-s") && kind == 0)) && i + 1 < n)
			named = json_string_value(json_array_get(argv, i + 1));
		else if (opt && !strncmp(a, opt, strlen(opt)) && a[strlen(opt)] == '=')
			named = a + strlen(opt) + 1;
		else if (ends_with(a, workflow_kinds[kind].suffix))
			named = a;
	}
	if (!named)
		named = workflow_kinds[kind].fallback;
	if (!named)
		return -1;
	if (named[0] == '/')
		snprintf(out, size, "%s", named);
	else
		snprintf(out, size, "%s/%s", jstr(engine, "cwd"), named);
	return stat(out, &st) == 0 && S_ISREG(st.st_mode) ? 0 : -1;
}

/* The workflow as the crate's main entity: {"@id"}, or NULL where none is known. */
static json_t *workflow_entity(struct crate *c, json_t *run)
{
	json_t *rows = cli_rows_json(c->db, "SELECT argv, cwd FROM processes WHERE id = ?1",
				     jint(run, "engine_process_id"));
	json_t *engine = json_array_get(rows, 0), *found = NULL;
	char path[PATH_MAX], uri[PATH_MAX * 3 + 8], lang[64] = "#language/";

	for (size_t k = 0; engine && k < sizeof(workflow_kinds) / sizeof(workflow_kinds[0]); k++) {
		if (strcmp(jstr(run, "engine"), workflow_kinds[k].engine) != 0 ||
		    workflow_path(engine, k, path, sizeof(path)) != 0 ||
		    !prov_file_uri(path, uri, sizeof(uri)))
			continue;
		prov_escape(workflow_kinds[k].engine, lang + strlen(lang),
			    sizeof(lang) - strlen(lang));
		crate_put(c, json_pack("{s:s, s:s, s:s, s:{s:s}}", "@id", lang, "@type",
				       "ComputerLanguage", "name", workflow_kinds[k].language,
				       "url", "@id", workflow_kinds[k].url));
		json_t *wf = prov_file_entity(c->files, path);
		json_t *entity =
		    wf ? json_deep_copy(wf) : json_pack("{s:s, s:s}", "@id", uri, "name", path);
		json_object_set_new(
		    entity, "@type",
		    json_pack("[s, s, s]", "File", "SoftwareSourceCode", "ComputationalWorkflow"));
		json_object_set_new(entity, "programmingLanguage", json_pack("{s:s}", "@id", lang));
		crate_put(c, entity);
		found = json_pack("{s:s}", "@id", uri);
		break;
	}
	json_decref(rows);
	return found;
}

/* The run as one CreateAction: the workflow's (or command's) execution. */
static json_t *run_action(struct crate *c, json_t *run, json_t *workflow)
{
	char id[40];
	snprintf(id, sizeof(id), "#run/%lld", (long long)c->run);
	json_t *rows =
	    cli_rows_json(c->db,
			  "SELECT p.argv, p.exe, p.uid, t.name AS tool FROM processes p"
			  " LEFT JOIN tools t ON t.id = p.tool_id WHERE p.id = ?1",
			  jint(run, "command_process_id") ? jint(run, "command_process_id")
							  : jint(run, "engine_process_id"));
	json_t *cmd = json_array_get(rows, 0);
	json_t *a = json_pack("{s:s, s:s, s:s}", "@id", id, "@type", "CreateAction", "name",
			      jstr(run, "name"));
	char *argv = cmd ? json_dumps(json_object_get(cmd, "argv"), JSON_COMPACT) : NULL;
	if (argv)
		json_object_set_new(a, "description", json_string(argv));
	free(argv);
	if (workflow)
		json_object_set(a, "instrument", workflow);
	else if (cmd)
		json_object_set_new(
		    a, "instrument",
		    crate_tool(c, *jstr(cmd, "tool") ? jstr(cmd, "tool") : jstr(cmd, "exe"),
			       jstr(cmd, "exe")));
	char when[40];
	prov_iso_time((long long)jint(run, "start_ns"), when, sizeof(when));
	json_object_set_new(a, "startTime", json_string(when));
	if (json_is_integer(json_object_get(run, "end_ns"))) {
		prov_iso_time((long long)jint(run, "end_ns"), when, sizeof(when));
		json_object_set_new(a, "endTime", json_string(when));
	}
	crate_set_status(a, jstr(run, "status"), json_object_get(run, "exit_code"),
			 json_object_get(run, "signal"));
	if (cmd && json_is_integer(json_object_get(cmd, "uid")))
		json_object_set_new(a, "agent", crate_agent(c, jint(cmd, "uid")));
	json_object_set_new(a, "location", json_pack("{s:s}", "@id", "#host"));
	json_t *in, *out;
	prov_files_of(c->files, NULL, &in, &out);
	json_object_set_new(a, "object", in);
	json_object_set_new(a, "result", out);
	json_decref(rows);
	crate_put(c, a);
	return json_pack("{s:s}", "@id", id);
}

static void add_profile(json_t *graph, json_t *conforms, const char *iri, const char *name)
{
	const char *version = strrchr(iri, '/') + 1;

	json_array_append_new(conforms, json_pack("{s:s}", "@id", iri));
	json_array_append_new(graph, json_pack("{s:s, s:s, s:s, s:s}", "@id", iri, "@type",
					       "CreativeWork", "name", name, "version", version));
}

/* Descriptor, root dataset and profiles, then every entity. */
static json_t *document(struct crate *c, json_t *run, json_t *mentions, json_t *workflow)
{
	json_t *graph = json_array(), *conforms = json_array(), *parts = json_array();
	char name[600], now[40];
	const char *path;
	json_t *e;

	prov_iso_time((long long)now_realtime_ns(), now, sizeof(now));
	snprintf(name, sizeof(name), "Run %s of %s", jstr(run, "name"),
		 *jstr(run, "pipeline") ? jstr(run, "pipeline") : "no pipeline");
	json_array_append_new(graph, json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "@id",
					       "ro-crate-metadata.json", "@type", "CreativeWork",
					       "conformsTo", "@id", "https://w3id.org/ro/crate/1.1",
					       "about", "@id", "./"));
	json_t *root = json_pack(
	    "{s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:o}", "@id", "./", "@type", "Dataset", "name",
	    name, "description",
	    "What this run read, wrote and ran, as the operating system saw it (recorded by "
	    "tracer; files by path, size and modification time, their contents never read)",
	    "datePublished", now, "conformsTo", conforms, "hasPart", parts, "mentions", mentions);
	json_array_append_new(graph, root);
	add_profile(graph, conforms, PROCESS_RUN_CRATE, "Process Run Crate");
	if (workflow) {
		add_profile(graph, conforms, WORKFLOW_RUN_CRATE, "Workflow Run Crate");
		add_profile(graph, conforms, WORKFLOW_RO_CRATE, "Workflow RO-Crate");
		json_object_set(root, "mainEntity", workflow);
		json_array_append(parts, workflow);
	}
	json_object_foreach(c->files->entries, path, e)
	{
		if (json_is_object(e) && !json_object_get(c->entities, jstr(e, "@id"))) {
			json_array_append_new(parts,
					      json_pack("{s:O}", "@id", json_object_get(e, "@id")));
			json_array_append(graph, e);
		}
	}
	json_object_foreach(c->entities, path, e) json_array_append(graph, e);
	return json_pack("{s:[s, s], s:o}", "@context", "https://w3id.org/ro/crate/1.1/context",
			 "https://w3id.org/ro/terms/workflow-run/context", "@graph", graph);
}

json_t *rocrate_build(sqlite3 *db, int64_t run_id, const char *dpkg_dir, json_t **summary)
{
	struct prov_files pf = {0};
	json_t *run = cli_run_object(db, run_id);
	struct crate c = {.db = db,
			  .run = run_id,
			  .entities = json_object(),
			  .exes = json_object(),
			  .tool_exes = json_object(),
			  .files = &pf};
	json_t *doc = NULL;
	bool by_step = jint(run, "steps") > 0;

	c.hostname = *jstr(run, "hostname") ? jstr(run, "hostname") : NULL;
	if (json_is_object(run) && prov_files_load(db, run_id, by_step, &pf) == 0) {
		json_t *workflow = workflow_entity(&c, run);
		json_t *mentions = json_array();
		json_array_append_new(mentions, run_action(&c, run, workflow));
		json_t *steps = crate_step_actions(&c, by_step);
		json_array_extend(mentions, steps);
		crate_put(&c, json_pack("{s:s, s:s, s:s, s:s?}", "@id", "#host", "@type", "Place",
					"name", c.hostname ? c.hostname : "unknown host",
					"description", jstr(run, "arch")));
		crate_tool_versions(&c, dpkg_dir);
		doc = document(&c, run, mentions, workflow);
		*summary = json_pack("{s:I, s:i, s:s, s:o}", "run_id", (json_int_t)run_id,
				     "actions", (int)json_array_size(steps) + 1, "profile",
				     workflow ? WORKFLOW_RUN_CRATE : PROCESS_RUN_CRATE, "files",
				     prov_files_summary(&pf));
		json_object_set_new(*summary, "unit", json_string(by_step ? "step" : "process"));
		json_decref(steps);
		json_decref(workflow);
	}
	prov_files_free(&pf);
	json_decref(c.entities);
	json_decref(c.exes);
	json_decref(c.tool_exes);
	json_decref(run);
	return doc;
}
