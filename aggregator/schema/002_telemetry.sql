-- tracer schema version 2: kernel telemetry depth.
-- Scheduling, memory pressure, network and syscall counters per process;
-- live samples; host samples; files opened; OOM kills; cgroups; probe status
-- and per-type loss accounting.

ALTER TABLE processes ADD COLUMN runq_ns INTEGER;        -- runnable but waiting for a CPU
ALTER TABLE processes ADD COLUMN iowait_ns INTEGER;      -- blocked on I/O (io_schedule until woken)
ALTER TABLE processes ADD COLUMN reclaim_ns INTEGER;     -- in direct memory reclaim
ALTER TABLE processes ADD COLUMN net_tx_bytes INTEGER;   -- IPv4/IPv6 payload bytes sent
ALTER TABLE processes ADD COLUMN net_rx_bytes INTEGER;
ALTER TABLE processes ADD COLUMN sys_file INTEGER;       -- syscalls by class
ALTER TABLE processes ADD COLUMN sys_net INTEGER;
ALTER TABLE processes ADD COLUMN sys_mem INTEGER;
ALTER TABLE processes ADD COLUMN sys_proc INTEGER;
ALTER TABLE processes ADD COLUMN sys_other INTEGER;
ALTER TABLE processes ADD COLUMN sys_failed INTEGER;     -- syscalls that returned an error
ALTER TABLE processes ADD COLUMN oom_killed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE processes ADD COLUMN files_overflow INTEGER NOT NULL DEFAULT 0; -- distinct files not tracked

-- Live samples of running processes: counters are cumulative since the
-- process started (take differences between rows for rates).
CREATE TABLE samples (
    process_id    INTEGER NOT NULL,
    ts_ns         INTEGER NOT NULL,
    cpu_user_ns   INTEGER,
    cpu_sys_ns    INTEGER,
    rss_kb        INTEGER,
    rchar         INTEGER,
    wchar         INTEGER,
    read_bytes    INTEGER,
    write_bytes   INTEGER,
    runq_ns       INTEGER,
    iowait_ns     INTEGER,
    net_tx_bytes  INTEGER,
    net_rx_bytes  INTEGER,
    vol_ctxsw     INTEGER,
    invol_ctxsw   INTEGER,
    state         TEXT,            -- R running, S sleeping, D uninterruptible (I/O), T stopped
    threads       INTEGER,
    PRIMARY KEY (process_id, ts_ns)
) WITHOUT ROWID;

-- The whole host on the same period: rates over the interval ending at ts_ns.
CREATE TABLE host_samples (
    ts_ns              INTEGER PRIMARY KEY,
    interval_ns        INTEGER NOT NULL,
    host_id            TEXT,
    cpus               INTEGER,
    cpu_busy_pct       REAL,        -- 100 - idle - iowait
    cpu_user_pct       REAL,
    cpu_system_pct     REAL,
    cpu_iowait_pct     REAL,
    cpu_steal_pct      REAL,
    load1              REAL,
    mem_total_kb       INTEGER,
    mem_available_kb   INTEGER,
    swap_used_kb       INTEGER,
    disk_read_bytes    INTEGER,     -- over the interval, all whole disks
    disk_write_bytes   INTEGER,
    net_rx_bytes       INTEGER,     -- over the interval, all interfaces but lo
    net_tx_bytes       INTEGER
);

-- Files each process opened (first open per path; counted until it exited).
CREATE TABLE files (
    id          INTEGER PRIMARY KEY,
    process_id  INTEGER NOT NULL,
    path        TEXT NOT NULL,       -- absolute unless opened relative to a directory fd
    access      TEXT NOT NULL,       -- r, w or rw
    created     INTEGER NOT NULL,    -- O_CREAT was given
    open_flags  INTEGER NOT NULL,    -- union of the O_* flags over all opens
    result      INTEGER NOT NULL,    -- first open: 0, or the errno it failed with
    count       INTEGER NOT NULL,    -- opens in total
    failed      INTEGER NOT NULL,    -- opens that failed
    first_ns    INTEGER NOT NULL,
    path_truncated INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX files_process ON files(process_id);
CREATE INDEX files_path ON files(path);

-- Every OOM kill: the exact victim, as the kernel chose it.
CREATE TABLE oom_kills (
    id              INTEGER PRIMARY KEY,
    ts_ns           INTEGER NOT NULL,
    process_id      INTEGER,         -- NULL if the victim was never seen starting
    pid             INTEGER NOT NULL,
    proc_start_boot_ns INTEGER NOT NULL,
    boot_id         TEXT,
    comm            TEXT,
    uid             INTEGER,
    total_vm_kb     INTEGER,
    anon_rss_kb     INTEGER,
    file_rss_kb     INTEGER,
    shmem_rss_kb    INTEGER,
    rss_kb          INTEGER,         -- anon + file + shmem at the kill
    cgroup_id       INTEGER,
    cgroup1_id      INTEGER,
    memcg_limit_kb  INTEGER,         -- the victim's memory cgroup limit; NULL if none
    memcg_usage_kb  INTEGER,
    oom_score_adj   INTEGER
);
CREATE INDEX oom_kills_process ON oom_kills(process_id);

-- Cgroups by id, with the path captured when they were created (or found at
-- collector start), so ids resolve after the cgroup is gone.
CREATE TABLE cgroups (
    boot_id       TEXT NOT NULL,
    hierarchy     INTEGER NOT NULL,  -- 0: cgroup v2; else the v1 hierarchy id
    id            INTEGER NOT NULL,  -- inode number of the cgroup directory
    controllers   TEXT,              -- v1 controllers of the hierarchy, e.g. memory
    path          TEXT,              -- relative to the hierarchy's root
    level         INTEGER,
    created_ns    INTEGER,           -- NULL if it existed before the collector
    removed_ns    INTEGER,
    PRIMARY KEY (boot_id, hierarchy, id)
);

-- Each process's cgroup paths (v2, and v1 memory where the host has it).
CREATE VIEW process_cgroups AS
SELECT p.id AS process_id,
       v2.path AS cgroup_path,
       v1.path AS memory_cgroup_path
FROM processes p
LEFT JOIN cgroups v2 ON v2.boot_id = p.boot_id AND v2.hierarchy = 0 AND v2.id = p.cgroup_id
LEFT JOIN cgroups v1 ON v1.boot_id = p.boot_id AND v1.controllers = 'memory'
                    AND v1.id = p.cgroup1_id;

ALTER TABLE collector_stats ADD COLUMN probes TEXT;     -- JSON: [{name, state, detail}]
ALTER TABLE collector_stats ADD COLUMN samples_taken INTEGER NOT NULL DEFAULT 0;

-- Events lost, per stream, hop and type (cumulative).
CREATE TABLE event_loss (
    stream_id   TEXT NOT NULL,
    hop         TEXT NOT NULL,       -- kernel (buffer full) or collector (queue full)
    event_type  TEXT NOT NULL,
    count       INTEGER NOT NULL,
    PRIMARY KEY (stream_id, hop, event_type)
);
