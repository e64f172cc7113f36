-- ce_traceparent: the W3C trace context of the business operation that wrote this row (the seat
-- service's span for the hold, confirm, release or expiry). The Outbox Event Router places it in
-- the header of the same name, the CloudEvents distributed tracing extension in Kafka binary mode;
-- each consumer's span for the event links to it. Nullable: rows written before this column have
-- none, and their records carry no trace header (the consumers handle them all the same).
alter table outbox add column ce_traceparent text;
