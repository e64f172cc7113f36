-- What the redrive command put back on a source topic: one row per dead letter (its topic,
-- partition, offset), so a dead letter is redriven once unless asked again, and on-call can see
-- who redrove what and when.
create table redrives (
  dlq_topic        text not null,
  dlq_partition    int not null,
  dlq_offset       bigint not null,
  event_id         text,
  reason           text not null,
  source_topic     text not null,
  redriven_by      text not null,
  run_id           uuid not null,
  redriven_at      timestamptz not null default now(),
  times            int not null default 1,
  primary key (dlq_topic, dlq_partition, dlq_offset)
);
create index redrives_event_id on redrives (event_id);
create index redrives_run on redrives (run_id);
