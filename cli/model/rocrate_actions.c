/* The actions of a crate: one CreateAction per step or process, with its tool,
 * user, host, container image, inputs and outputs (cli/rocrate.h). */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/render/jsonfield.h"
#include "cli/model/pkgowner.h"
#include "cli/model/provpath.h"
#include "cli/model/rocrate.h"
#include "cli/db/rows.h"

#define SIGPIPE_NUMBER 13

void crate_put(struct crate *c, json_t *entity)
{
	json_object_set_new(c->entities, jstr(entity, "@id"), entity);
}

static json_t *ref(const char *id)
{
	return json_pack("{s:s}", "@id", id);
}

json_t *crate_agent(struct crate *c, int64_t uid)
{
	char id[40];
	snprintf(id, sizeof(id), "#user/%lld", (long long)uid);

	if (!json_object_get(c->entities, id)) {
		/* The account's name as the host's user database has it now. */
		struct passwd *pw = getpwuid((uid_t)uid);
		char name[300];
		snprintf(name, sizeof(name), "%s", pw ? pw->pw_name : "");
		if (!pw)
			snprintf(name, sizeof(name), "uid %lld", (long long)uid);
		crate_put(c, json_pack("{s:s, s:s, s:s, s:s}", "@id", id, "@type", "Person", "name",
				       name, "identifier", id + 1));
	}
	return ref(id);
}

json_t *crate_tool(struct crate *c, const char *name, const char *exe)
{
	char id[1200] = "#tool/";

	if (!prov_escape(name, id + 6, sizeof(id) - 6))
		snprintf(id, sizeof(id), "#tool/unnamed");
	if (!json_object_get(c->entities, id)) {
		json_t *tool = json_pack("{s:s, s:s, s:s}", "@id", id, "@type",
					 "SoftwareApplication", "name", name);
		if (exe && *exe) {
			json_object_set_new(tool, "description", json_string(exe));
			json_object_set_new(c->tool_exes, id, json_string(exe));
			json_object_set_new(c->exes, exe, json_null());
		}
		crate_put(c, tool);
	}
	return ref(id);
}

void crate_set_status(json_t *action, const char *status, json_t *exit_code, json_t *signal)
{
	char why[64] = "";

	if (json_is_integer(signal) && json_integer_value(signal) != SIGPIPE_NUMBER)
		snprintf(why, sizeof(why), "killed by signal %lld",
			 (long long)json_integer_value(signal));
	else if (json_is_integer(exit_code) && json_integer_value(exit_code) != 0)
		snprintf(why, sizeof(why), "exit code %lld",
			 (long long)json_integer_value(exit_code));
	const char *word = !strcmp(status, "running") ? "ActiveActionStatus"
			   : why[0] || !strcmp(status, "failed") || !strcmp(status, "killed")
			       ? "FailedActionStatus"
			       : "CompletedActionStatus";
	char iri[80];
	snprintf(iri, sizeof(iri), "http://schema.org/%s", word);
	json_object_set_new(action, "actionStatus", json_string(iri));
	if (why[0])
		json_object_set_new(action, "error", json_string(why));
}

/* The image a container of the run was started from, as its CLI named it. */
static json_t *container_image(struct crate *c, const char *container_id)
{
	json_t *links = cli_rows_json(c->db,
				      "SELECT container_id, image, runtime FROM container_links"
				      " WHERE run_id = ?1 AND image IS NOT NULL",
				      c->run);
	json_t *found = NULL, *l;
	size_t i;

	json_array_foreach(links, i, l)
	{
		if (strcmp(jstr(l, "container_id"), container_id) != 0)
			continue;
		char id[600] = "#container-image/";
		prov_escape(jstr(l, "image"), id + 17, sizeof(id) - 17);
		char name[512], *tag;
		snprintf(name, sizeof(name), "%s", jstr(l, "image"));
		tag = strrchr(name, ':');
		if (tag && strchr(tag, '/'))
			tag = NULL; /* a registry's port, not a tag */
		if (tag)
			*tag++ = '\0';
		crate_put(c, json_pack("{s:s, s:s, s:{s:s}, s:s, s:s?}", "@id", id, "@type",
				       "ContainerImage", "additionalType", "@id",
				       "https://w3id.org/ro/terms/workflow-run#DockerImage", "name",
				       name, "tag", tag));
		found = ref(id);
		break;
	}
	json_decref(links);
	return found;
}

