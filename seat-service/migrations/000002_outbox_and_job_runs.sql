-- The transactional outbox: one row per event, written in the same transaction as the business
-- change. Debezium reads inserts of this table from the WAL and the Outbox Event Router turns
-- each row into a CloudEvent (columns ce_* become headers, payload the value).
create table outbox (
  id              uuid primary key,              -- ce_id: chosen by the writer, never regenerated
  aggregatetype   text not null,                 -- routes to topic <prefix>.<aggregatetype>
  aggregateid     text not null,                 -- record key (ordering is per key)
  type            text not null,                 -- ce_type
  payload         bytea not null,                -- Avro, schema registry wire format
  ce_source       text not null,
  ce_specversion  text not null default '1.0',
  ce_time         text not null,                 -- RFC 3339, as the CloudEvent carries it
  ce_subject      text not null,
  content_type    text not null default 'application/avro',
  created_at      timestamptz not null default now()
);
-- Retention purges and reconciliation read by time.
create index outbox_created_at on outbox (created_at);

-- Scheduled work claims each run here (job name + run slot, insert on conflict do nothing) and
-- stamps the outcome, so a watchdog outside the job's process can see a run overdue.
create table job_runs (
  job_name     text not null,
  run_slot     timestamptz not null,
  claimed_by   text not null,
  started_at   timestamptz not null default now(),
  finished_at  timestamptz,
  outcome      text check (outcome in ('succeeded', 'failed')),
  detail       jsonb,
  primary key (job_name, run_slot)
);
create index job_runs_unfinished on job_runs (job_name, started_at) where finished_at is null;
