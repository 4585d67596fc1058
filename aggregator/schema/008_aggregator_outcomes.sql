-- tracer schema version 8: what the aggregator did with the events it got,
-- and the wall-clock steps it saw.

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

-- A step of the wall clock (NTP's first sync, a VM resumed) between two frames:
-- processes running across it keep the clock they started under.
ALTER TABLE aggregator_stats ADD COLUMN clock_steps INTEGER NOT NULL DEFAULT 0;
ALTER TABLE aggregator_stats ADD COLUMN last_clock_step_ns INTEGER; -- signed; NULL if none
