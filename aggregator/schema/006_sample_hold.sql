-- tracer schema version 6: samples held back from the shipper.

-- A fork child's samples from before its exec are written to `samples` at once
-- but queued in the outbox only once the child is known to be recorded: its
-- exec names a program that is not deny-listed, it exits, or it has worked on
-- its own for 5 s. An exec into deny-listed noise forgets the process, and a
-- sample already shipped could not be taken back from the sink. A process id
-- is here while some of its samples are held; an aggregator that starts queues
-- what its predecessor held. Internal to the aggregator.
CREATE TABLE outbox_held (process_id INTEGER PRIMARY KEY);
