/*
 * Batch jobs are part of the run and step that submitted them. A submitter
 * (sbatch, srun, salloc, qsub, bsub) seen in a run is kept, waiting, with what
 * its argv and cwd say; the first process of a job on this host (the job id
 * from its cgroup path) is matched against the waiting submissions by uid,
 * time (after its submitter started), work dir (its cwd), the batch step for
 * sbatch and a job step for srun/salloc, and what the engine inside shows
 * (Snakemake's jobscript directory and rule). One candidate: linked. Several
 * in one step, or the same rule's in one run (Slurm starts them in submission
 * order): the earliest, recorded as `ordered`. Several runs, or steps of one
 * run that the job's first process cannot tell apart: the run (if one) now,
 * the step when a later process of the job tells it; else `ambiguous`, never a
 * guess. Submitters end long before their jobs start, so a waiting submission
 * keeps its run in memory.
 */
#include "aggregator/correlate/batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/correlate/internal.h"
#include "aggregator/store/batch.h"
#include "common/log.h"
#include "common/strutil.h"
#include "common/taskdir.h"

/* Bounds: the oldest waiting submission or job record is let go beyond these. */
#define MAX_WAITING 2048
#define MAX_JOBS 2048

struct batch_sub {
	struct batch_sub *next;
	int64_t id; /* the submitter's process row */
	struct run *run;
	struct step *step;
	uint32_t uid, pid;
	uint64_t start_boot_ns;
	int64_t submit_ns;
	struct batch_submit spec;
	char *cwd;
	int jobs_left; /* -1: any number (an array we cannot count) */
	unsigned jobs;
	bool waiting, dirty;
};

struct batch_job {
	struct batch_job *next, *hash_next;
	char scheduler[16];
	char job[64];
	struct run *run; /* counted reference while the record lives */
	struct step *step;
	int64_t sub_id;	    /* the submission's process row; 0: none */
	int64_t own_run_id; /* not linked: the job's own run */
	const char *link;   /* linked, ordered, ambiguous, unmatched */
	unsigned candidates;
	bool step_pending; /* run known, step not yet */
	int64_t first_process_id, first_ns, queue_wait_ns;
	bool has_wait;
	char cwd[BATCH_PATH_MAX];
	struct batch_job_hint hint;
	bool dirty;
};

#define JOB_BUCKETS 512

struct batch_state {
	struct batch_sub *subs; /* newest first; waiting and written-pending ones */
	struct batch_job *jobs;
	/* Every exec in a job looks its job up: by a hash of the id, not a scan of 2048. */
	struct batch_job *by_hash[JOB_BUCKETS];
	size_t n_waiting, n_jobs;
	size_t n_other; /* waiting PBS and LSF submissions: their jobs' cgroups are looked at */
};

static struct batch_state *state(struct correlator *c)
{
	if (!c->batch)
		c->batch = calloc(1, sizeof(*c->batch));
	return c->batch;
}

static void stop_waiting(struct batch_state *b, struct batch_sub *s)
{
	if (!s || !s->waiting)
		return;
	s->waiting = false;
	s->run->refs--;
	b->n_waiting--;
	if (strcmp(s->spec.scheduler, "slurm") != 0)
		b->n_other--;
}

