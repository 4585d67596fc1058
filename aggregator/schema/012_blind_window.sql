-- tracer schema version 12: what was left out is counted. A collector that
-- starts on a boot another collector watched before says how long the host
-- went unwatched between them, and how many processes its start-up snapshot found that began in
-- that window (their start and anything before the snapshot were not seen;
-- processes that began and ended in the window are not known at all).

-- Boot-clock ns from the previous stream's last watermark to this stream's
-- first; NULL for the first collector of a boot and for rows before v12.
ALTER TABLE collector_stats ADD COLUMN blind_ns INTEGER;
-- Processes of this stream's snapshot that started inside that window.
ALTER TABLE collector_stats ADD COLUMN blind_processes INTEGER;

-- Images of deny-listed system programs (root's own files only) that were
-- kept for the process tree but not written.
ALTER TABLE aggregator_stats ADD COLUMN denied_images INTEGER;
