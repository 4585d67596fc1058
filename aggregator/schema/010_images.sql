-- tracer schema version 10: runs and steps count the images of their
-- processes beside the processes; the aggregator counts exit tails it could
-- not apply.

-- An exec ends an image, not a process: a program that re-execs itself, or a
-- `bash -c '... exec tool'`, is one process with several rows. Since v10 the
-- rollups (cpu_ns, bytes, waits) hold every image, and `images` says how many
-- rows that was; `processes` counts processes.
ALTER TABLE runs ADD COLUMN images INTEGER;
ALTER TABLE steps ADD COLUMN images INTEGER;

-- The exit path (freeing memory, closing files) runs after the exit event;
-- the collector sends what it used as an exit tail, added to the process's
-- last image. A tail for a process not known to have exited is counted here.
ALTER TABLE aggregator_stats ADD COLUMN tails_unmatched INTEGER;
