#include "aggregator/correlate/correlate.h"
#include "aggregator/insight/insight.h"
#include "aggregator/insight/limits.h"
#include "aggregator/outbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aggregator/correlate/cgroup_path.h"
#include "aggregator/correlate/engines.h"
#include "aggregator/proctable.h"
#include "common/hostinfo.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "common/strutil.h"

bool nextflow_task_key(const char *dir, char *key, size_t size);

/* --- names to ids ------------------------------------------------------------------ */

static int64_t name_lookup(struct name_id *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return v[i].id;
	return 0;
}

static int64_t name_add(struct name_id **v, size_t *n, size_t *cap, const char *name, int64_t id,
			bool written)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct name_id *grown = realloc(*v, c * sizeof(**v));
		if (!grown)
			return 0;
		*v = grown;
		*cap = c;
	}
	(*v)[*n] = (struct name_id){.name = strdup(name), .id = id, .written = written};
	if (!(*v)[*n].name)
		return 0;
	(*n)++;
	return id;
}

static void load_names(struct correlator *c, const char *sql, struct name_id **v, size_t *n,
		       size_t *cap)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(c->store->db, sql, -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW)
		name_add(v, n, cap, (const char *)sqlite3_column_text(st, 1),
			 sqlite3_column_int64(st, 0), true);
	sqlite3_finalize(st);
}

static int64_t pipeline_id(struct correlator *c, const char *name)
{
	int64_t id = name_lookup(c->pipelines, c->n_pipelines, name);

	if (id)
		return id;
	return name_add(&c->pipelines, &c->n_pipelines, &c->cap_pipelines, name,
			c->next_pipeline_id++, false);
}

static int64_t tool_id(struct correlator *c, const struct tool_identity *t)
{
	int64_t id = name_lookup(c->tools, c->n_tools, t->name);

	if (id)
		return id;
	return name_add(&c->tools, &c->n_tools, &c->cap_tools, t->name, c->next_tool_id++, false);
}

/* --- cgroups ------------------------------------------------------------------------ */

static unsigned cgroup_bucket(uint64_t id, bool v1)
{
	return (unsigned)((id * 11400714819323198485ull + v1) >> 54) & 1023;
}

void correlate_cgroup(struct correlator *c, uint64_t id, bool v1_memory, const char *path)
{
	unsigned b = cgroup_bucket(id, v1_memory);

	if (!path)
		return;
	for (struct cgroup_entry *e = c->cgroups[b]; e; e = e->next) {
		if (e->id == id && e->v1_memory == v1_memory) {
			if (strcmp(e->path, path) != 0) {
				char *copy = strdup(path);
				if (copy) {
					free(e->path);
					e->path = copy;
				}
			}
			return;
		}
	}
	struct cgroup_entry *e = malloc(sizeof(*e));
	if (!e || !(e->path = strdup(path))) {
		free(e);
		return;
	}
	e->id = id;
	e->v1_memory = v1_memory;
	e->next = c->cgroups[b];
	c->cgroups[b] = e;
}

static const char *cgroup_path_of(struct correlator *c, uint64_t id, bool v1_memory)
{
	for (struct cgroup_entry *e = c->cgroups[cgroup_bucket(id, v1_memory)]; e; e = e->next)
		if (e->id == id && e->v1_memory == v1_memory)
			return e->path;
	return NULL;
}

/* Container, pod, Slurm job and unit from both hierarchies (v1 memory wins on hybrid hosts). */
static void cgroup_context_of(struct correlator *c, const struct process_row *r,
			      struct cgroup_context *out)
{
	struct cgroup_context v1, v2;

