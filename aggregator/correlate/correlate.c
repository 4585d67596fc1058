/*
 * Which run and step a process belongs to, decided as it forks, execs, exits
 * and is sampled. A process inherits its parent's run and step at fork; at
 * exec, stronger evidence (an engine, a Slurm job's cgroup, a Nextflow task's
 * work dir) can move it into a run or step of its own.
 */
#include "aggregator/correlate/internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/insight/insight.h"
#include "common/fileutil.h"
#include "common/strutil.h"
#include "common/taskdir.h"

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
			step_mark_dirty(s);
		}
		return true;
	}
	return false;
}

/* The run's next step, as the engine's spec says, rooted at p. */
static void begin_step(struct correlator *c, struct run *r, const struct step_spec *spec,
		       struct proc *p)
{
	r->step_seq++;
	struct step *s = new_step(c, r, spec, p);
	if (s)
		set_step(p, s);
}

/* A child of an engine whose steps start at fork (a script) starts a step now. */
static void step_at_fork(struct correlator *c, struct proc *child, struct proc *parent)
{
	struct run *r = child->in.run;
	const struct engine *eng = r && r->engine[0] ? engine_by_name(r->engine) : NULL;
	struct process_view v = {.parent_is_engine = true};
	struct step_spec spec = {0};

	if (!eng || !eng->steps_at_fork || child->in.step ||
	    !same_process(r->engine_pid, r->engine_start_boot_ns, parent) ||
	    !eng->step(&v, r->step_seq + 1, &spec))
		return;
	begin_step(c, r, &spec, child);
}

/* Its container and job context, from the cgroups in its row (below). */
static void set_cgroup_context(struct correlator *c, struct proc *p, struct cgroup_context *cg);

