-- A queued record whose row gained a late fact (an exit tail's CPU, file
-- counts, an OOM mark) is refreshed in place while it waits for the shipper:
-- outbox_size's bytes follow the payload's new length.
CREATE TRIGGER outbox_refreshed AFTER UPDATE OF payload ON outbox BEGIN
    UPDATE outbox_size SET bytes = bytes - length(OLD.payload) + length(NEW.payload);
END;