	cgroup_path_parse(r->cgroup1_id ? cgroup_path_of(c, r->cgroup1_id, true) : NULL, &v1);
	cgroup_path_parse(r->cgroup_id ? cgroup_path_of(c, r->cgroup_id, false) : NULL, &v2);
	*out = v2;
#define PREFER_V1(f)                                                                               \
	if (v1.f[0])                                                                               \
	memcpy(out->f, v1.f, sizeof(out->f))
	PREFER_V1(runtime);
	PREFER_V1(container_id);
	PREFER_V1(pod_uid);
	PREFER_V1(ecs_task);
	PREFER_V1(slurm_job);
	PREFER_V1(slurm_step);
	if (!out->unit[0])
		PREFER_V1(unit);
#undef PREFER_V1
}

/* --- runs and steps ----------------------------------------------------------------- */

static void run_name(const char *what, int64_t start_ns, char *out, size_t size)
{
	time_t secs = (time_t)(start_ns / (int64_t)NSEC_PER_SEC);
	struct tm tm;
	char stamp[32];

	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(out, size, "%s-%s", what, stamp);
}

struct run *correlate_explicit_run(struct correlator *c, const struct run_row *row)
{
	struct run *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->row = *row;
	r->row.source = "explicit";
	if (row->pipeline)
		r->pipeline_id = pipeline_id(c, row->pipeline);
	r->status = GROUP_RUNNING;
	r->dirty = true;
	r->next = c->runs;
	c->runs = r;
	return r;
}

static struct run *new_run(struct correlator *c, const char *source, const char *engine,
			   const char *pipeline, struct proc *p)
{
	struct run *r = calloc(1, sizeof(*r));
	char name[PIPELINE_NAME_MAX + 32];

	if (!r)
		return NULL;
	r->row.id = c->store->next_run_id++;
	run_name(pipeline && *pipeline ? pipeline : engine, p->row.start_ns, name, sizeof(name));
	r->row.name = strdup(name);
	r->row.pipeline = pipeline && *pipeline ? strdup(pipeline) : NULL;
	r->row.source = source;
	copy_string(r->row.boot_id, sizeof(r->row.boot_id), p->row.boot_id);
	r->row.start_ns = p->row.start_ns;
	r->row.command_process_id = p->row.id;
	if (r->row.pipeline)
		r->pipeline_id = pipeline_id(c, r->row.pipeline);
	copy_string(r->engine, sizeof(r->engine), engine);
	r->status = GROUP_RUNNING;
	rollup_start(&r->r, p->row.start_ns, p->epoch_offset_ns);
	r->dirty = true;
	r->next = c->runs;
	c->runs = r;
	log_info("run %lld '%s' (%s) recognised from pid %u", (long long)r->row.id, name, engine,
		 p->pid);
	return r;
}

struct run *correlate_run_by_id(struct correlator *c, int64_t id)
{
	for (struct run *r = c->runs; r; r = r->next)
		if (r->row.id == id)
			return r;
	return NULL;
}

/* A run recognised from a script or a Slurm job: what starts inside it with
 * stronger evidence (an engine, another job's cgroup) gets its own run. */
static bool weak_run(const struct run *r)
{
	const char *src = r->row.source ? r->row.source : "";
	return !strcmp(src, "script") || !strcmp(src, "slurm");
}

static void set_run(struct proc *p, struct run *r)
{
	if (p->run == r)
		return;
	if (p->run) {
		/* Moving to another run: it no longer lives or holds memory here. */
		p->run->refs--;
		if (!p->exited && p->run->r.live)
			p->run->r.live--;
		p->run->r.rss_now_kb -= (int64_t)p->last_sample_rss;
		p->run->dirty = true;
	}
	p->run = r;
	p->row.run_id = r ? r->row.id : 0;
	if (r) {
		r->refs++;
		r->r.live++;
		r->r.rss_now_kb += (int64_t)p->last_sample_rss;
		rollup_start(&r->r, p->row.start_ns, p->epoch_offset_ns);
	}
}

