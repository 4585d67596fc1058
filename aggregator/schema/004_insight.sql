-- tracer schema version 4: failure signals and what each step spent its time on.

CREATE TABLE signals (
    id           INTEGER PRIMARY KEY,
    kind         TEXT NOT NULL,     -- oom_kill, killed, tool_failed, stalled, io_wait, cpu_contention,
                                    -- memory_pressure, slower_than_usual, retried
    severity     TEXT NOT NULL,     -- info, warning, critical
    detected_ns  INTEGER NOT NULL,  -- when the aggregator raised it
    at_ns        INTEGER,           -- when the condition happened or began
    run_id       INTEGER REFERENCES runs(id),
    step_id      INTEGER REFERENCES steps(id),
    process_id   INTEGER REFERENCES processes(id),
    tool_id      INTEGER REFERENCES tools(id),
    value        REAL,              -- the measurement that triggered it, in `unit`
    threshold    REAL,              -- the threshold it crossed, same unit
    unit         TEXT,
    message      TEXT NOT NULL,     -- one line for humans
    details      TEXT,              -- JSON: the numbers behind it
    active       INTEGER NOT NULL DEFAULT 0  -- 1 while the condition still holds (a stall, a slow step)
);
CREATE INDEX signals_run ON signals(run_id);
CREATE INDEX signals_step ON signals(step_id);

-- Where each step's time went: shares of its processes' time (CPU, waiting for
-- I/O, waiting for a CPU, reclaiming memory, sleeping on something else) and
-- the character that follows from them.
ALTER TABLE steps ADD COLUMN reclaim_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN sleep_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN character TEXT;   -- compute, io, memory, network, contended, waiting
ALTER TABLE steps ADD COLUMN memory_limit_kb INTEGER;  -- the memory cgroup limit it ran under, if any
ALTER TABLE steps ADD COLUMN cpu_limit REAL;           -- CPUs its cgroup allowed (cpu.max / cfs quota), if limited
ALTER TABLE steps ADD COLUMN signature TEXT;           -- argv of the process that named it: retries share it
ALTER TABLE runs ADD COLUMN reclaim_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN sleep_ns INTEGER NOT NULL DEFAULT 0;