void batch_note_submitter(struct correlator *c, struct proc *p, const char *program,
			  char *const *argv, size_t argc)
{
	struct batch_submit spec;
	struct batch_state *b;

	if (!p->in.run || p->in.denied ||
	    !batch_submit_parse(program, argv, argc, p->row.cwd, &spec) || !(b = state(c)))
		return;
	/* srun inside a job (a batch script's, an allocation's) runs a step of that job. */
	if (p->row.slurm_job[0] && strcmp(spec.submitter, "sbatch") != 0)
		return;
	struct batch_sub *s = calloc(1, sizeof(*s));
	if (!s)
		return;
	s->id = p->row.id;
	s->run = p->in.run;
	s->step = p->in.step;
	if (s->step)
		s->step->linked = true; /* a quick `qsub` is no helper: its job joins the step */
	s->uid = p->row.uid;
	s->pid = p->pid;
	s->start_boot_ns = p->row.proc_start_boot_ns;
	s->submit_ns = p->row.start_epoch_ns;
	s->spec = spec;
	s->cwd = p->row.cwd ? strdup(p->row.cwd) : NULL;
	s->jobs_left = spec.array_tasks > 0 ? spec.array_tasks : -1;
	/* Work sent off the host (AWS Batch) never comes back here: recorded, not awaited. */
	s->waiting = strcmp(spec.scheduler, "aws-batch") != 0;
	s->dirty = true;
	if (s->waiting) {
		s->run->refs++;
		b->n_waiting++;
		b->n_other += strcmp(spec.scheduler, "slurm") != 0;
	}
	s->next = b->subs;
	b->subs = s;
	if (b->n_waiting > MAX_WAITING) {
		struct batch_sub *oldest = NULL;
		for (struct batch_sub *t = b->subs; t; t = t->next)
			if (t->waiting)
				oldest = t;
		stop_waiting(b, oldest);
	}
}

void batch_submitter_exit(struct correlator *c, const struct proc *p)
{
	struct batch_state *b = c->batch;

	const char *tool = p->in.tool_name;
	char program[16];

	if (!b || !b->n_waiting || !tool)
		return;
	/* Only a submitter's exit matters: its program is the first word of its tool. */
	snprintf(program, sizeof(program), "%.*s", (int)strcspn(tool, " "), tool);
	if (!batch_is_submitter(program))
		return;
	/* A submitter that waits (srun, salloc, sbatch --wait) saw its job start before
	 * it ended; one that failed submitted nothing (a refused sbatch). */
	bool failed = p->row.has_signal || (p->row.has_exit_code && p->row.exit_code != 0);
	for (struct batch_sub *s = b->subs; s; s = s->next)
		if (s->waiting && s->id == p->row.id && (s->spec.waits || (failed && !s->jobs)))
			stop_waiting(b, s);
}

static struct batch_job **bucket(struct batch_state *b, const char *job)
{
	uint32_t h = 2166136261u;

