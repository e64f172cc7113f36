/**
 * The outbox purge: reads what decidePurge needs (the connector's slot, the purge checkpoints, the
 * newest clean reconciliation), deletes what it allows `batchSize` rows per statement, and leaves
 * a checkpoint for the next run. The publication publishes inserts only, so the deletes never
 * reach Kafka. Why each condition is there: docs/seat-service.md#outbox-retention-and-the-purge.
 */
import type { Logger } from '../lib/logger.js';
import type { Pool } from '../lib/postgres.js';
import {
  decidePurge,
  type PurgeCheckpoint,
  type PurgeDecision,
  type PurgeInputs,
  type SkipReason,
  type SlotReading,
} from './purge-decision.js';

export interface PurgeOptions {
  retentionMs: number;
  batchSize: number;
  /** The outbox connector's replication slot (its slot.name). */
  slotName: string;
  logger: Logger;
}

export type PurgeOutcome = { purged: number } | { purged: 0; skipped: SkipReason; sentence: string };

async function readSlot(pool: Pool, slotName: string): Promise<SlotReading> {
  const { rows } = await pool.query<{ wal_status: string | null; active: boolean; confirmed: string | null }>(
    /* sql */ `select wal_status, active, confirmed_flush_lsn::text as confirmed from pg_replication_slots where slot_name = $1`,
    [slotName],
  );
  const row = rows[0];
  return row === undefined
    ? { exists: false }
    : { exists: true, walStatus: row.wal_status, active: row.active, confirmedFlushLsn: row.confirmed };
}

async function readCheckpoints(pool: Pool): Promise<PurgeCheckpoint[]> {
  const { rows } = await pool.query<{ taken_at: Date; wal_lsn: string; snapshot_xmin: string }>(
    /* sql */ `select taken_at, wal_lsn::text, snapshot_xmin::text from outbox_purge_checkpoints`,
  );
  return rows.map((row) => ({ takenAt: row.taken_at, walLsn: row.wal_lsn, snapshotXmin: BigInt(row.snapshot_xmin) }));
}

async function readPurgeInputs(
  pool: Pool,
  options: Pick<PurgeOptions, 'retentionMs' | 'slotName'>,
): Promise<PurgeInputs> {
  const [slot, checkpoints, clock] = await Promise.all([
    readSlot(pool, options.slotName),
    readCheckpoints(pool),
    pool.query<{ now: Date; reconciled_through: Date | null }>(
      /* sql */ `select now() as now, (select max(covered_to) from outbox_reconciled) as reconciled_through`,
    ),
  ]);
  const row = clock.rows[0];
  if (row === undefined) throw new Error('select now() returned no row');
  return {
    slotName: options.slotName,
    slot,
    checkpoints,
    reconciledThrough: row.reconciled_through ?? undefined,
    now: row.now,
    retentionMs: options.retentionMs,
  };
}

/**
 * A checkpoint for a later run: the statement's snapshot is taken before the insert LSN is read,
 * so every transaction below the snapshot's xmin wrote its commit record before that LSN.
 */
async function recordCheckpoint(pool: Pool): Promise<void> {
  await pool.query(/* sql */ `insert into outbox_purge_checkpoints (wal_lsn, snapshot_xmin)
               select pg_current_wal_insert_lsn(), pg_snapshot_xmin(pg_current_snapshot())::text::bigint`);
}

/** Rows past the retention, below the confirmed checkpoint, and seen in every inbox by a clean reconciliation. */
async function deleteBatch(
  pool: Pool,
  decision: Extract<PurgeDecision, { action: 'purge' }>,
  batchSize: number,
): Promise<number> {
  const { rowCount } = await pool.query(
    /* sql */ `delete from outbox where id in (
       select o.id from outbox o
        where o.created_at < $1 and coalesce(o.xact_id, 0) < $2::bigint
          and exists (select 1 from outbox_reconciled r
                       where o.created_at >= r.covered_from and o.created_at < r.covered_to
                         and coalesce(o.xact_id, 0) < r.snapshot_xmin)
        order by o.created_at limit $3)`,
    [decision.createdBefore, decision.xactBefore.toString(), batchSize],
  );
  return rowCount ?? 0;
}

/**
 * Checkpoints older than the one used are superseded by it. A reconciliation whose window ends
 * at or before the oldest row left covers no row (a row written later with an older created_at
 * was still running when that reconciliation started, so it never counted as covered by it).
 */
async function dropSupersededCheckpoints(pool: Pool, below: string): Promise<void> {
  await pool.query(/* sql */ `delete from outbox_purge_checkpoints where wal_lsn < $1::pg_lsn`, [below]);
}

async function pruneBookkeeping(pool: Pool, used: PurgeCheckpoint): Promise<void> {
  await dropSupersededCheckpoints(pool, used.walLsn);
  await pool.query(/* sql */ `delete from outbox_reconciled
               where covered_to <= (select min(created_at) from outbox)
                 and reconciled_at < (select max(reconciled_at) from outbox_reconciled)`);
}

export async function purgeOutbox(pool: Pool, options: PurgeOptions): Promise<PurgeOutcome> {
  const { logger, slotName } = options;
  const decision = decidePurge(await readPurgeInputs(pool, options));
  if (decision.action === 'skip') {
    if (decision.forgetCheckpoints) await pool.query(/* sql */ `delete from outbox_purge_checkpoints`);
    if (decision.supersededBelow !== undefined) await dropSupersededCheckpoints(pool, decision.supersededBelow);
    if (decision.recordCheckpoint) await recordCheckpoint(pool);
    logger.warn({ slot: slotName, reason: decision.reason }, `outbox purge skipped: ${decision.sentence}`);
    return { purged: 0, skipped: decision.reason, sentence: decision.sentence };
  }
  let purged = 0;
  for (;;) {
    const deleted = await deleteBatch(pool, decision, options.batchSize);
    purged += deleted;
    if (deleted < options.batchSize) break;
  }
  await pruneBookkeeping(pool, decision.checkpoint);
  await recordCheckpoint(pool);
  logger.info(
    {
      purged,
      slot: slotName,
      retentionMs: options.retentionMs,
      createdBefore: decision.createdBefore.toISOString(),
      checkpointLsn: decision.checkpoint.walLsn,
    },
    'outbox purge finished',
  );
  return { purged };
}
