-- tracer schema version 7: two indexes fewer on processes.

-- Every index on processes is written for every process: in an exec storm
-- each cost the aggregator about 1 us of its ~16 us per process. Nothing
-- tracer asks used these two: the window query of `tracer cost` (start and end
-- together, in id order) is planned as a table scan with or without an index
-- on start, and processes of one tool are reached through tool_usage, per run.
DROP INDEX IF EXISTS processes_start;
DROP INDEX IF EXISTS processes_tool;