static void set_step(struct proc *p, struct step *s)
{
	if (p->step == s)
		return;
	if (p->step) {
		p->step->refs--;
		if (!p->exited && p->step->r.live)
			p->step->r.live--;
		p->step->r.rss_now_kb -= (int64_t)p->last_sample_rss;
		p->step->dirty = true;
	}
	p->step = s;
	p->row.step_id = s ? s->id : 0;
	if (s) {
		s->refs++;
		s->r.live++;
		s->r.rss_now_kb += (int64_t)p->last_sample_rss;
		rollup_start(&s->r, p->row.start_ns, p->epoch_offset_ns);
		s->dirty = true;
	}
}

static struct step *find_step(struct run *r, const char *key)
{
	for (struct step *s = r->steps; s; s = s->next)
		if (!strcmp(s->key, key))
			return s;
	return NULL;
}

static struct step *new_step(struct correlator *c, struct run *r, const struct step_spec *spec,
			     struct proc *root)
{
	struct step *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->id = c->next_step_id++;
	s->run = r;
	copy_string(s->key, sizeof(s->key), spec->key);
	copy_string(s->name, sizeof(s->name), spec->name);
	copy_string(s->kind, sizeof(s->kind), spec->kind);
	s->named = spec->name[0] != '\0';
	s->root_process_id = root->row.id;
	s->root_pid = root->pid;
	s->root_start_ns = root->start_boot_ns;
	s->status = GROUP_RUNNING;
	copy_string(s->container_id, sizeof(s->container_id), root->row.container_id);
	cgroup_limits(c->cgroup_root ? c->cgroup_root : "/sys/fs/cgroup",
		      root->row.cgroup1_id ? cgroup_path_of(c, root->row.cgroup1_id, true) : NULL,
		      root->row.cgroup_id ? cgroup_path_of(c, root->row.cgroup_id, false) : NULL,
		      &s->memory_limit_kb, &s->cpu_limit);
	if (s->named && root->row.argv_json)
		s->signature = strdup(root->row.argv_json);
	copy_string(s->slurm_job, sizeof(s->slurm_job), root->row.slurm_job);
	copy_string(s->slurm_step, sizeof(s->slurm_step), root->row.slurm_step);
	s->dirty = true;
	s->next = r->steps;
	r->steps = s;
	r->dirty = true;
	return s;
}

static bool same_process(uint32_t pid, uint64_t start, const struct proc *p)
{
	return p && pid == p->pid &&
	       proc_same_start(start, true, p->start_boot_ns, p->start_coarse);
}

/* Programs a script run can be started from: a user at a shell, or a launcher. */
static bool interactive_parent(const struct proc *parent)
{
	static const char *const launchers[] = {"bash",	  "sh",	    "zsh",	    "dash",  "fish",
						"sudo",	  "su",	    "sshd",	    "login", "tmux",
						"screen", "tracer", "sshd-session", "ksh"};
	if (!parent || !parent->row.exe)
		return false;
	const char *base = strrchr(parent->row.exe, '/');
	base = base ? base + 1 : parent->row.exe;
	for (size_t i = 0; i < sizeof(launchers) / sizeof(*launchers); i++)
		if (!strcmp(base, launchers[i]))
			return true;
	return false;
}

/* Docker-mode Nextflow tasks run outside the launcher's tree: find them by work dir. */
static bool join_nextflow_task(struct correlator *c, struct proc *p)
{
	char key[96];

	if (!p->row.cwd || !nextflow_task_key(p->row.cwd, key, sizeof(key)))
		return false;
	for (struct run *r = c->runs; r; r = r->next) {
		struct step *s;
		if (strcmp(r->engine, "nextflow") != 0 || !(s = find_step(r, key)))
			continue;
		set_run(p, r);
		set_step(p, s);
		/* The task's container is the step's container. */
		if (!s->container_id[0] && p->row.container_id[0]) {
			copy_string(s->container_id, sizeof(s->container_id), p->row.container_id);
			s->dirty = true;
		}
		return true;
	}
	return false;
}

/* --- lifecycle ---------------------------------------------------------------------- */

