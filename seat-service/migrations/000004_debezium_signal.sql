-- Debezium's signal table (signal.data.collection=public.debezium_signal). The lost-slot recovery
-- inserts an `execute-snapshot` signal here to re-emit outbox rows through an ad hoc incremental
-- snapshot; the connector reads the insert from the WAL like any captured change.
-- During an incremental snapshot the connector itself writes its open/close watermarks into this
-- table (watermarking strategy insert_insert), hence INSERT for its role. Only inserts matter, so
-- the publication stays publish = 'insert': a signal, and every watermark, is an insert.
-- The table's own change events never reach Kafka: the connector drops them with a Filter
-- transform on the <prefix>.public.debezium_signal topic (connectors/seat-outbox.json).
create table debezium_signal (
  id    varchar(64) primary key,
  type  varchar(32) not null,
  data  varchar(2048)
);

grant select, insert on debezium_signal to stagefront_debezium;

alter publication stagefront_outbox add table debezium_signal;
