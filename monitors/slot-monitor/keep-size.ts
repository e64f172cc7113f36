/**
 * Keeps max_slot_wal_keep_size at its target without ever invalidating a slot to do it
 * (keep-size-decision.ts decides): in enforce mode it sets the decided value with ALTER SYSTEM +
 * pg_reload_conf() (as the monitor role, through GRANT ALTER SYSTEM ON PARAMETER) and says so with an
 * info alert; a cap held above the target for a slot that needs it is a warning (SlotKeepSizeRaised);
 * in check-only mode, or when setting fails, a differing value is a warning (SlotKeepSizeMismatch).
 */
import pg from 'pg';
import { errorMessage } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import { waitFor } from '../../lib/wait.js';
import type { AlertCandidate } from './alert-tracker.js';
import { formatBytes, postgresMegabytes } from './byte-size.js';
import { effectiveMarginBytes, keepSizeDecision, type RaiseHeld, type SlotRetention } from './keep-size-decision.js';
import type { Queryable } from './monitor-role.js';
import { readMaxSlotWalKeepSize } from './slot-readings.js';
import { SLOT_ALERTS } from '../alerts/slot-alerts.js';

type KeepSizeMode = 'enforce' | 'check';

export interface KeepSizeGuardOptions {
  targetBytes: number;
  /** A cap is set only when every slot retains at least this much less (SLOT_MONITOR_KEEP_SIZE_MARGIN). */
  marginBytes: number;
  mode: KeepSizeMode;
  /** How long the info alert about a correction stays firing. */
  noticeDurationMs: number;
  logger: Logger;
  onCorrected?: (fromBytes: number, toBytes: number) => void;
  /** Called on every check: the raise held above the target, or undefined when none is. */
  onRaiseHeld?: (raise: RaiseHeld | undefined) => void;
}

interface Correction {
  fromBytes: number;
  toBytes: number;
  at: Date;
}

/** ALTER SYSTEM cannot take parameters; the value is a number we formatted, quoted as a literal anyway. */
/** wal_segment_size in bytes (pg_settings gives it in bytes since Postgres 11). */
async function walSegmentSize(db: Queryable): Promise<number> {
  const result = await db.query(/* sql */ `SELECT setting AS bytes FROM pg_settings WHERE name = 'wal_segment_size'`);
  return Number((result.rows[0] as { bytes?: string } | undefined)?.bytes ?? 0);
}

async function setMaxSlotWalKeepSize(db: Queryable, bytes: number): Promise<void> {
  await db.query(/* sql */ `alter system set max_slot_wal_keep_size = ${pg.escapeLiteral(postgresMegabytes(bytes))}`);
  await db.query(/* sql */ `select pg_catalog.pg_reload_conf()`);
  await waitFor(async () => (await readMaxSlotWalKeepSize(db)) === bytes, {
    timeoutMs: 5_000,
    intervalMs: 50,
    description: `max_slot_wal_keep_size to read back as ${postgresMegabytes(bytes)} after pg_reload_conf()`,
  });
}

function slotsRetaining(raise: RaiseHeld): string {
  return raise.slots
    .map((slot) => {
      const safe = slot.safeWalSizeBytes === null ? 'null' : formatBytes(slot.safeWalSizeBytes);
      return `slot ${slot.slotName} retains ${formatBytes(slot.retainedBytes)} (wal_status ${slot.walStatus ?? 'null'}, safe_wal_size ${safe})`;
    })
    .join('; ');
}

export class KeepSizeGuard {
  readonly #options: KeepSizeGuardOptions;
  #lastCorrection: Correction | undefined;
  /** The cap the monitor set instead of the target when it found -1 and a slot retaining more. */
  #ownCap: number | undefined;
  /** The cluster's WAL segment size (fixed when it was created), read once. */
  #walSegmentBytes: number | undefined;
  /** The last error of ALTER SYSTEM, logged once rather than on every poll. */
  #lastFailure: string | undefined;

  constructor(options: KeepSizeGuardOptions) {
    this.#options = options;
  }

