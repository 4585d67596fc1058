/*
 * Batch jobs joined to the run and step that submitted them (correlate/batch.c),
 * from what the OS shows on both sides: the submitter's argv and cwd (sbatch,
 * srun, salloc, qsub, bsub, `aws batch submit-job`) and the job's processes
 * (the job id in their cgroup path, their cwd, the inner engine's argv).
 * batch_argv.c reads the argv of both sides; nothing here reads a file.
 */
#ifndef TRACER_CORRELATE_BATCH_H
#define TRACER_CORRELATE_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BATCH_PATH_MAX 512

/* What a submitter's argv says about the job it submits. */
struct batch_submit {
	char scheduler[16];	       /* slurm, pbs, lsf, aws-batch */
	char submitter[16];	       /* sbatch, srun, salloc, qsub, bsub, aws */
	char work_dir[BATCH_PATH_MAX]; /* where the job starts; "" if unknown (PBS: home) */
	char script[BATCH_PATH_MAX];   /* the batch script as given, made absolute */
	char command[BATCH_PATH_MAX];  /* srun/bsub/qsub -- command, or --wrap's text */
	char job_name[256];
	char array[64];	 /* the array spec; "" for a single job */
	int array_tasks; /* tasks the spec names; 1 without one, 0 if it cannot be counted */
	bool waits;	 /* the submitter waits for the job's end */
	/* Snakemake's cluster jobscript <dir>/snakejob.<rule>.<id>.sh */
	char engine_dir[BATCH_PATH_MAX], engine_rule[128], engine_job_id[24];
};

/* Whether the program is one of the submitters batch_submit_parse reads. */
bool batch_is_submitter(const char *program);
/* Whether program (argv's tool) submits a batch job; fills out. cwd: the submitter's. */
bool batch_submit_parse(const char *program, char *const *argv, size_t argc, const char *cwd,
			struct batch_submit *out);

/* What a job's process shows of the engine that runs inside the job. */
struct batch_job_hint {
	char snakefile[BATCH_PATH_MAX];
	char engine_dir[BATCH_PATH_MAX]; /* .snakemake/tmp.X: --wait-for-files, the marker's dir */
	char engine_rule[128];		 /* --target-jobs 'rule:...' */
	char engine_job_id[24];		 /* <dir>/<id>.jobfinished|.jobfailed (touch) */
};

/* Whether this process of a job shows one (the inner snakemake, its end marker). */
bool batch_job_hint_parse(const char *program, char *const *argv, size_t argc,
			  struct batch_job_hint *out);

/*
 * A PBS or LSF job's id from a cgroup path, as their cgroup support lays it out:
 * PBS Pro's hook `.../pbs_jobs.service/jobid/<id>` (older: `.../pbspro/<id>`),
 * Torque's `.../torque/<id>`, LSF's `.../lsf/<cluster>/job.<id>.<index>.<time>`
 * (an array element: `<id>[<index>]`, as bjobs shows it; index 0: none).
 * Slurm's is parsed by cgroup_path.c. false: neither.
 */
bool batch_cgroup_job(const char *path, char *scheduler, size_t ssize, char *job, size_t jsize);

/* Tasks an array spec names ("1-3", "1,5,7", "0-15:4%2"); 0 if it cannot tell. */
int batch_array_tasks(const char *spec);

#endif
