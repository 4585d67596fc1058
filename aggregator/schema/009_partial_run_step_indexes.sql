-- tracer schema version 9: the run and step indexes of processes hold only
-- the processes that have a run or a step.

-- Most processes on a host belong to no run (daemons, shells, cron), and an
-- index entry for a NULL key answers no query: `run_id = ?` never matches
-- NULL. Each index entry written costs the aggregator about 5k instructions
-- per process (callgrind, synthetic processes outside any run: 70.8k with
-- both entries, 61.8k without). SQLite uses a partial index for any `=`,
-- `IN` or join on the column, since each implies the column is not NULL.
DROP INDEX IF EXISTS processes_run;
CREATE INDEX processes_run ON processes(run_id) WHERE run_id IS NOT NULL;
DROP INDEX IF EXISTS processes_step;
CREATE INDEX processes_step ON processes(step_id) WHERE step_id IS NOT NULL;