  /** Decides on the database's value, sets it in enforce mode, and returns the alerts that hold. */
  async check(
    db: Queryable,
    currentBytes: number,
    slots: readonly SlotRetention[],
    now: Date,
  ): Promise<AlertCandidate[]> {
    const { targetBytes, marginBytes, mode } = this.#options;
    this.#walSegmentBytes ??= await walSegmentSize(db);
    const decision = keepSizeDecision({
      currentBytes,
      targetBytes,
      marginBytes,
      walSegmentBytes: this.#walSegmentBytes,
      slots,
    });
    if (decision.action === 'leave') return this.#report(now, undefined);
    if (decision.action === 'hold') return this.#report(now, decision.raise, this.#raised(decision.raise));
    if (mode === 'check') {
      const why = 'check-only mode: the monitor does not change it';
      return this.#report(now, undefined, this.#mismatch(currentBytes, decision.toBytes, why, decision.raise));
    }
    try {
      await setMaxSlotWalKeepSize(db, decision.toBytes);
    } catch (err) {
      const message = errorMessage(err);
      if (message !== this.#lastFailure)
        this.#options.logger.error(
          { err, currentBytes, toBytes: decision.toBytes },
          'could not set max_slot_wal_keep_size',
        );
      this.#lastFailure = message;
      return this.#report(
        now,
        undefined,
        this.#mismatch(currentBytes, decision.toBytes, `setting it failed: ${message}`, decision.raise),
      );
    }
    this.#lastFailure = undefined;
    this.#ownCap = decision.raise ? decision.toBytes : undefined;
    this.#lastCorrection = { fromBytes: currentBytes, toBytes: decision.toBytes, at: now };
    this.#options.onCorrected?.(currentBytes, decision.toBytes);
    this.#options.logger.info(
      { fromBytes: currentBytes, toBytes: decision.toBytes, targetBytes },
      `set max_slot_wal_keep_size from ${formatBytes(currentBytes)} to ${formatBytes(decision.toBytes)}`,
    );
    return this.#report(now, decision.raise, ...(decision.raise ? [this.#raised(decision.raise)] : []));
  }

  #report(now: Date, raise: RaiseHeld | undefined, ...alerts: AlertCandidate[]): AlertCandidate[] {
    this.#options.onRaiseHeld?.(raise);
    return [...this.#noticeCandidates(now), ...alerts];
  }

  #raised(raise: RaiseHeld): AlertCandidate {
    const { targetBytes, mode } = this.#options;
    const marginBytes = effectiveMarginBytes({
      marginBytes: this.#options.marginBytes,
      walSegmentBytes: this.#walSegmentBytes,
    });
    const cap = formatBytes(raise.capBytes);
    const target = formatBytes(targetBytes);
    const above = formatBytes(raise.aboveTargetBytes);
    const restoreAt = formatBytes(raise.restoreAtBytes);
    const largest = raise.slots[0];
    const why = largest
      ? `slot ${largest.slotName} retains ${formatBytes(largest.retainedBytes)}`
      : 'a slot retains more than the target allows';
    const ownCap = this.#ownCap === raise.capBytes;
    const restore =
      mode === 'check'
        ? `check-only mode: set it back to ${target} by hand once every slot retains at most ${restoreAt}`
        : `the monitor restores ${target} by itself once every slot retains at most ${restoreAt}`;
    const summary = SLOT_ALERTS.SlotKeepSizeRaised.summary({ ownCap, cap, above, target, because: why, restore });
    return {
      name: 'SlotKeepSizeRaised',
      labels: {},
      summary,
      description: [
        `max_slot_wal_keep_size is ${cap}; the target (SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE) is ${target}.`,
        `Setting the target now would invalidate these slots at the next checkpoint: ${slotsRetaining(raise)}.`,
        `The target comes back when every slot retains at most the target minus the margin ${formatBytes(marginBytes)} (SLOT_MONITOR_KEEP_SIZE_MARGIN), ${restoreAt}.`,
      ].join(' '),
    };
  }

  #mismatch(currentBytes: number, toBytes: number, why: string, raise: RaiseHeld | undefined): AlertCandidate {
    const target = formatBytes(this.#options.targetBytes);
    const current = formatBytes(currentBytes);
    const value = raise
      ? ` Set it to ${formatBytes(toBytes)}, not the target: ${slotsRetaining(raise)}, and a cap below a slot's retained WAL invalidates it at the next checkpoint.`
      : '';
    return {
      name: 'SlotKeepSizeMismatch',
      labels: {},
      summary: SLOT_ALERTS.SlotKeepSizeMismatch.summary({
        current,
        target,
        uncapped: (clause) => (currentBytes < 0 ? clause : ''),
      }),
      description: `max_slot_wal_keep_size is ${current}; the monitor's target is ${target} (SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE); ${why}.${value}`,
    };
  }

  #noticeCandidates(now: Date): AlertCandidate[] {
    const correction = this.#lastCorrection;
    if (!correction || now.getTime() - correction.at.getTime() >= this.#options.noticeDurationMs) return [];
    const from = formatBytes(correction.fromBytes);
    const to = formatBytes(correction.toBytes);
    return [
      {
        name: 'SlotKeepSizeCorrected',
        labels: {},
        summary: SLOT_ALERTS.SlotKeepSizeCorrected.summary({ from, to }),
        description: `At ${correction.at.toISOString()} max_slot_wal_keep_size was ${from}; the monitor ran ALTER SYSTEM SET max_slot_wal_keep_size = '${postgresMegabytes(correction.toBytes)}' and pg_reload_conf() (its target is ${formatBytes(this.#options.targetBytes)}).`,
      },
    ];
  }
}
