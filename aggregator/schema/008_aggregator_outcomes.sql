-- tracer schema version 8: what the aggregator did with the events it got.

-- Events that arrive whole can still find nothing to apply to: a sample or a
-- file open of a process the aggregator does not know, a second exit. Until
-- v8 these were counted in memory only; the brief is that nothing is dropped
-- without the user seeing it.
ALTER TABLE aggregator_stats ADD COLUMN events_ingested INTEGER NOT NULL DEFAULT 0;
ALTER TABLE aggregator_stats ADD COLUMN samples_unmatched INTEGER NOT NULL DEFAULT 0;
ALTER TABLE aggregator_stats ADD COLUMN files_unmatched INTEGER NOT NULL DEFAULT 0;
ALTER TABLE aggregator_stats ADD COLUMN late_events INTEGER NOT NULL DEFAULT 0;
ALTER TABLE aggregator_stats ADD COLUMN unmatched_exits INTEGER NOT NULL DEFAULT 0;
ALTER TABLE aggregator_stats ADD COLUMN missing_parents INTEGER NOT NULL DEFAULT 0;
ALTER TABLE aggregator_stats ADD COLUMN lost_processes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE aggregator_stats ADD COLUMN events_skipped INTEGER NOT NULL DEFAULT 0;
