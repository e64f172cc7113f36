-- Attempts that count against a record, kept where a crash cannot erase them. A row is written
-- before an attempt that may be a redelivery after a crash (the first group of a partition after
-- it was assigned, and every attempt of a record processed alone) and deleted when the offsets
-- past it are committed. An attempt that failed for the infrastructure's reasons is not counted.
-- A row still there when the partition comes back means the process died during that attempt.
create table delivery_attempts (
  consumer      text not null,
  topic         text not null,
  partition     int not null,
  first_offset  bigint not null,
  scope         text not null check (scope in ('group', 'record')),
  attempts      int not null,
  -- The last poison failure, kept for the dead letter's reason when the limit is reached.
  last_reason   text,
  last_error    text,
  updated_at    timestamptz not null default now(),
  primary key (consumer, topic, partition, first_offset, scope)
);

-- The delivery that claimed an external effect: it may stamp (or retry) its own claim at once;
-- any other delivery waits until the claim counts as abandoned.
alter table inbox add column claim_token text;