void correlate_fork(struct correlator *c, struct proc *child, struct proc *parent)
{
	if (!parent)
		return;
	if (parent->run && !child->run)
		set_run(child, parent->run);
	if (parent->step)
		set_step(child, parent->step);
	child->row.helper = parent->row.helper;
	child->row.tool_id = parent->row.tool_id;
	memcpy(child->row.container_runtime, parent->row.container_runtime,
	       sizeof(child->row.container_runtime));
	memcpy(child->row.container_id, parent->row.container_id, sizeof(child->row.container_id));
	memcpy(child->row.pod_uid, parent->row.pod_uid, sizeof(child->row.pod_uid));
	memcpy(child->row.slurm_job, parent->row.slurm_job, sizeof(child->row.slurm_job));
	memcpy(child->row.slurm_step, parent->row.slurm_step, sizeof(child->row.slurm_step));
	memcpy(child->row.systemd_unit, parent->row.systemd_unit, sizeof(child->row.systemd_unit));
}

void correlate_join(struct correlator *c, struct proc *p, struct run *r)
{
	set_run(p, r);
}

void correlate_exec(struct correlator *c, struct proc *p, struct proc *parent, char *const *argv,
		    size_t argc, int64_t ts_ns)
{
	struct cgroup_context cg;
	struct tool_identity tool;
	struct process_view v = {0};
	char pipeline[PIPELINE_NAME_MAX];
	const struct engine *e;

	cgroup_context_of(c, &p->row, &cg);
	copy_string(p->row.container_runtime, sizeof(p->row.container_runtime), cg.runtime);
	copy_string(p->row.container_id, sizeof(p->row.container_id), cg.container_id);
	copy_string(p->row.pod_uid, sizeof(p->row.pod_uid), cg.pod_uid);
	copy_string(p->row.slurm_job, sizeof(p->row.slurm_job), cg.slurm_job);
	copy_string(p->row.slurm_step, sizeof(p->row.slurm_step), cg.slurm_step);
	copy_string(p->row.systemd_unit, sizeof(p->row.systemd_unit), cg.unit);

	tool_identify(p->row.exe, argv, argc, &tool);
	p->row.tool_id = tool_id(c, &tool);
	p->denied = tool_denied(&c->lists, tool.program);

	v.argv = argv;
	v.argc = argc;
	v.exe = p->row.exe;
	v.cwd = p->row.cwd;
	v.tool = &tool;
	v.cgroup = &cg;

	struct run *r = p->run;
	if (r && !weak_run(r) && (!r->engine[0] || !strcmp(r->engine, "script"))) {
		/* An explicit run learns its engine from what runs inside it: its
		 * command if that is a script, then any workflow engine the script
		 * starts (which then leaves the script's step). */
		e = engine_detect(&v, pipeline, sizeof(pipeline));
		if (!e && !r->engine[0] && r->has_command &&
		    same_process(r->command_pid, r->command_start_ns, p) &&
		    engine_script.is_run(&v, pipeline, sizeof(pipeline)))
			e = &engine_script;
		if (e) {
			copy_string(r->engine, sizeof(r->engine), e->name);
			r->engine_pid = p->pid;
			r->engine_start_ns = p->start_boot_ns;
			r->engine_process_id = p->row.id;
			if (!r->row.pipeline || r->pipeline_guessed) {
				free(r->row.pipeline);
				r->row.pipeline = strdup(pipeline);
				r->pipeline_id = pipeline_id(c, pipeline);
				r->pipeline_guessed = true;
			}
			if (p->step)
				set_step(p, NULL);
			r->dirty = true;
		}
	} else if (!c->explicit_only && (!r || weak_run(r))) {
		/* Stronger evidence wins over a run inherited from a script or a batch
		 * job: an engine starts its own run, a Slurm job's cgroup its job's run,
		 * a Nextflow task's work dir its task. */
		struct run *inherited = r;
		r = NULL;
		if ((e = engine_detect(&v, pipeline, sizeof(pipeline)))) {
			r = new_run(c, "engine", e->name, pipeline, p);
			c->engine_runs++;
		} else if (cg.slurm_job[0] &&
			   (!inherited || strcmp(inherited->slurm_job, cg.slurm_job) != 0)) {
			for (r = c->runs; r; r = r->next)
				if (!strcmp(r->slurm_job, cg.slurm_job))
					break;
			if (!r && (r = new_run(c, "slurm", "slurm", "slurm", p))) {
				copy_string(r->slurm_job, sizeof(r->slurm_job), cg.slurm_job);
				free(r->row.name);
				char name[64];
				snprintf(name, sizeof(name), "slurm-job-%s", cg.slurm_job);
				r->row.name = strdup(name);
				c->slurm_runs++;
			}
			e = NULL;
		} else if (!inherited && !p->denied && interactive_parent(parent) &&
			   engine_script.is_run(&v, pipeline, sizeof(pipeline))) {
			r = new_run(c, "script", "script", pipeline, p);
			e = &engine_script;
			c->script_runs++;
		} else if (join_nextflow_task(c, p)) {
			r = NULL;
		}
		if (r && p->step)
			set_step(p, NULL); /* it leaves the inherited run's step */
		if (r) {
			set_run(p, r);
			if (e) {
				r->engine_pid = p->pid;
				r->engine_start_ns = p->start_boot_ns;
				r->engine_process_id = p->row.id;
			}
		}
	}

	/* Steps, as the run's engine sees them. */
	bool wrapper = false;
	r = p->run;
	const struct engine *eng = r && r->engine[0] ? engine_by_name(r->engine) : NULL;
	if (eng) {
		struct step_spec spec = {0};
		v.parent_is_engine =
		    parent && same_process(r->engine_pid, r->engine_start_ns, parent);
		v.in_step = p->step != NULL;
		v.parent_argv_json = parent ? parent->row.argv_json : NULL;
		bool starts = eng->step(&v, r->step_seq + 1, &spec);
		if (spec.helper)
			p->row.helper = true;
		wrapper = spec.wrapper;
		if (starts && !same_process(r->engine_pid, r->engine_start_ns, p)) {
			struct step *s = find_step(r, spec.key);
			if (!s) {
				r->step_seq++;
				s = new_step(c, r, &spec, p);
			}
			if (s)
				set_step(p, s);
		}
	}
	/* A step the engine could not name is named after its main tool. */
	struct step *s = p->step;
	bool shell = tool.interpreter[0] && !strcmp(tool.program, tool.interpreter);
	bool earlier_sibling = s && s->named_by_tool && p->row.ppid == s->namer_ppid &&
			       p->row.proc_start_boot_ns < s->namer_fork_ns;
	if (s && (!s->named || earlier_sibling) && !p->row.helper && !shell && !wrapper &&
	    !p->denied && !tool_is_launcher(tool.program) && strcmp(tool.program, s->run->engine)) {
		copy_string(s->name, sizeof(s->name), tool.name);
		s->named = true;
		s->named_by_tool = true;
		s->namer_ppid = p->row.ppid;
		s->namer_fork_ns = p->row.proc_start_boot_ns;
		s->dirty = true;
		s->main_tool_id = p->row.tool_id;
		free(s->signature);
		s->signature = p->row.argv_json ? strdup(p->row.argv_json) : NULL;
		if (c->insight)
			insight_step_named(c->insight, s, ts_ns);
	}
	p->plumbing = shell || wrapper || p->row.helper || tool_is_launcher(tool.program);
}

