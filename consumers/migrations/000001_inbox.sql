-- The inbox: one row per (consumer, event id) this consumer database has accepted. Writing the
-- row in the same transaction as the effect makes a redelivered event change nothing.
-- Effects that leave the building (email) use the status: claimed before the send, sent after;
-- a claim older than the consumer's limit counts as abandoned and is claimed again.
create table inbox (
  consumer          text not null,
  event_id          text not null,
  event_type        text not null,
  source_topic      text not null,
  source_partition  int not null,
  source_offset     bigint not null,
  status            text not null default 'applied' check (status in ('applied', 'claimed', 'sent')),
  claims            int not null default 0,
  received_at       timestamptz not null default now(),
  claimed_at        timestamptz,
  completed_at      timestamptz,
  primary key (consumer, event_id)
);
-- Reconciliation and clean-up read by time.
create index inbox_received_at on inbox (received_at);
-- On-call: claims still open (a send in flight, or abandoned).
create index inbox_open_claims on inbox (consumer, claimed_at) where status = 'claimed';
