-- What the outbox purge must know before it deletes a row (docs/seat-service.md#outbox-retention-and-the-purge):
-- that the connector's slot has streamed it, and that a reconciliation saw every consumer handle it.
--
-- xact_id: the id of the transaction that wrote the row (pg_current_xact_id, 64 bits, never wraps).
-- A row whose transaction id is below a snapshot's xmin committed before that snapshot was taken.
-- Added without a default first, so the table is not rewritten: rows written before this migration
-- keep NULL, and the purge counts them as 0 (they committed before this ALTER took its lock, so
-- before every checkpoint and every reconciliation recorded below). bigint, not xid8: Debezium
-- reads every column of the outbox, and bigint is a type it knows.
alter table outbox add column xact_id bigint;
alter table outbox alter column xact_id set default (pg_current_xact_id()::text::bigint);

-- A purge checkpoint: at taken_at, every transaction with an id below snapshot_xmin had ended, so
-- its commit record lies before wal_lsn. Once the slot's confirmed_flush_lsn reaches wal_lsn,
-- every such row is in Kafka. Each purge adds one and drops those older than the one it used.
create table outbox_purge_checkpoints (
  taken_at       timestamptz not null default now(),
  wal_lsn        pg_lsn not null,
  snapshot_xmin  bigint not null
);
create index outbox_purge_checkpoints_lsn on outbox_purge_checkpoints (wal_lsn);
-- The first one, for the rows already here (a purge can use it as soon as the slot passes it).
insert into outbox_purge_checkpoints (wal_lsn, snapshot_xmin)
  select pg_current_wal_insert_lsn(), pg_snapshot_xmin(pg_current_snapshot())::text::bigint;

-- A clean reconciliation (npm run reconcile, every consumer, no gaps): every outbox row created in
-- [covered_from, covered_to) whose transaction id is below snapshot_xmin (read before the run read
-- the outbox, so the run saw every such row) was in every consumer's inbox at reconciled_at.
create table outbox_reconciled (
  reconciled_at  timestamptz not null default now(),
  covered_from   timestamptz not null,
  covered_to     timestamptz not null,
  snapshot_xmin  bigint not null,
  consumers      text[] not null,
  check (covered_to > covered_from)
);
create index outbox_reconciled_covered_to on outbox_reconciled (covered_to);

-- The purge runs as the service role: it reads both, adds and drops checkpoints, drops
-- reconciliations that no longer cover any row. Reconciliation records through the connector's
-- role on the primary (the role the lost-slot recovery reconciles with), which may only add.
grant select, insert, delete on outbox_purge_checkpoints to stagefront_service;
grant select, delete on outbox_reconciled to stagefront_service;
grant select, insert on outbox_reconciled to stagefront_debezium;