static enum group_status status_of(const struct process_row *row)
{
	if (row->has_signal)
		return GROUP_KILLED;
	return row->has_exit_code && row->exit_code != 0 ? GROUP_FAILED : GROUP_OK;
}

void correlate_exit(struct correlator *c, struct proc *p)
{
	const struct process_row *row = &p->row;
	bool failed = (row->has_exit_code && row->exit_code != 0) || row->has_signal;
	struct step *s = p->step;
	struct run *r = p->run;

	if (s) {
		if (failed && !row->helper && !p->plumbing && !s->failed_process_id) {
			char prog[64];
			const char *exe = row->exe ? strrchr(row->exe, '/') : NULL;
			copy_string(prog, sizeof(prog),
				    exe ? exe + 1 : (row->exe ? row->exe : "?"));
			s->failed_process_id = row->id;
			s->failed_tool_id = row->tool_id;
			s->failed_has_signal = row->has_signal;
			s->failed_code = row->has_signal ? row->signal : row->exit_code;
			copy_string(s->failed_tool, sizeof(s->failed_tool), prog);
		}
		rollup_add_process(&s->r, row, p->epoch_offset_ns, failed, !p->had_children);
		s->r.rss_now_kb -= (int64_t)p->last_sample_rss;
		if (s->r.live)
			s->r.live--;
		if (same_process(s->root_pid, s->root_start_ns, p)) {
			s->status = status_of(row);
			s->has_exit_code = row->has_exit_code;
			s->exit_code = row->exit_code;
			s->has_signal = row->has_signal;
			s->signal = row->signal;
		}
		if (s->status == GROUP_RUNNING && s->r.live == 0)
			s->status = GROUP_OK; /* the root exited earlier, unseen */
		s->dirty = true;
		if (s->status != GROUP_RUNNING && c->insight)
			insight_step_end(c->insight, s, row->end_ns);
	}
	if (r) {
		rollup_add_process(&r->r, row, p->epoch_offset_ns, failed, !p->had_children);
		r->r.rss_now_kb -= (int64_t)p->last_sample_rss;
		if (r->r.live)
			r->r.live--;
		bool engine_ended =
		    r->engine_pid && same_process(r->engine_pid, r->engine_start_ns, p);
		if (engine_ended && strcmp(r->row.source ? r->row.source : "", "explicit") != 0) {
			r->row.end_ns = row->end_ns;
			r->row.has_exit_code = row->has_exit_code;
			r->row.exit_code = row->exit_code;
			r->row.has_signal = row->has_signal;
			r->row.signal = row->signal;
			r->status = status_of(row);
			r->finished = true;
		}
		if (!strcmp(r->engine, "slurm") && r->r.live == 0) {
			r->row.end_ns = r->r.end_ns;
			r->status = r->r.failed ? GROUP_FAILED : GROUP_OK;
			r->finished = true;
		}
		r->dirty = true;
	}
}