static void set_time(json_t *action, const char *key, json_t *ns)
{
	char when[40];

	if (!json_is_integer(ns))
		return;
	prov_iso_time((long long)json_integer_value(ns), when, sizeof(when));
	json_object_set_new(action, key, json_string(when));
}

/* What every action has: times, status, user, host, container, files. */
static void fill_action(struct crate *c, json_t *a, json_t *row, json_t *uses)
{
	set_time(a, "startTime", json_object_get(row, "start_ns"));
	set_time(a, "endTime", json_object_get(row, "end_ns"));
	crate_set_status(a, jstr(row, "status"), json_object_get(row, "exit_code"),
			 json_object_get(row, "signal"));
	if (json_is_integer(json_object_get(row, "uid")))
		json_object_set_new(a, "agent", crate_agent(c, jint(row, "uid")));
	if (c->hostname)
		json_object_set_new(a, "location", ref("#host"));
	json_t *image =
	    *jstr(row, "container_id") ? container_image(c, jstr(row, "container_id")) : NULL;
	if (image)
		json_object_set_new(a, "containerImage", image);
	json_t *in, *out;
	prov_files_of(c->files, uses, &in, &out);
	json_object_set_new(a, "object", in);
	json_object_set_new(a, "result", out);
}

static const char step_sql[] =
    "SELECT s.id, s.key, s.name, s.kind, s.status, s.exit_code, s.signal, s.start_ns, s.end_ns,"
    " s.container_id, r.uid FROM steps s LEFT JOIN processes r ON r.id = s.root_process_id"
    " WHERE s.run_id = ?1 ORDER BY s.start_ns, s.id";

static bool is_shell(const char *program)
{
	static const char *const shells[] = {"bash", "sh", "dash", "zsh"};

	for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++)
		if (!strcmp(program, shells[i]))
			return true;
	return false;
}

/*
 * A step's tool: the one its name says, else the non-shell program that used
 * the most CPU (an engine's job shell only starts the work), else the first.
 */
static json_t *step_tool(struct crate *c, json_t *s)
{
	json_t *rows = cli_rows_json(
	    c->db,
	    "SELECT t.name, t.program, p.exe FROM processes p JOIN tools t ON t.id = p.tool_id"
	    " WHERE p.step_id = ?1 AND p.helper = 0 ORDER BY p.cpu_user_ns + p.cpu_sys_ns DESC,"
	    " p.id",
	    jint(s, "id"));
	json_t *best = json_array_get(rows, 0), *t;
	size_t i;

	json_array_foreach(rows, i, t)
	{
		if (!strcmp(jstr(t, "name"), jstr(s, "name"))) {
			best = t;
			break;
		}
		if (is_shell(jstr(best, "program")) && !is_shell(jstr(t, "program")))
			best = t;
	}
	json_t *tool = best ? crate_tool(c, jstr(best, "name"), jstr(best, "exe"))
			    : crate_tool(c, jstr(s, "name"), NULL);
	json_decref(rows);
	return tool;
}

static const char process_sql[] =
    "SELECT p.id, p.pid, p.image, p.exe, p.argv, p.uid, p.start_ns, p.end_ns, p.exit_code,"
    " p.signal, p.state AS status, p.container_id, t.name AS tool FROM processes p LEFT JOIN"
    " tools t ON t.id = p.tool_id WHERE p.run_id = ?1 AND p.helper = 0"
    " ORDER BY p.start_ns, p.id";