	for (const char *c = job; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	return &b->by_hash[h % JOB_BUCKETS];
}

static struct batch_job *job_record(struct batch_state *b, const char *scheduler, const char *job)
{
	for (struct batch_job *j = *bucket(b, job); j; j = j->hash_next)
		if (!strcmp(j->job, job) && !strcmp(j->scheduler, scheduler))
			return j;
	return NULL;
}

/* Which submitters start this kind of job step: sbatch the batch step, srun and
 * salloc the others (Slurm); qsub and bsub their scheduler's jobs. */
static bool starts_step(const struct batch_sub *s, const struct batch_job *j,
			const char *slurm_step)
{
	if (strcmp(s->spec.scheduler, j->scheduler) != 0)
		return false;
	if (strcmp(j->scheduler, "slurm") != 0)
		return true;
	if (!strcmp(slurm_step, "batch"))
		return !strcmp(s->spec.submitter, "sbatch");
	return strcmp(s->spec.submitter, "sbatch") != 0;
}

static bool could_submit(const struct batch_sub *s, const struct proc *p, const char *slurm_step,
			 const struct batch_job *j, const struct run *in_run)
{
	const struct batch_job_hint *h = &j->hint;

	/* A work dir the submitter cannot tell (PBS: the user's home, unless -d) is no evidence. */
	if (!s->waiting || s->uid != p->row.uid || !starts_step(s, j, slurm_step) ||
	    p->row.proc_start_boot_ns < s->start_boot_ns || !p->row.cwd ||
	    (s->spec.work_dir[0] && strcmp(s->spec.work_dir, p->row.cwd) != 0) ||
	    (in_run && s->run != in_run))
		return false;
	if (h->engine_dir[0] && s->spec.engine_dir[0] && strcmp(h->engine_dir, s->spec.engine_dir))
		return false;
	if (h->engine_rule[0] && s->spec.engine_rule[0] &&
	    strcmp(h->engine_rule, s->spec.engine_rule))
		return false;
	return !(h->engine_job_id[0] && s->spec.engine_job_id[0] &&
		 strcmp(h->engine_job_id, s->spec.engine_job_id));
}

/* The candidates: how many, the earliest, and whether they share a run and a step or rule. */
struct candidates {
	unsigned n;
	struct batch_sub *earliest;
	bool one_run, one_step, one_rule;
};

static void find_candidates(struct batch_state *b, const struct proc *p, const char *slurm_step,
			    const struct batch_job *j, const struct run *in_run,
			    struct candidates *out)
{
	memset(out, 0, sizeof(*out));
	out->one_run = out->one_step = out->one_rule = true;
	for (struct batch_sub *s = b->subs; s; s = s->next) {
		if (!could_submit(s, p, slurm_step, j, in_run))
			continue;
		struct batch_sub *e = out->earliest;
		if (e) {
			out->one_run &= e->run == s->run;
			out->one_step &= e->run == s->run && e->step == s->step;
			out->one_rule &= e->spec.engine_rule[0] &&
					 !strcmp(e->spec.engine_rule, s->spec.engine_rule);
		}
		if (!e || s->start_boot_ns < e->start_boot_ns)
			out->earliest = s;
		out->n++;
	}
}

static void link_to(struct batch_state *b, struct batch_job *j, struct batch_sub *s,
		    const char *how)
{
	j->sub_id = s->id;
	j->step = s->step;
	j->step_pending = false;
	j->link = how;
	j->has_wait = true;
	j->queue_wait_ns = j->first_ns - s->submit_ns;
	s->jobs++;
	s->dirty = true;
	if (s->jobs_left > 0 && --s->jobs_left == 0)
		stop_waiting(b, s);
	j->dirty = true;
}

/* Decides what it can from the candidates; true if the job now has a run. */
static bool decide(struct batch_state *b, struct batch_job *j, const struct candidates *k)
{
	j->candidates = k->n;
	if (k->n == 0 || !k->one_run) {
		j->link = k->n ? "ambiguous" : "unmatched";
		return false;
	}
	if (!j->run) {
		j->run = k->earliest->run;
		j->run->refs++;
	}
	if (k->n == 1)
		link_to(b, j, k->earliest, "linked");
	else if (k->one_step || k->one_rule)
		link_to(b, j, k->earliest, "ordered");
	else {
		j->step_pending = true;
		j->link = "ambiguous"; /* until a later process of the job tells its step */
	}
	return true;
}

/*
 * Nextflow's grid executors submit `sbatch .command.run` from the task's work
 * dir, outside any step: the job, started in that dir, is the task, keyed by
 * its work dir's hash as a local task is.
 */
static void task_step_of(struct correlator *c, struct batch_job *j, struct proc *p)
{
	struct step_spec spec = {.kind = "nextflow-task"};

	if (j->step || j->step_pending || strcmp(j->run->engine, "nextflow") != 0 ||
	    !nextflow_task_key(j->cwd, spec.key, sizeof(spec.key)))
		return;
	j->step = find_step(j->run, spec.key);
	if (!j->step)
		j->step = new_step(c, j->run, &spec, p);
	j->dirty = true;
}

static void put_in(struct proc *p, struct batch_job *j)
{
	if (p->in.run != j->run) {
		if (p->in.step)
			set_step(p, NULL);
		set_run(p, j->run);
	}
	if (j->step && !p->in.step)
		set_step(p, j->step);
}

static void forget_oldest_job(struct batch_state *b)
{
	struct batch_job **link = &b->jobs, **last = NULL;

	for (; *link; link = &(*link)->next)
		if (!(*link)->dirty)
			last = link;
	if (!last)
		return;
	struct batch_job *j = *last;
	*last = j->next;
	for (struct batch_job **h = bucket(b, j->job); *h; h = &(*h)->hash_next)
		if (*h == j) {
			*h = j->hash_next;
			break;
		}
	if (j->run)
		j->run->refs--;
	free(j);
	b->n_jobs--;
}

static struct batch_job *new_job(struct batch_state *b, const struct proc *p, const char *scheduler,
				 const char *job)
{
	struct batch_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	copy_string(j->scheduler, sizeof(j->scheduler), scheduler);
	copy_string(j->job, sizeof(j->job), job);
	j->first_process_id = p->row.id;
	j->first_ns = p->row.start_epoch_ns;
	copy_string(j->cwd, sizeof(j->cwd), p->row.cwd ? p->row.cwd : "");
	j->link = "unmatched";
	j->dirty = true;
	j->next = b->jobs;
	b->jobs = j;
	struct batch_job **h = bucket(b, job);
	j->hash_next = *h;
	*h = j;
	if (++b->n_jobs > MAX_JOBS)
		forget_oldest_job(b);
	return j;
}

/* A PBS or LSF job's id from the process's cgroup path, while such submissions wait. */
static bool other_job(struct correlator *c, const struct proc *p, char *sched, size_t ssize,
		      char *job, size_t jsize)
{
	if (!c->batch || !c->batch->n_other)
		return false;
	const char *path = p->row.cgroup1_id  ? cgroup_path_of(c, p->row.cgroup1_id, true)
			   : p->row.cgroup_id ? cgroup_path_of(c, p->row.cgroup_id, false)
					      : NULL;
	return batch_cgroup_job(path, sched, ssize, job, jsize);
}

bool batch_join(struct correlator *c, struct proc *p, const struct process_view *v)
{
	const char *job = v->cgroup->slurm_job, *step = v->cgroup->slurm_step;
	char sched[16] = "slurm", other[64];
	struct batch_state *b;
	struct batch_job *j;

	if (!job[0] && other_job(c, p, sched, sizeof(sched), other, sizeof(other))) {
		job = other;
		step = "batch";
	}
	if (!job[0] || !(b = state(c)))
		return false;
	if (!(j = job_record(b, sched, job))) {
		/* Slurm's extern step holds the allocation, not the job's work: it decides nothing.
		 */
		if (!strcmp(step, "extern"))
			return false;
		if (!(j = new_job(b, p, sched, job)))
			return false;
		struct candidates k;
		find_candidates(b, p, step, j, NULL, &k);
		if (!decide(b, j, &k)) {
			log_info("batch job %s: %s (%u candidate submissions)", job, j->link, k.n);
			return false;
		}
		log_info("batch job %s: %s to run %lld (%u candidates)", job,
			 j->step_pending ? "run known, step pending" : j->link,
			 (long long)j->run->row.id, k.n);
	}
	if (!j->run)
		return false;
	task_step_of(c, j, p);
	put_in(p, j);
	return true;
}

/* A later process of a linked job shows the engine inside it: the step, if it was pending. */
static void learn_hint(struct batch_state *b, struct batch_job *j, struct proc *p,
		       const struct batch_job_hint *h)
{
	if (h->snakefile[0])
		copy_string(j->hint.snakefile, sizeof(j->hint.snakefile), h->snakefile);
	if (h->engine_dir[0])
		copy_string(j->hint.engine_dir, sizeof(j->hint.engine_dir), h->engine_dir);
	if (h->engine_rule[0])
		copy_string(j->hint.engine_rule, sizeof(j->hint.engine_rule), h->engine_rule);
	if (h->engine_job_id[0])
		copy_string(j->hint.engine_job_id, sizeof(j->hint.engine_job_id), h->engine_job_id);
	j->dirty = true;
	if (!j->step_pending)
		return;
	struct candidates k;
	find_candidates(b, p, "batch", j, j->run, &k);
	if (k.n == 1)
		link_to(b, j, k.earliest, "linked");
	else if (k.n && (k.one_step || k.one_rule))
		link_to(b, j, k.earliest, "ordered");
	else
		return;
	j->candidates = k.n;
	if (!p->in.step)
		set_step(p, j->step);
}

void batch_note_job_process(struct correlator *c, struct proc *p, const char *program,
			    char *const *argv, size_t argc)
{
	struct batch_job_hint h;
	struct batch_job *j;

	if (!c->batch || !p->row.slurm_job[0] ||
	    !(j = job_record(c->batch, "slurm", p->row.slurm_job)))
		return;
	if (!j->run && !j->own_run_id && p->in.run) {
		j->own_run_id = p->in.run->row.id; /* not linked: the job's own run */
		j->dirty = true;
	}
	if ((j->run && p->in.run != j->run) || !batch_job_hint_parse(program, argv, argc, &h))
		return;
	/* The batch step's hint decides a step; a job step's (srun) process is that step's. */
	if (!strcmp(p->row.slurm_step, "batch") || !j->step_pending)
		learn_hint(c->batch, j, p, &h);
}

int batch_write(struct correlator *c)
{
	struct batch_state *b = c->batch;

	if (!b)
		return 0;
	for (struct batch_sub *s = b->subs; s; s = s->next) {
		if (!s->dirty)
			continue;
		struct batch_submission_row row = {
		    .id = s->id,
		    .host_id = s->run->row.host_id,
		    .run_id = s->run->row.id,
		    .step_id = s->step ? s->step->id : 0,
		    .scheduler = s->spec.scheduler,
		    .submitter = s->spec.submitter,
		    .uid = s->uid,
		    .cwd = s->cwd,
		    .work_dir = s->spec.work_dir,
		    .script = s->spec.script,
		    .command = s->spec.command,
		    .job_name = s->spec.job_name,
		    .array_spec = s->spec.array,
		    .waits = s->spec.waits,
		    .engine_dir = s->spec.engine_dir,
		    .engine_rule = s->spec.engine_rule,
		    .engine_job_id = s->spec.engine_job_id,
		    .submit_ns = s->submit_ns,
		    .jobs = s->jobs,
		};
		if (store_put_batch_submission(c->store, &row) != 0)
			return -1;
	}
	for (struct batch_job *j = b->jobs; j; j = j->next) {
		if (!j->dirty)
			continue;
		struct batch_job_row row = {
		    .host_id = c->host_id,
		    .scheduler = j->scheduler,
		    .job_id = j->job,
		    .run_id = j->run ? j->run->row.id : j->own_run_id,
		    .step_id = j->step ? j->step->id : 0,
		    .submission_id = j->sub_id,
		    .link = j->link,
		    .candidates = j->candidates,
		    .first_process_id = j->first_process_id,
		    .first_ns = j->first_ns,
		    .has_queue_wait = j->has_wait,
		    .queue_wait_ns = j->queue_wait_ns,
		    .cwd = j->cwd,
		    .snakefile = j->hint.snakefile,
		    .engine_dir = j->hint.engine_dir,
		    .engine_rule = j->hint.engine_rule,
		    .engine_job_id = j->hint.engine_job_id,
		};
		if (store_put_batch_job(c->store, &row) != 0)
			return -1;
	}
	return 0;
}

bool batch_pending(const struct correlator *c)
{
	const struct batch_state *b = c->batch;

	if (!b)
		return false;
	for (const struct batch_sub *s = b->subs; s; s = s->next)
		if (s->dirty)
			return true;
	for (const struct batch_job *j = b->jobs; j; j = j->next)
		if (j->dirty)
			return true;
	return false;
}

void batch_committed(struct correlator *c)
{
	struct batch_state *b = c->batch;

	if (!b)
		return;
	for (struct batch_job *j = b->jobs; j; j = j->next)
		j->dirty = false;
	/* Written submissions that wait for no job any more are let go. */
	for (struct batch_sub **link = &b->subs; *link;) {
		struct batch_sub *s = *link;
		s->dirty = false;
		if (s->waiting) {
			link = &s->next;
			continue;
		}
		*link = s->next;
		free(s->cwd);
		free(s);
	}
}

void batch_free(struct correlator *c)
{
	struct batch_state *b = c->batch;

	if (!b)
		return;
	for (struct batch_sub *s = b->subs; s;) {
		struct batch_sub *next = s->next;
		free(s->cwd);
		free(s);
		s = next;
	}
	for (struct batch_job *j = b->jobs; j;) {
		struct batch_job *next = j->next;
		free(j);
		j = next;
	}
	free(b);
	c->batch = NULL;
}