void correlate_sample(struct correlator *c, struct proc *p, uint64_t boot_ns, uint64_t rss_kb,
		      uint64_t cpu_ns)
{
	int64_t ts_ns = (int64_t)boot_ns;
	int64_t delta = (int64_t)rss_kb - (int64_t)p->last_sample_rss;
	double cores = 0;

	if (p->last_sample_ts && ts_ns > p->last_sample_ts && cpu_ns >= p->last_sample_cpu)
		cores = (double)(cpu_ns - p->last_sample_cpu) / (double)(ts_ns - p->last_sample_ts);
	p->last_sample_ts = ts_ns;
	p->last_sample_cpu = cpu_ns;
	p->last_sample_rss = rss_kb;
	if (p->step) {
		rollup_sample(&p->step->r, ts_ns, delta, cores);
		p->step->dirty = true;
	}
	if (p->run) {
		rollup_sample(&p->run->r, ts_ns, delta, cores);
		p->run->dirty = true;
	}
}

bool correlate_recordable(const struct proc *p)
{
	return !p->denied;
}

void correlate_release(struct proc *p)
{
	if (p->step)
		p->step->refs--;
	if (p->run)
		p->run->refs--;
	p->step = NULL;
	p->run = NULL;
}

/* --- writing ------------------------------------------------------------------------ */

