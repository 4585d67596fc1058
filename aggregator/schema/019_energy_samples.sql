-- RAPL package energy (issue 61): the powercap counters the collector reads
-- every sample period (/sys/class/powercap/intel-rapl:N/energy_uj), as read:
-- cumulative microjoules that wrap to 0 past max_energy_range_uj. `tracer
-- energy` takes the differences over a run's span (docs/energy.md).
CREATE TABLE energy_samples (
    ts_ns                INTEGER NOT NULL,  -- when read (epoch ns)
    host_id              TEXT NOT NULL DEFAULT '',
    zone                 INTEGER NOT NULL,  -- N of intel-rapl:N
    name                 TEXT,              -- package-0, psys...
    energy_uj            INTEGER NOT NULL,
    max_energy_range_uj  INTEGER,
    PRIMARY KEY (host_id, zone, ts_ns)
) WITHOUT ROWID;
CREATE INDEX energy_samples_ts ON energy_samples (ts_ns);
