-- tracer schema version 7: two indexes fewer on processes.

-- Every index on processes is written for every process: in an exec storm
-- each cost the aggregator about 1 us of its ~16 us per process. Nothing
-- tracer asks used these two. A window's processes are found by start and end
-- together, and an index on start alone only helped windows in the distant
-- past (for recent ones it made SQLite sort what a scan reads in order).
-- Processes of one tool are reached through tool_usage, per run.
DROP INDEX IF EXISTS processes_start;
DROP INDEX IF EXISTS processes_tool;