static void fill_run_row(struct run *r)
{
	uint32_t steps = 0;

	for (struct step *s = r->steps; s; s = s->next)
		steps++;
	r->row.pipeline_id = r->pipeline_id;
	r->row.engine = r->engine[0] ? r->engine : NULL;
	r->row.engine_process_id = r->engine_process_id;
	r->row.status = group_status_name(r->status);
	r->row.steps = steps;
	rollup_totals(&r->r, &r->row.totals);
	if (!r->row.start_ns)
		r->row.start_ns = r->r.start_ns;
}

static void fill_step_row(const struct step *s, struct step_row *row)
{
	*row = (struct step_row){
	    .id = s->id,
	    .run_id = s->run->row.id,
	    .key = s->key,
	    .name = s->name,
	    .kind = s->kind,
	    .status = group_status_name(s->status),
	    .start_ns = s->r.start_ns,
	    .end_ns = s->status != GROUP_RUNNING ? s->r.end_ns : 0,
	    .has_exit_code = s->has_exit_code,
	    .has_signal = s->has_signal,
	    .exit_code = s->exit_code,
	    .signal = s->signal,
	    .root_process_id = s->root_process_id,
	    .container_id = s->container_id,
	    .slurm_job = s->slurm_job,
	    .slurm_step = s->slurm_step,
	    .character = s->character,
	    .memory_limit_kb = s->memory_limit_kb,
	    .cpu_limit = s->cpu_limit,
	    .signature = s->signature,
	};
	rollup_totals(&s->r, &row->totals);
}

int correlate_write(struct correlator *c)
{
	for (size_t i = 0; i < c->n_pipelines; i++)
		if (!c->pipelines[i].written &&
		    store_put_pipeline(c->store, c->pipelines[i].id, c->pipelines[i].name,
				       (int64_t)now_realtime_ns()) != 0)
			return -1;
	for (size_t i = 0; i < c->n_tools; i++) {
		struct tool_identity t;
		if (c->tools[i].written)
			continue;
		/* The program is the name's first word ("samtools sort" -> samtools). */
		copy_string(t.program, sizeof(t.program), c->tools[i].name);
		char *space = strchr(t.program, ' ');
		if (space)
			*space = '\0';
		if (store_put_tool(c->store, c->tools[i].id, c->tools[i].name, t.program,
				   tool_category(&c->lists, t.program)) != 0)
			return -1;
	}
	for (struct run *r = c->runs; r; r = r->next) {
		for (struct step *s = r->steps; s; s = s->next) {
			if (!s->dirty)
				continue;
			s->character = insight_character(&s->r);
			struct step_row row;
			fill_step_row(s, &row);
			if (store_put_step(c->store, &row) != 0 ||
			    (s->status != GROUP_RUNNING &&
			     store_ship(c->store, OUTBOX_STEPS, s->id, 0, NULL) != 0))
				return -1;
		}
		if (r->dirty) {
			fill_run_row(r);
			if (store_put_run(c->store, &r->row) != 0 ||
			    (r->status != GROUP_RUNNING &&
			     store_ship(c->store, OUTBOX_RUNS, r->row.id, 0, NULL) != 0))
				return -1;
		}
	}
	return 0;
}

bool correlate_has_pending(const struct correlator *c)
{
	for (size_t i = 0; i < c->n_pipelines; i++)
		if (!c->pipelines[i].written)
			return true;
	for (size_t i = 0; i < c->n_tools; i++)
		if (!c->tools[i].written)
			return true;
	for (struct run *r = c->runs; r; r = r->next) {
		if (r->dirty)
			return true;
		for (struct step *s = r->steps; s; s = s->next)
			if (s->dirty)
				return true;
	}
	return false;
}

static void free_run(struct run *r)
{
	for (struct step *s = r->steps; s;) {
		struct step *next = s->next;
		free(s->signature);
		free(s);
		s = next;
	}
	free(r->row.name);
	free(r->row.pipeline);
	free(r);
}

