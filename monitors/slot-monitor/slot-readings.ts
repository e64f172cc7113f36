/**
 * What the monitor reads from the seat database on every poll. Only catalog views and
 * statistics: no business table is ever read.
 */
import type { Queryable } from './monitor-role.js';

export type WalStatus = 'reserved' | 'extended' | 'unreserved' | 'lost';

export interface SlotReading {
  slotName: string;
  slotType: string;
  plugin: string | null;
  database: string | null;
  active: boolean;
  /** null when the slot does not reserve WAL (never used, or invalidated). */
  walStatus: WalStatus | null;
  /** Bytes that can still be written before the slot is past max_slot_wal_keep_size; null when unlimited, lost or reserving nothing. */
  safeWalSizeBytes: number | null;
  /** pg_current_wal_lsn() - restart_lsn: WAL kept on disk for this slot. */
  retainedBytes: number | null;
  /** pg_current_wal_lsn() - confirmed_flush_lsn: how far the reader's acknowledgements trail. */
  confirmedFlushLagBytes: number | null;
}

export interface DatabaseReading {
  takenAt: Date;
  slots: SlotReading[];
  /** The database's max_slot_wal_keep_size in bytes; -1 means unlimited. */
  maxSlotWalKeepSizeBytes: number;
  /** pg_current_wal_lsn() in bytes: WAL written since the cluster was created. */
  walPositionBytes: number;
  /** Rows ever inserted into the outbox (pg_stat_user_tables.n_tup_ins); null when the table does not exist. */
  outboxInserts: number | null;
}

interface SlotRow {
  slot_name: string;
  slot_type: string;
  plugin: string | null;
  database: string | null;
  active: boolean;
  wal_status: WalStatus | null;
  safe_wal_size: string | null;
  retained_bytes: string | null;
  confirmed_flush_lag_bytes: string | null;
}

const SLOTS_SQL = /* sql */ `
  select slot_name, slot_type, plugin, database, active, wal_status,
         safe_wal_size::text as safe_wal_size,
         pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint::text as retained_bytes,
         pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint::text as confirmed_flush_lag_bytes
    from pg_catalog.pg_replication_slots
   order by slot_name`;

function toNumber(text: string | null): number | null {
  return text === null ? null : Number(text);
}

async function readSlots(db: Queryable): Promise<SlotReading[]> {
  const { rows } = await db.query(SLOTS_SQL);
  return (rows as SlotRow[]).map((row) => ({
    slotName: row.slot_name,
    slotType: row.slot_type,
    plugin: row.plugin,
    database: row.database,
    active: row.active,
    walStatus: row.wal_status,
    // A slot that reserves no WAL (wal_status NULL: a physical slot made without immediately_reserve)
    // has no headroom to lose; Postgres still shows a safe_wal_size, counted from LSN 0 and negative.
    safeWalSizeBytes: row.wal_status === null ? null : toNumber(row.safe_wal_size),
    retainedBytes: toNumber(row.retained_bytes),
    confirmedFlushLagBytes: toNumber(row.confirmed_flush_lag_bytes),
  }));
}

/** max_slot_wal_keep_size in bytes (-1: unlimited). pg_settings gives it in its unit, MB. */
export async function readMaxSlotWalKeepSize(db: Queryable): Promise<number> {
  const { rows } = await db.query(
    /* sql */ `select setting, unit from pg_catalog.pg_settings where name = 'max_slot_wal_keep_size'`,
  );
  const row = rows[0] as { setting: string; unit: string | null } | undefined;
  if (!row) throw new Error('max_slot_wal_keep_size is not a setting of this server (Postgres 13 or newer is needed)');
  const value = Number(row.setting);
  if (value < 0) return -1;
  return row.unit === 'MB' ? value * 1024 * 1024 : value;
}

export interface OutboxTable {
  schema: string;
  table: string;
}

/** Rows ever inserted into the outbox, from the statistics collector (no read of the table itself). */
async function readOutboxInserts(db: Queryable, outbox: OutboxTable): Promise<number | null> {
  const { rows } = await db.query(
    /* sql */ `select n_tup_ins::text as inserts from pg_catalog.pg_stat_user_tables where schemaname = $1 and relname = $2`,
    [outbox.schema, outbox.table],
  );
  const row = rows[0] as { inserts: string } | undefined;
  return row ? Number(row.inserts) : null;
}

/** pg_current_wal_lsn() as a byte count, to measure how fast the database writes WAL. */
async function readWalPosition(db: Queryable): Promise<number> {
  const { rows } = await db.query(
    /* sql */ `select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint::text as position`,
  );
  return Number((rows[0] as { position: string }).position);
}

export async function readDatabase(db: Queryable, outbox: OutboxTable): Promise<DatabaseReading> {
  const slots = await readSlots(db);
  const maxSlotWalKeepSizeBytes = await readMaxSlotWalKeepSize(db);
  const walPositionBytes = await readWalPosition(db);
  const outboxInserts = await readOutboxInserts(db, outbox);
  return { takenAt: new Date(), slots, maxSlotWalKeepSizeBytes, walPositionBytes, outboxInserts };
}
