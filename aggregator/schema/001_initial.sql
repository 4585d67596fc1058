-- tracer schema version 1: processes, explicit runs, ingest accounting.
-- Public interface: see docs/schema.md. Times are Unix epoch nanoseconds.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE runs (
    id                  INTEGER PRIMARY KEY,
    name                TEXT NOT NULL,
    pipeline            TEXT,
    host_id             TEXT,
    hostname            TEXT,
    start_ns            INTEGER,
    end_ns              INTEGER,
    exit_code           INTEGER,          -- of the command; NULL if killed
    signal              INTEGER,          -- killing signal; NULL if it exited
    command_process_id  INTEGER,          -- processes.id of the command
    launcher_pid        INTEGER,          -- the `tracer run` process
    launcher_start_ns   INTEGER,          -- its start, CLOCK_BOOTTIME ns
    boot_id             TEXT,
    source              TEXT NOT NULL DEFAULT 'explicit'
);

CREATE TABLE processes (
    id                    INTEGER PRIMARY KEY,
    run_id                INTEGER REFERENCES runs(id),
    parent_id             INTEGER,        -- processes.id of the parent's image at fork
    pid                   INTEGER NOT NULL,
    ppid                  INTEGER,
    image                 INTEGER NOT NULL DEFAULT 0, -- 0 first image, +1 per exec in place
    start_ns              INTEGER,        -- this image's start
    end_ns                INTEGER,        -- this image's end; NULL while running
    proc_start_boot_ns    INTEGER NOT NULL, -- process identity with pid (CLOCK_BOOTTIME)
    boot_id               TEXT,
    comm                  TEXT,
    exe                   TEXT,
    argv                  TEXT,           -- JSON array of strings, secrets redacted
    argv_truncated        INTEGER NOT NULL DEFAULT 0,
    argv_redactions       INTEGER NOT NULL DEFAULT 0,
    cwd                   TEXT,
    uid                   INTEGER,
    gid                   INTEGER,
    cgroup_id             INTEGER,        -- cgroup v2 id
    cgroup1_id            INTEGER,        -- cgroup v1 memory controller id
    state                 TEXT NOT NULL,  -- running | exited | exec | lost
    exit_code             INTEGER,        -- NULL if killed or still running
    signal                INTEGER,        -- NULL if exited normally
    core_dumped           INTEGER,
    cpu_user_ns           INTEGER,
    cpu_sys_ns            INTEGER,
    max_rss_kb            INTEGER,        -- peak RSS of this image's own address space
    ru_maxrss_kb          INTEGER,        -- what getrusage reports (parent-inflated)
    rchar                 INTEGER,
    wchar                 INTEGER,
    syscr                 INTEGER,
    syscw                 INTEGER,
    read_bytes            INTEGER,
    write_bytes           INTEGER,
    cancelled_write_bytes INTEGER,
    vol_ctxsw             INTEGER,
    invol_ctxsw           INTEGER,
    min_faults            INTEGER,
    maj_faults            INTEGER,
    from_snapshot         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX processes_run ON processes(run_id);
CREATE INDEX processes_parent ON processes(parent_id);
CREATE INDEX processes_pid ON processes(pid, proc_start_boot_ns);
CREATE INDEX processes_start ON processes(start_ns);

-- One row per collector stream (a collector process lifetime).
CREATE TABLE collector_stats (
    stream_id           TEXT PRIMARY KEY,
    boot_id             TEXT,
    host_id             TEXT,
    hostname            TEXT,
    collector_pid       INTEGER,
    first_seen_ns       INTEGER,
    last_seen_ns        INTEGER,
    last_seq            INTEGER NOT NULL DEFAULT 0,
    watermark_boot_ns   INTEGER NOT NULL DEFAULT 0, -- every event before it is committed
    frames_received     INTEGER NOT NULL DEFAULT 0,
    duplicate_frames    INTEGER NOT NULL DEFAULT 0,
    events_received     INTEGER NOT NULL DEFAULT 0,
    kernel_drops        INTEGER NOT NULL DEFAULT 0,
    kernel_drops_fork   INTEGER NOT NULL DEFAULT 0,
    kernel_drops_exec   INTEGER NOT NULL DEFAULT 0,
    kernel_drops_exit   INTEGER NOT NULL DEFAULT 0,
    kernel_drops_other  INTEGER NOT NULL DEFAULT 0, -- perf-buffer samples lost (type unknown)
    collector_drops     INTEGER NOT NULL DEFAULT 0,
    seq_gaps            INTEGER NOT NULL DEFAULT 0, -- frames never received
    decode_errors       INTEGER NOT NULL DEFAULT 0,
    snapshot_processes  INTEGER NOT NULL DEFAULT 0,
    final               INTEGER NOT NULL DEFAULT 0
);

-- One row per aggregator start: what it refused before any stream was known.
CREATE TABLE aggregator_stats (
    id              INTEGER PRIMARY KEY,
    started_ns      INTEGER NOT NULL,
    updated_ns      INTEGER NOT NULL,
    aggregator_pid  INTEGER,
    frames_received INTEGER NOT NULL DEFAULT 0,
    bad_frames      INTEGER NOT NULL DEFAULT 0,
    refused_peers   INTEGER NOT NULL DEFAULT 0,
    last_bad_frame  TEXT
);
