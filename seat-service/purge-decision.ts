/**
 * Whether the outbox purge may delete anything now, and up to where: a pure function of what the
 * purge read (the connector's slot, the purge checkpoints, the newest clean reconciliation).
 *
 * A row may go only when all three hold (the reasoning: docs/seat-service.md#outbox-retention-and-the-purge):
 * - the slot streamed it: a checkpoint C has wal_lsn ≤ the slot's confirmed_flush_lsn, and the
 *   row's transaction id is below C's snapshot xmin (so it committed before C's LSN);
 * - a clean reconciliation saw it in every inbox (checked per row in SQL; here only whether one
 *   is recorded at all, and its end as an upper bound);
 * - it is older than the retention.
 * A slot that is missing, lost, about to be lost or has no reader stops the purge altogether.
 */

export type SlotReading =
  { exists: false } | { exists: true; walStatus: string | null; active: boolean; confirmedFlushLsn: string | null };

export interface PurgeCheckpoint {
  takenAt: Date;
  /** pg_lsn text, e.g. 16/B374D848. */
  walLsn: string;
  /** Every transaction with a smaller id had ended when the checkpoint was taken. */
  snapshotXmin: bigint;
}

export interface PurgeInputs {
  slotName: string;
  slot: SlotReading;
  checkpoints: readonly PurgeCheckpoint[];
  /** covered_to of the newest clean reconciliation recorded, undefined when none is. */
  reconciledThrough: Date | undefined;
  /** The seat database's clock. */
  now: Date;
  retentionMs: number;
}

export type SkipReason =
  'slot_missing' | 'slot_lost' | 'slot_unreserved' | 'slot_inactive' | 'no_checkpoint_confirmed' | 'not_reconciled';

export type PurgeDecision =
  | {
      action: 'skip';
      reason: SkipReason;
      /** One sentence: why nothing is deleted and what to do. */
      sentence: string;
      /** A slot that replaces a missing or lost one confirms nothing about what this one streamed. */
      forgetCheckpoints: boolean;
      /** Leave a checkpoint for a later run: only while the slot is there and streaming. */
      recordCheckpoint: boolean;
      /** Checkpoints before this LSN are superseded by a confirmed one and can go. */
      supersededBelow?: string;
    }
  | {
      action: 'purge';
      /** Rows created before this (the retention, and never past the newest reconciliation). */
      createdBefore: Date;
      /** Rows whose transaction id is below this (the confirmed checkpoint's snapshot xmin). */
      xactBefore: bigint;
      checkpoint: PurgeCheckpoint;
      recordCheckpoint: true;
    };

/** A pg_lsn ("16/B374D848") as a number that compares like the LSN. */
export function lsnValue(lsn: string): bigint {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(lsn);
  if (match === null) throw new Error(`"${lsn}" is not a pg_lsn`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

function skip(
  reason: SkipReason,
  sentence: string,
  flags: { forgetCheckpoints?: boolean; recordCheckpoint?: boolean; supersededBelow?: string } = {},
): PurgeDecision {
  const { forgetCheckpoints = false, recordCheckpoint = false, supersededBelow } = flags;
  return {
    action: 'skip',
    reason,
    sentence,
    forgetCheckpoints,
    recordCheckpoint,
    ...(supersededBelow === undefined ? {} : { supersededBelow }),
  };
}

type PresentSlot = Extract<SlotReading, { exists: true }>;

function missingSlot(slotName: string): PurgeDecision {
  return skip(
    'slot_missing',
    `the outbox connector's slot ${slotName} does not exist, so nothing shows which outbox rows reached Kafka; recover it (npm run slot-recovery -- --since auto, docs/recovery.md) or set SLOT_NAME to the connector's slot.name.`,
    { forgetCheckpoints: true },
  );
}

function slotSkip(slotName: string, slot: PresentSlot): PurgeDecision | undefined {
  if (slot.walStatus === 'lost') {
    return skip(
      'slot_lost',
      `slot ${slotName} is lost: the rows it never streamed are what the lost-slot recovery re-emits, so they stay; run npm run slot-recovery -- --since auto --apply (docs/recovery.md).`,
      { forgetCheckpoints: true },
    );
  }
  if (slot.walStatus === 'unreserved') {
    return skip(
      'slot_unreserved',
      `slot ${slotName} is unreserved, about to be lost, so the rows it has not streamed may soon be the recovery's only copy; bring the connector back or raise max_slot_wal_keep_size (docs/operations.md#slotwalunreserved).`,
    );
  }
  if (!slot.active) {
    return skip(
      'slot_inactive',
      `slot ${slotName} has no reader (the connector is stopped or failing), so it may never stream the rows it has not confirmed; start the connector (npm run connector -- status) and purge again.`,
    );
  }
  return undefined;
}

/** The newest checkpoint the slot has confirmed, if any. */
export function confirmedCheckpoint(
  checkpoints: readonly PurgeCheckpoint[],
  confirmedFlushLsn: string | null,
): PurgeCheckpoint | undefined {
  if (confirmedFlushLsn === null) return undefined;
  const confirmed = lsnValue(confirmedFlushLsn);
  let best: PurgeCheckpoint | undefined;
  for (const checkpoint of checkpoints) {
    const at = lsnValue(checkpoint.walLsn);
    if (at <= confirmed && (best === undefined || at > lsnValue(best.walLsn))) best = checkpoint;
  }
  return best;
}

export function decidePurge(inputs: PurgeInputs): PurgeDecision {
  const { slotName, slot } = inputs;
  if (!slot.exists) return missingSlot(slotName);
  const slotProblem = slotSkip(slotName, slot);
  if (slotProblem !== undefined) return slotProblem;
  const checkpoint = confirmedCheckpoint(inputs.checkpoints, slot.confirmedFlushLsn);
  if (checkpoint === undefined) {
    return skip(
      'no_checkpoint_confirmed',
      `slot ${slotName} (confirmed up to ${slot.confirmedFlushLsn ?? 'nothing'}) has not yet passed a purge checkpoint, so no row is shown to be in Kafka; nothing to fix: this run leaves a checkpoint that a later run can use.`,
      { recordCheckpoint: true },
    );
  }
  if (inputs.reconciledThrough === undefined) {
    return skip(
      'not_reconciled',
      "no clean reconciliation is recorded, so no outbox row is shown to be in every consumer's inbox; run npm run reconcile with RECONCILE_COVERAGE_DB_URL (or RECONCILE_SEAT_DB_URL) reaching the seat database's primary until it reports no gaps.",
      { recordCheckpoint: true, supersededBelow: checkpoint.walLsn },
    );
  }
  const retentionEnd = inputs.now.getTime() - inputs.retentionMs;
  const createdBefore = new Date(Math.min(retentionEnd, inputs.reconciledThrough.getTime()));
  return { action: 'purge', createdBefore, xactBefore: checkpoint.snapshotXmin, checkpoint, recordCheckpoint: true };
}
