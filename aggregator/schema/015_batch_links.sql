-- tracer schema version 15: batch jobs joined to the run and step that submitted them.
-- Both sides of the join are kept, so the same join can be made across hosts (the fleet
-- store) where the job ran on another host than its submitter.

-- The submitter side: a submitting program (sbatch, srun, salloc, qsub, bsub, `aws batch
-- submit-job`) that ran in a run, with what its argv and cwd say.
CREATE TABLE batch_submissions (
    id              INTEGER PRIMARY KEY,  -- the submitter's processes.id
    host_id         TEXT,
    run_id          INTEGER NOT NULL,
    step_id         INTEGER,
    scheduler       TEXT NOT NULL,        -- slurm, pbs, lsf, aws-batch
    submitter       TEXT NOT NULL,        -- sbatch, srun, salloc, qsub, bsub, aws
    uid             INTEGER,
    cwd             TEXT,                 -- the submitter's
    work_dir        TEXT,                 -- where the job starts: --chdir/-D, -d, -cwd, else cwd
    script          TEXT,                 -- the batch script (argv), NULL for --wrap or a command
    command         TEXT,                 -- srun/bsub's command or --wrap's text
    job_name        TEXT,                 -- -J/--job-name/-N
    array_spec      TEXT,                 -- --array/-a, -J/-t (PBS), name[1-10] (LSF)
    waits           INTEGER NOT NULL,     -- 1: the submitter waits for the job (--wait, srun, -K)
    engine_dir      TEXT,                 -- Snakemake's jobscript directory (.snakemake/tmp.X)
    engine_rule     TEXT,                 -- Snakemake's rule (snakejob.<rule>.<id>.sh)
    engine_job_id   TEXT,                 -- Snakemake's job id (snakejob.<rule>.<id>.sh)
    submit_ns       INTEGER NOT NULL,     -- the submitter's start, epoch ns
    jobs            INTEGER NOT NULL DEFAULT 0  -- jobs on this host linked to it
);
CREATE INDEX batch_submissions_run ON batch_submissions(run_id);

-- The job side: a batch job whose processes ran on this host (the job id from their cgroup).
CREATE TABLE batch_jobs (
    host_id         TEXT NOT NULL,
    scheduler       TEXT NOT NULL,        -- slurm, pbs, lsf
    job_id          TEXT NOT NULL,        -- as the cgroup path shows it (Slurm: the raw id)
    run_id          INTEGER,              -- the run it is part of (its own if not linked)
    step_id         INTEGER,
    submission_id   INTEGER,              -- batch_submissions.id; NULL: not linked
    link            TEXT NOT NULL,        -- linked, ordered, ambiguous, unmatched
    candidates      INTEGER NOT NULL,     -- submissions that could have submitted it
    first_process_id INTEGER,
    first_ns        INTEGER,              -- its first process's start, epoch ns
    queue_wait_ns   INTEGER,              -- first_ns - the submission's submit_ns
    cwd             TEXT,                 -- its first process's
    snakefile       TEXT,                 -- the inner snakemake's --snakefile
    engine_dir      TEXT,                 -- the inner snakemake's jobscript directory
    engine_rule     TEXT,                 -- the inner snakemake's --target-jobs rule
    engine_job_id   TEXT,                 -- Snakemake's job id from its <id>.jobfinished marker
    PRIMARY KEY (host_id, scheduler, job_id)
);
CREATE INDEX batch_jobs_run ON batch_jobs(run_id);