void correlate_fork(struct correlator *c, struct proc *child, struct proc *parent)
{
	if (!parent || !correlate_in_scope(c, &child->row))
		return;
	if (parent->in.run && !child->in.run)
		set_run(child, parent->in.run);
	if (parent->in.step)
		set_step(child, parent->in.step);
	step_at_fork(c, child, parent);
	child->row.helper = parent->row.helper;
	child->in.noise = parent->in.noise;
	child->row.tool_id = parent->row.tool_id;
	/* A fork child runs its parent's program: its CPU is that tool's work (a
	 * program's forked workers name its step). A shell's, a script's or a
	 * launcher's fork is a subshell or the start of a command: not a tool's. */
	if (!parent->in.plumbing && !parent->in.script && !parent->in.launcher)
		child->in.tool_name = parent->in.tool_name;
	if (child->row.cgroup_id != parent->row.cgroup_id ||
	    child->row.cgroup1_id != parent->row.cgroup1_id) {
		/* The parent moved since its exec (a scope, a job step): the child's own context.
		 */
		struct cgroup_context cg;
		set_cgroup_context(c, child, &cg);
		return;
	}
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

/* Its container and job context, from the cgroups in its row. */
static void set_cgroup_context(struct correlator *c, struct proc *p, struct cgroup_context *cg)
{
	cgroup_context_of(c, &p->row, cg);
	copy_string(p->row.container_runtime, sizeof(p->row.container_runtime), cg->runtime);
	copy_string(p->row.container_id, sizeof(p->row.container_id), cg->container_id);
	copy_string(p->row.pod_uid, sizeof(p->row.pod_uid), cg->pod_uid);
	copy_string(p->row.slurm_job, sizeof(p->row.slurm_job), cg->slurm_job);
	copy_string(p->row.slurm_step, sizeof(p->row.slurm_step), cg->slurm_step);
	copy_string(p->row.systemd_unit, sizeof(p->row.systemd_unit), cg->unit);
}

/* What the exec'ed program is: its container and job context, its tool. */
static void identify(struct correlator *c, struct proc *p, char *const *argv, size_t argc,
		     struct cgroup_context *cg, struct tool_identity *tool)
{
	set_cgroup_context(c, p, cg);
	tool_identify(p->row.exe, argv, argc, tool);
	p->in.tool_name = NULL;
	p->row.tool_id = tool_id(c, tool, &p->in.tool_name);
	/* System noise is the system's: a user's own program of that name is recorded. */
	p->in.denied = tool_denied(&c->lists, tool->program) && path_root_only(p->row.exe);
}

/* The process now runs the engine (or script) of run r. */
static void mark_engine(struct run *r, const struct proc *p)
{
	r->engine_pid = p->pid;
	r->engine_start_boot_ns = p->start_boot_ns;
	r->engine_process_id = p->row.id;
}

/*
 * The command's own program: the command itself, or what a launcher given as
 * the command starts as its child (`tracer run -- timeout 3h ./pipeline.sh`,
 * `/usr/bin/time -v make -j4`, `flock lock ./run.sh`). Launchers that exec
 * (env, nice, nohup) leave the command's process to it anyway.
 */
static bool is_the_command(const struct run *r, const struct proc *p, const struct proc *parent)
{
	if (same_process(r->tracer_run.command_pid, r->tracer_run.command_start_boot_ns, p))
		return true;
	return parent && parent->in.launcher &&
	       same_process(r->tracer_run.command_pid, r->tracer_run.command_start_boot_ns, parent);
}

/*
 * An explicit run learns its engine from what runs inside it: its command if
 * that is a script or make, then any workflow engine the script starts (which
 * then leaves the script's step).
 */
static void learn_engine(struct correlator *c, struct run *r, struct proc *p,
			 const struct proc *parent, const struct process_view *v)
{
	char pipeline[PIPELINE_NAME_MAX];
	const struct engine *e = engine_detect(v, pipeline, sizeof(pipeline));

	bool command = !r->engine[0] && r->tracer_run.has_command && is_the_command(r, p, parent);
	if (!e && command && engine_script.is_run(v, pipeline, sizeof(pipeline)))
		e = &engine_script;
	else if (!e && command && engine_make.is_run(v, pipeline, sizeof(pipeline)))
		e = &engine_make;
	if (!e)
		return;
	copy_string(r->engine, sizeof(r->engine), e->name);
	mark_engine(r, p);
	if (!r->row.pipeline || r->pipeline_guessed) {
		free(r->row.pipeline);
		r->row.pipeline = strdup(pipeline);
		r->pipeline_id = pipeline_id(c, pipeline);
		r->pipeline_guessed = true;
	}
	if (p->in.step)
		set_step(p, NULL);
	r->dirty = true;
}

/* The run of a Slurm job's cgroup: the one already seen, or a new one. */
static struct run *slurm_job_run(struct correlator *c, struct proc *p, const char *job)
{
	struct run *r;

	for (r = c->runs; r; r = r->next)
		if (!strcmp(r->slurm_job, job))
			return r;
	r = new_run(c, RUN_SLURM, "slurm", "slurm", p);
	if (r) {
		char name[64];
		copy_string(r->slurm_job, sizeof(r->slurm_job), job);
		free(r->row.name);
		snprintf(name, sizeof(name), "slurm-job-%s", job);
		r->row.name = strdup(name);
		c->slurm_runs++;
	}
	return r;
}

/*
 * Stronger evidence wins over a run inherited from a script or a batch job: an
 * engine starts its own run, a Slurm job's cgroup its job's run, a Nextflow
 * task's work dir its task. In order of strength; NULL: none (or the process
 * joined a Nextflow task, which sets its run and step itself).
 */
static struct run *stronger_run(struct correlator *c, struct proc *p, struct proc *parent,
				const struct process_view *v, const struct engine **engine)
{
	char pipeline[PIPELINE_NAME_MAX];
	struct run *inherited = p->in.run;
	struct run *r;

	*engine = engine_detect(v, pipeline, sizeof(pipeline));
	if (*engine) {
		c->engine_runs++;
		return new_run(c, RUN_ENGINE, (*engine)->name, pipeline, p);
	}
	const char *job = v->cgroup->slurm_job;
	if (job[0] && (!inherited || strcmp(inherited->slurm_job, job) != 0))
		return slurm_job_run(c, p, job);
	/* A script already running when the daemons started (their snapshot) is no
	 * run: its start and what it did before are unknown, and a CI script or a
	 * login's wrapper would take everything started under it for its steps. */
	if (!inherited && !p->in.denied && !p->row.from_snapshot && script_starts_run(parent, v) &&
	    engine_script.is_run(v, pipeline, sizeof(pipeline))) {
		*engine = &engine_script;
		r = new_run(c, RUN_SCRIPT, "script", pipeline, p);
		c->script_runs++;
		return r;
	}
	join_nextflow_task(c, p);
	return NULL;
}

static void find_run(struct correlator *c, struct proc *p, struct proc *parent,
		     const struct process_view *v)
{
	struct run *r = p->in.run;
	const struct engine *e = NULL;

	if (batch_join(c, p, v))
		return;
	if (r && !weak_run(r) && (!r->engine[0] || !strcmp(r->engine, "script"))) {
		learn_engine(c, r, p, parent, v);
		return;
	}
	if (c->explicit_only || (r && !weak_run(r)))
		return;
	r = stronger_run(c, p, parent, v, &e);
	if (!r)
		return;
	if (p->in.step)
		set_step(p, NULL); /* it leaves the inherited run's step */
	set_run(p, r);
	if (e)
		mark_engine(r, p);
}

/* Steps, as the run's engine sees them. Returns whether p is the engine's task wrapper. */
static bool find_step_of_engine(struct correlator *c, struct proc *p, struct proc *parent,
				struct process_view *v)
{
	struct run *r = p->in.run;
	const struct engine *eng = r && r->engine[0] ? engine_by_name(r->engine) : NULL;
	struct step_spec spec = {0};

	if (!eng)
		return false;
	v->parent_is_engine =
	    parent && same_process(r->engine_pid, r->engine_start_boot_ns, parent);
	v->in_step = p->in.step != NULL;
	v->parent_argv_json = parent ? parent->row.argv_json : NULL;
	bool starts = eng->step(v, r->step_seq + 1, &spec);
	if (spec.helper)
		p->row.helper = true;
	if (starts && !same_process(r->engine_pid, r->engine_start_boot_ns, p)) {
		struct step *s = find_step(r, spec.key);
		if (s)
			set_step(p, s);
		else
			begin_step(c, r, &spec, p);
	}
	return spec.wrapper;
}

/*
 * A script that execs a tool at its end (`exec python3 final.py`; a pyenv or
 * conda shim run as the command, which execs the real interpreter) hands its
 * process to that tool: the tool is a step of its own, where its work, failure
 * and sizing can be read, not the script's plumbing outside every step.
 */
static void script_became_tool(struct correlator *c, struct proc *p, bool plumbing,
			       const struct tool_identity *tool)
{
	struct run *r = p->in.run;
	struct process_view v = {.parent_is_engine = true};
	struct step_spec spec = {0};

	if (!r || strcmp(r->engine, "script") || p->in.step || plumbing ||
	    tool_is_shell(tool->interpreter) ||
	    !same_process(r->engine_pid, r->engine_start_boot_ns, p) ||
	    !engine_script.step(&v, r->step_seq + 1, &spec))
		return;
	begin_step(c, r, &spec, p);
}

/*
 * The process that named its step after a version manager's shim (pyenv's,
 * rbenv's `python3`, a script) now runs the program the shim stood for
 * (python3.11, running align.py): the step is that program's.
 */
static bool shim_became_its_tool(const struct step *s, const struct proc *p)
{
	const char *exe = p->row.exe ? strrchr(p->row.exe, '/') : NULL;
	size_t n = strlen(s->name);

	return s->naming.named_by_tool && p->pid == s->naming.namer_pid &&
	       p->row.proc_start_boot_ns == s->naming.namer_fork_boot_ns && exe && n &&
	       strncmp(exe + 1, s->name, n) == 0 && strcmp(exe + 1, s->name) != 0;
}

/* A step the engine could not name is named after its main tool. */
static void name_step_after_tool(struct correlator *c, struct proc *p,
				 const struct tool_identity *tool, bool not_a_tool, int64_t ts_ns)
{
	struct step *s = p->in.step;
	bool earlier_sibling = s && s->naming.named_by_tool &&
			       p->row.ppid == s->naming.namer_ppid &&
			       p->row.proc_start_boot_ns < s->naming.namer_fork_boot_ns;

	/* A script step is named by the work its tools did (step_work.c), by its
	 * latest tool while that is too little to tell (a long gzip after `seq`). */
	bool by_work = s && !strcmp(s->kind, "script-step") && s->work.n_tools;
	bool by_exec = by_work && step_named_by_exec(s);
	if (!s || (by_work && !by_exec) ||
	    (!by_exec && s->naming.named && !earlier_sibling && !shim_became_its_tool(s, p)) ||
	    not_a_tool || p->row.helper || p->in.denied || !strcmp(tool->program, s->run->engine))
		return;
	copy_string(s->name, sizeof(s->name), tool->name);
	s->naming.named = true;
	s->naming.named_by_tool = true;
	s->naming.namer_pid = p->pid;
	s->naming.namer_ppid = p->row.ppid;
	s->naming.namer_fork_boot_ns = p->row.proc_start_boot_ns;
	step_mark_dirty(s);
	s->main_tool_id = p->row.tool_id;
	free(s->signature);
	s->signature = p->row.argv_json ? strdup(p->row.argv_json) : NULL;
	if (c->insight)
		insight_step_named(c->insight, s, ts_ns);
}

void correlate_exec(struct correlator *c, struct proc *p, struct proc *parent, char *const *argv,
		    size_t argc, int64_t ts_ns)
{
	struct cgroup_context cg;
	struct tool_identity tool;
	struct process_view v = {0};

	if (!correlate_in_scope(c, &p->row)) {
		/* Outside the recorded subtree: in no run, and no run of its own. */
		set_step(p, NULL);
		set_run(p, NULL);
		return;
	}
	identify(c, p, argv, argc, &cg, &tool);
	/* A step started at its root's fork learns where it runs at the root's exec,
	 * which sees the cgroup the root moved to (a container, `echo $$ > cgroup.procs`). */
	struct step *own = p->in.step;
	if (own && same_process(own->root_pid, own->root_start_boot_ns, p)) {
		step_where(c, own, p);
		/* A subshell exec'ing its last command in place has no command line of its own. */
		if (!p->life.had_children)
			step_note_command(own, argv, argc);
	}
	v.argv = argv;
	v.argc = argc;
	v.exe = p->row.exe;
	v.cwd = p->row.cwd;
	v.tool = &tool;
	v.cgroup = &cg;
	/* Containers: their CLI is kept, their processes join the CLI's run (containers.c). */
	bool container_cli = containers_cli_exec(c, p, argv, argc);
	if (container_cli && p->in.step)
		p->in.step->linked = true; /* its container joins the step: no helper */
	containers_exec(c, p, argv, argc, ts_ns);
	toil_found_leader(c, p, parent, &v);
	find_run(c, p, parent, &v);
	noise_after_exec(p, parent);
	batch_note_job_process(c, p, tool.program, argv, argc);
	bool wrapper = find_step_of_engine(c, p, parent, &v);
	bool shell = tool.interpreter[0] && !strcmp(tool.program, tool.interpreter);
	bool launcher = tool_is_launcher(tool.program);
	script_became_tool(c, p, shell || wrapper || launcher || p->row.helper, &tool);
	name_step_after_tool(c, p, &tool, shell || wrapper || launcher || container_cli, ts_ns);
	p->in.plumbing = shell || wrapper || p->row.helper || launcher || container_cli;
	p->in.launcher = launcher;
	p->in.script = !shell && tool_is_shell(tool.interpreter);
	batch_note_submitter(c, p, tool.program, argv, argc);
}

/* p went on to its next program, or ended well: its children's failures were handled. */
static void went_on(struct proc *p)
{
	if (p->in.step)
		failed_tool_went_on(&p->in.step->failed, &p->in.step->last_failed, p->pid,
				    p->start_boot_ns);
	if (p->in.run)
		failed_tool_went_on(&p->in.run->failed, &p->in.run->last_failed, p->pid,
				    p->start_boot_ns);
}

void correlate_image_end(struct correlator *c, struct proc *p, const struct process_row *image)
{
	bool leaf = !p->life.had_children;

	went_on(p);
	if (p->in.step) {
		rollup_add_image(&p->in.step->r, image, p->life.epoch_offset_ns, leaf);
		/* An image that handed its process to the next program (a version
		 * manager's shim, `pyenv exec`) did no work the step is named by. */
		step_name_by_work(p->in.step, false);
		step_mark_dirty(p->in.step);
	}
	if (p->in.run) {
		rollup_add_image(&p->in.run->r, image, p->life.epoch_offset_ns, leaf);
		p->in.run->dirty = true;
	}
}

void correlate_exit_tail(struct correlator *c, struct proc *p, int64_t cpu_ns)
{
	if (p->in.step) {
		rollup_add_cpu(&p->in.step->r, cpu_ns);
		step_work_tail(p->in.step, p, cpu_ns);
		step_mark_dirty(p->in.step);
	}
	if (p->in.run) {
		rollup_add_cpu(&p->in.run->r, cpu_ns);
		p->in.run->dirty = true;
	}
}

void correlate_exit(struct correlator *c, struct proc *p)
{
	const struct process_row *row = &p->row;
	/* A producer ended by SIGPIPE: its reader stopped reading (`| head`), not a failure. */
	bool failed = (row->has_exit_code && row->exit_code != 0) ||
		      (row->has_signal && row->signal != SIGPIPE);

	if (row->has_exit_code && row->exit_code == 0)
		went_on(p);
	containers_exit(c, p);
	if (p->in.step)
		correlate_step_exit(c, p->in.step, p, failed);
	if (p->in.run)
		correlate_run_exit(c, p->in.run, p, failed);
	batch_submitter_exit(c, p);
}

void correlate_sample(struct correlator *c, struct proc *p, uint64_t boot_ns, uint64_t rss_kb,
		      uint64_t cpu_ns)
{
	int64_t ts_ns = (int64_t)boot_ns;
	int64_t delta = (int64_t)rss_kb - (int64_t)p->in.last_sample_rss;
	double cores = 0;

	if (p->in.last_sample_boot_ns && ts_ns > p->in.last_sample_boot_ns &&
	    cpu_ns >= p->in.last_sample_cpu)
		cores = (double)(cpu_ns - p->in.last_sample_cpu) /
			(double)(ts_ns - p->in.last_sample_boot_ns);
	p->in.last_sample_boot_ns = ts_ns;
	p->in.last_sample_cpu = cpu_ns;
	p->in.last_sample_rss = rss_kb;
	if (p->in.step) {
		rollup_sample(&p->in.step->r, ts_ns, delta, cores);
		step_mark_dirty(p->in.step);
	}
	if (p->in.run) {
		rollup_sample(&p->in.run->r, ts_ns, delta, cores);
		p->in.run->dirty = true;
	}
}

bool correlate_recordable(const struct proc *p)
{
	return !p->in.denied || p->in.noise;
}

void correlate_release(struct proc *p)
{
	containers_release(p);
	if (p->in.step)
		p->in.step->refs--;
	if (p->in.run)
		p->in.run->refs--;
	p->in.step = NULL;
	p->in.run = NULL;
}
