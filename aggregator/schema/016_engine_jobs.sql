-- tracer schema version 16: the keys that join an engine's jobs to their run.

-- A Toil run's job store, as its workers name it (`file:/scratch/js`,
-- `aws:us-west-2:x`): every worker of the run, on any host, names the same one.
ALTER TABLE runs ADD COLUMN toil_job_store TEXT;
-- The engine's own id of the job a step ran (Toil's job store id,
-- `kind-CWLJob/instance-1a2b3c4d`); a retry of the job has the same one.
ALTER TABLE steps ADD COLUMN engine_job TEXT;
