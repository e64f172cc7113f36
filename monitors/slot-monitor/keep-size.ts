/**
 * Keeps max_slot_wal_keep_size at its target: in enforce mode it sets a differing value with
 * ALTER SYSTEM + pg_reload_conf() (as the monitor role, through GRANT ALTER SYSTEM ON PARAMETER)
 * and says so with an info alert; in check-only mode, or when setting fails, it raises a warning.
 */
import pg from 'pg';
import { errorMessage } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import { waitFor } from '../../lib/wait.js';
import type { AlertCandidate } from './alert-tracker.js';
import { formatBytes, postgresMegabytes } from './byte-size.js';
import type { Queryable } from './monitor-role.js';
import { readMaxSlotWalKeepSize } from './slot-readings.js';

export type KeepSizeMode = 'enforce' | 'check';

export interface KeepSizeGuardOptions {
  targetBytes: number;
  mode: KeepSizeMode;
  /** How long the info alert about a correction stays firing. */
  noticeDurationMs: number;
  logger: Logger;
  onCorrected?: (fromBytes: number, toBytes: number) => void;
}

interface Correction {
  fromBytes: number;
  at: Date;
}

/** ALTER SYSTEM cannot take parameters; the value is a number we formatted, quoted as a literal anyway. */
export async function setMaxSlotWalKeepSize(db: Queryable, bytes: number): Promise<void> {
  await db.query(/* sql */ `alter system set max_slot_wal_keep_size = ${pg.escapeLiteral(postgresMegabytes(bytes))}`);
  await db.query(/* sql */ `select pg_catalog.pg_reload_conf()`);
  await waitFor(async () => (await readMaxSlotWalKeepSize(db)) === bytes, {
    timeoutMs: 5_000,
    intervalMs: 50,
    description: `max_slot_wal_keep_size to read back as ${postgresMegabytes(bytes)} after pg_reload_conf()`,
  });
}

export class KeepSizeGuard {
  readonly #options: KeepSizeGuardOptions;
  #lastCorrection: Correction | undefined;
  /** The last error of ALTER SYSTEM, logged once rather than on every poll. */
  #lastFailure: string | undefined;

  constructor(options: KeepSizeGuardOptions) {
    this.#options = options;
  }

  /** Compares the database's value with the target, corrects it in enforce mode, and returns the alerts that hold. */
  async check(db: Queryable, currentBytes: number, now: Date): Promise<AlertCandidate[]> {
    const { targetBytes, mode } = this.#options;
    if (currentBytes === targetBytes) return this.#noticeCandidates(now);
    if (mode === 'check') return [...this.#noticeCandidates(now), this.#mismatch(currentBytes, 'check-only mode: the monitor does not change it')];
    try {
      await setMaxSlotWalKeepSize(db, targetBytes);
    } catch (err) {
      const message = errorMessage(err);
      if (message !== this.#lastFailure) this.#options.logger.error({ err, currentBytes, targetBytes }, 'could not set max_slot_wal_keep_size');
      this.#lastFailure = message;
      return [...this.#noticeCandidates(now), this.#mismatch(currentBytes, `setting it failed: ${errorMessage(err)}`)];
    }
    this.#lastFailure = undefined;
    this.#lastCorrection = { fromBytes: currentBytes, at: now };
    this.#options.onCorrected?.(currentBytes, targetBytes);
    this.#options.logger.info(
      { fromBytes: currentBytes, toBytes: targetBytes },
      `set max_slot_wal_keep_size from ${formatBytes(currentBytes)} to ${formatBytes(targetBytes)}`,
    );
    return this.#noticeCandidates(now);
  }

  #mismatch(currentBytes: number, why: string): AlertCandidate {
    const target = formatBytes(this.#options.targetBytes);
    const current = formatBytes(currentBytes);
    const risk = currentBytes < 0 ? ' With no cap, a dead slot can fill the disk and stop the seat database.' : '';
    return {
      name: 'SlotKeepSizeMismatch',
      labels: {},
      summary: `max_slot_wal_keep_size is ${current} on the seat database, not the required ${target}.${risk}`,
      description: `max_slot_wal_keep_size is ${current}; the monitor's target is ${target} (SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE); ${why}.`,
    };
  }

  #noticeCandidates(now: Date): AlertCandidate[] {
    const correction = this.#lastCorrection;
    if (!correction || now.getTime() - correction.at.getTime() >= this.#options.noticeDurationMs) return [];
    const from = formatBytes(correction.fromBytes);
    const to = formatBytes(this.#options.targetBytes);
    return [
      {
        name: 'SlotKeepSizeCorrected',
        labels: {},
        summary: `The slot monitor changed max_slot_wal_keep_size from ${from} to ${to} on the seat database.`,
        description: `At ${correction.at.toISOString()} max_slot_wal_keep_size was ${from}; the monitor ran ALTER SYSTEM SET max_slot_wal_keep_size = '${postgresMegabytes(this.#options.targetBytes)}' and pg_reload_conf().`,
      },
    ];
  }
}
