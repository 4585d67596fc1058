-- tracer schema version 3: pipeline -> run -> step -> tool -> process.

CREATE TABLE pipelines (
    id             INTEGER PRIMARY KEY,
    name           TEXT NOT NULL UNIQUE,
    first_seen_ns  INTEGER
);

CREATE TABLE tools (
    id        INTEGER PRIMARY KEY,
    name      TEXT NOT NULL UNIQUE,  -- "samtools sort", "picard SortSam", "align.py"
    program   TEXT NOT NULL,         -- "samtools": what the allowlist names
    category  TEXT                   -- from the allowlist; NULL if not listed
);

CREATE TABLE steps (
    id                  INTEGER PRIMARY KEY,
    run_id              INTEGER NOT NULL REFERENCES runs(id),
    key                 TEXT NOT NULL,   -- engine's identity of the step (task hash, job number, ...)
    name                TEXT,            -- rule or process name where visible, else the main tool
    kind                TEXT NOT NULL,   -- snakemake-job, nextflow-task, cwl-step, toil-job, slurm-step, script-step
    start_ns            INTEGER,
    end_ns              INTEGER,
    status              TEXT NOT NULL,   -- running, ok, failed, killed
    exit_code           INTEGER,
    signal              INTEGER,
    root_process_id     INTEGER,
    container_id        TEXT,
    slurm_job           TEXT,
    slurm_step          TEXT,
    processes           INTEGER NOT NULL DEFAULT 0,
    failed_processes    INTEGER NOT NULL DEFAULT 0,
    cpu_ns              INTEGER NOT NULL DEFAULT 0,
    avg_cores           REAL,            -- CPU time / wall time
    peak_cores          REAL,            -- highest CPU use over a sampling period
    peak_rss_kb         INTEGER,         -- peak of the summed RSS of concurrent processes
    max_process_rss_kb  INTEGER,         -- largest single process
    rchar               INTEGER NOT NULL DEFAULT 0,
    wchar               INTEGER NOT NULL DEFAULT 0,
    read_bytes          INTEGER NOT NULL DEFAULT 0,
    write_bytes         INTEGER NOT NULL DEFAULT 0,
    net_tx_bytes        INTEGER NOT NULL DEFAULT 0,
    net_rx_bytes        INTEGER NOT NULL DEFAULT 0,
    iowait_ns           INTEGER NOT NULL DEFAULT 0,
    runq_ns             INTEGER NOT NULL DEFAULT 0,
    UNIQUE (run_id, key)
);
CREATE INDEX steps_run ON steps(run_id);

ALTER TABLE runs ADD COLUMN pipeline_id INTEGER REFERENCES pipelines(id);
ALTER TABLE runs ADD COLUMN engine TEXT;               -- snakemake, nextflow, cwltool, toil, slurm, script
ALTER TABLE runs ADD COLUMN engine_process_id INTEGER;
ALTER TABLE runs ADD COLUMN status TEXT;               -- running, ok, failed, killed
ALTER TABLE runs ADD COLUMN steps INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN processes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN failed_processes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN cpu_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN avg_cores REAL;
ALTER TABLE runs ADD COLUMN peak_cores REAL;
ALTER TABLE runs ADD COLUMN peak_rss_kb INTEGER;
ALTER TABLE runs ADD COLUMN max_process_rss_kb INTEGER;
ALTER TABLE runs ADD COLUMN rchar INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN wchar INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN read_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN write_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN net_tx_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN net_rx_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN iowait_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN runq_ns INTEGER NOT NULL DEFAULT 0;

ALTER TABLE processes ADD COLUMN step_id INTEGER REFERENCES steps(id);
ALTER TABLE processes ADD COLUMN tool_id INTEGER REFERENCES tools(id);
ALTER TABLE processes ADD COLUMN helper INTEGER NOT NULL DEFAULT 0; -- engine instrumentation, not work
ALTER TABLE processes ADD COLUMN container_runtime TEXT;
ALTER TABLE processes ADD COLUMN container_id TEXT;
ALTER TABLE processes ADD COLUMN pod_uid TEXT;
ALTER TABLE processes ADD COLUMN slurm_job TEXT;
ALTER TABLE processes ADD COLUMN slurm_step TEXT;
ALTER TABLE processes ADD COLUMN systemd_unit TEXT;
CREATE INDEX processes_step ON processes(step_id);
CREATE INDEX processes_tool ON processes(tool_id);

-- Per pipeline: its runs and their totals.
CREATE VIEW pipeline_summary AS
SELECT p.id AS pipeline_id, p.name AS pipeline, count(r.id) AS runs,
       sum(r.status = 'failed' OR r.status = 'killed') AS failed_runs,
       min(r.start_ns) AS first_start_ns, max(r.end_ns) AS last_end_ns,
       sum(r.cpu_ns) AS cpu_ns, max(r.peak_rss_kb) AS peak_rss_kb,
       avg(r.end_ns - r.start_ns) AS avg_wall_ns
FROM pipelines p LEFT JOIN runs r ON r.pipeline_id = p.id
GROUP BY p.id;

-- Per run and tool: how many processes, CPU, the largest process. Engine
-- instrumentation helpers are left out.
CREATE VIEW tool_usage AS
SELECT pr.run_id, t.id AS tool_id, t.name AS tool, t.category,
       count(*) AS processes, sum(pr.cpu_user_ns + pr.cpu_sys_ns) AS cpu_ns,
       max(pr.max_rss_kb) AS max_rss_kb, sum(pr.end_ns - pr.start_ns) AS wall_ns,
       sum(pr.rchar) AS rchar, sum(pr.wchar) AS wchar,
       sum(pr.exit_code != 0 OR pr.signal IS NOT NULL) AS failed
FROM processes pr JOIN tools t ON t.id = pr.tool_id
WHERE pr.helper = 0
GROUP BY pr.run_id, t.id;
