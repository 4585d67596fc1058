-- tracer schema version 5: the outbox the shipper delivers from.

-- Finished records, appended in the same transaction that writes them. The
-- payload is the record's row as a JSON object; `_version` at the sink is the
-- outbox id, so a record queued again (rewritten) replaces the older copy.
CREATE TABLE outbox (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: batch ids stay unique
    kind        TEXT NOT NULL,      -- the table: processes, steps, runs, signals, samples, host_samples, collector_stats
    record_key  TEXT NOT NULL,      -- the record's key in that table
    priority    INTEGER NOT NULL,   -- what goes first when the outbox is full: 0 samples, 1 host samples, 2 processes, 3 summaries
    created_ns  INTEGER NOT NULL,
    payload     TEXT NOT NULL
);
CREATE INDEX outbox_priority ON outbox(priority, id);

-- Bytes of payload queued, kept by triggers so the aggregator (adding) and the
-- shipper (removing) agree without scanning.
CREATE TABLE outbox_size (one INTEGER PRIMARY KEY CHECK (one = 1), records INTEGER NOT NULL, bytes INTEGER NOT NULL);
INSERT INTO outbox_size VALUES (1, 0, 0);
CREATE TRIGGER outbox_added AFTER INSERT ON outbox BEGIN
    UPDATE outbox_size SET records = records + 1, bytes = bytes + length(NEW.payload);
END;
CREATE TRIGGER outbox_removed AFTER DELETE ON outbox BEGIN
    UPDATE outbox_size SET records = records - 1, bytes = bytes - length(OLD.payload);
END;

-- Records dropped because the outbox was full (cumulative, per kind).
CREATE TABLE outbox_drops (
    kind     TEXT PRIMARY KEY,
    records  INTEGER NOT NULL DEFAULT 0,
    bytes    INTEGER NOT NULL DEFAULT 0,
    last_ns  INTEGER
);

-- The shipper keeps its own progress, dead letters and health in its own
-- database (it only reads this one): docs/shipping.md.