void correlate_committed(struct correlator *c)
{
	for (size_t i = 0; i < c->n_pipelines; i++)
		c->pipelines[i].written = true;
	for (size_t i = 0; i < c->n_tools; i++)
		c->tools[i].written = true;
	for (struct run **link = &c->runs; *link;) {
		struct run *r = *link;
		r->dirty = false;
		for (struct step *s = r->steps; s; s = s->next)
			s->dirty = false;
		if (r->finished && r->refs == 0) {
			*link = r->next;
			free_run(r);
			continue;
		}
		link = &r->next;
	}
}

/* --- setup -------------------------------------------------------------------------- */

int correlator_init(struct correlator *c, struct store *store, const char *allow_path,
		    const char *deny_path)
{
	char err[512];
	sqlite3_stmt *st;
	uint8_t boot[BOOT_ID_LEN];
	char boot_hex[33] = "";

	memset(c, 0, sizeof(*c));
	c->store = store;
	c->next_tool_id = store_max_id(store, "tools") + 1;
	c->next_pipeline_id = store_max_id(store, "pipelines") + 1;
	c->next_step_id = store_max_id(store, "steps") + 1;
	load_names(c, "SELECT id, name FROM tools", &c->tools, &c->n_tools, &c->cap_tools);
	load_names(c, "SELECT id, name FROM pipelines", &c->pipelines, &c->n_pipelines,
		   &c->cap_pipelines);
	if (allow_path || deny_path) {
		if (tool_lists_load(&c->lists, allow_path, deny_path, err, sizeof(err)) != 0)
			log_warn("tool lists not loaded: %s", err);
		else
			log_info("tool lists: %zu known tools, %zu ignored programs",
				 c->lists.n_allow, c->lists.n_deny);
	}
	/* Cgroups of this boot the database already knows (an aggregator restart). */
	if (read_boot_id(boot) == 0)
		format_hex(boot, sizeof(boot), boot_hex, sizeof(boot_hex));
	if (sqlite3_prepare_v2(
		store->db,
		"SELECT id, controllers = 'memory', path FROM cgroups WHERE boot_id = ? "
		"AND (hierarchy = 0 OR controllers = 'memory')",
		-1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, boot_hex, -1, SQLITE_STATIC);
		while (sqlite3_step(st) == SQLITE_ROW)
			correlate_cgroup(c, (uint64_t)sqlite3_column_int64(st, 0),
					 sqlite3_column_int(st, 1) != 0,
					 (const char *)sqlite3_column_text(st, 2));
		sqlite3_finalize(st);
	}
	return 0;
}

int correlator_reload(struct correlator *c)
{
	char err[512];

	if (tool_lists_load(&c->lists, c->lists.allow_path[0] ? c->lists.allow_path : NULL,
			    c->lists.deny_path[0] ? c->lists.deny_path : NULL, err,
			    sizeof(err)) != 0) {
		log_error("reload failed, keeping the previous tool lists: %s", err);
		return -1;
	}
	log_info("tool lists reloaded: %zu known tools, %zu ignored programs", c->lists.n_allow,
		 c->lists.n_deny);
	/* Categories may have changed: rewrite every tool row with the new lists. */
	for (size_t i = 0; i < c->n_tools; i++)
		c->tools[i].written = false;
	return 0;
}

void correlator_free(struct correlator *c)
{
	for (size_t i = 0; i < c->n_tools; i++)
		free(c->tools[i].name);
	for (size_t i = 0; i < c->n_pipelines; i++)
		free(c->pipelines[i].name);
	free(c->tools);
	free(c->pipelines);
	for (size_t b = 0; b < 1024; b++) {
		for (struct cgroup_entry *e = c->cgroups[b]; e;) {
			struct cgroup_entry *next = e->next;
			free(e->path);
			free(e);
			e = next;
		}
	}
	for (struct run *r = c->runs; r;) {
		struct run *next = r->next;
		free_run(r);
		r = next;
	}
	tool_lists_free(&c->lists);
	memset(c, 0, sizeof(*c));
}