static json_t *step_action(struct crate *c, json_t *s)
{
	char id[600] = "#step/", key[48], desc[700];
	prov_escape(jstr(s, "key"), id + 6, sizeof(id) - 6);
	snprintf(key, sizeof(key), "step:%lld", (long long)jint(s, "id"));
	snprintf(desc, sizeof(desc), "%s %s (step %s of run %lld)", jstr(s, "kind"),
		 jstr(s, "name"), jstr(s, "key"), (long long)c->run);
	json_t *a = json_pack("{s:s, s:s, s:s, s:s}", "@id", id, "@type", "CreateAction", "name",
			      jstr(s, "name"), "description", desc);
	json_object_set_new(a, "instrument", step_tool(c, s));
	fill_action(c, a, s, json_object_get(c->files->units, key));
	return a;
}

static json_t *process_action(struct crate *c, json_t *p)
{
	char id[48], key[48], name[300];
	snprintf(id, sizeof(id), "#process/%lld", (long long)jint(p, "id"));
	snprintf(key, sizeof(key), "process:%lld", (long long)jint(p, "id"));
	const char *tool = *jstr(p, "tool") ? jstr(p, "tool") : jstr(p, "exe");
	snprintf(name, sizeof(name), "%s (pid %lld)", tool, (long long)jint(p, "pid"));
	json_t *a = json_pack("{s:s, s:s, s:s}", "@id", id, "@type", "CreateAction", "name", name);
	char *argv = json_dumps(json_object_get(p, "argv"), JSON_COMPACT);
	if (argv)
		json_object_set_new(a, "description", json_string(argv));
	free(argv);
	json_object_set_new(a, "instrument", crate_tool(c, tool, jstr(p, "exe")));
	fill_action(c, a, p, json_object_get(c->files->units, key));
	return a;
}

json_t *crate_step_actions(struct crate *c, bool by_step)
{
	json_t *rows = cli_rows_json(c->db, by_step ? step_sql : process_sql, c->run);
	json_t *refs = json_array(), *row;
	size_t i;

	json_array_foreach(rows, i, row)
	{
		json_t *a = by_step ? step_action(c, row) : process_action(c, row);
		json_array_append_new(refs, ref(jstr(a, "@id")));
		crate_put(c, a);
	}
	json_decref(rows);
	return refs;
}

/* A package as an entity of its own, which the tools it provides require. */
static json_t *package_entity(struct crate *c, json_t *owner)
{
	char id[700], name[300];
	snprintf(name, sizeof(name), "%s", jstr(owner, "name"));
	snprintf(id, sizeof(id), "#package/%s/", jstr(owner, "manager"));
	prov_escape(name, id + strlen(id), sizeof(id) - strlen(id));
	if (!json_object_get(c->entities, id)) {
		json_t *pkg = json_pack(
		    "{s:s, s:s, s:s, s:s, s:s}", "@id", id, "@type", "SoftwareApplication", "name",
		    name, "softwareVersion", jstr(owner, "version"), "description",
		    !strcmp(jstr(owner, "manager"), "conda") ? "conda package" : "Debian package");
		if (*jstr(owner, "environment"))
			json_object_set_new(pkg, "identifier",
					    json_string(jstr(owner, "environment")));
		crate_put(c, pkg);
	}
	return ref(id);
}

void crate_tool_versions(struct crate *c, const char *dpkg_dir)
{
	const char *tool_id;
	json_t *exe;

	pkg_owners(c->exes, dpkg_dir);
	json_object_foreach(c->tool_exes, tool_id, exe)
	{
		json_t *owner = json_object_get(c->exes, json_string_value(exe));
		json_t *tool = json_object_get(c->entities, tool_id);
		if (!json_is_object(owner) || !tool)
			continue;
		json_object_set_new(tool, "softwareRequirements", package_entity(c, owner));
		/* The package's version is the tool's when the tool is that executable
		 * (bwa mem from bwa), not when an interpreter ran it (a script). */
		const char *base = strrchr(json_string_value(exe), '/');
		const char *name = jstr(tool, "name");
		size_t n = base ? strlen(base + 1) : 0;
		if (base && !strncmp(name, base + 1, n) && (name[n] == '\0' || name[n] == ' '))
			json_object_set_new(tool, "softwareVersion",
					    json_string(jstr(owner, "version")));
	}
}
