import { hostname } from 'node:os';
import type { Logger } from '../lib/logger.js';
import type { Pool } from '../lib/postgres.js';
import { errorMessage } from '../lib/errors.js';
import { sleep } from '../lib/wait.js';

export const SWEEPER_JOB = 'hold-sweeper';

/** Due holds expired per transaction unless told otherwise. */
const DEFAULT_SWEEP_BATCH = 500;

/** The run slot a moment belongs to: runs are every `intervalMs`, aligned to the epoch. */
function runSlot(at: Date, intervalMs: number): Date {
  return new Date(Math.floor(at.getTime() / intervalMs) * intervalMs);
}

/**
 * Claims one run of a job in job_runs (job name + run slot, insert on conflict do nothing):
 * of several sweepers, exactly one runs each slot. True when this process got it.
 */
async function claimJobRun(pool: Pool, job: string, slot: Date, claimedBy: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    /* sql */ `insert into job_runs (job_name, run_slot, claimed_by) values ($1, $2, $3) on conflict do nothing`,
    [job, slot, claimedBy],
  );
  return rowCount === 1;
}

async function finishJobRun(
  pool: Pool,
  job: string,
  slot: Date,
  outcome: 'succeeded' | 'failed',
  detail: object,
): Promise<void> {
  await pool.query(
    /* sql */ `update job_runs set finished_at = now(), outcome = $3, detail = $4 where job_name = $1 and run_slot = $2`,
    [job, slot, outcome, JSON.stringify(detail)],
  );
}

/** What one run slot came to, for metrics: this process ran it, another one had it, or the claim itself failed. */
export interface SweepRun {
  slot: Date;
  outcome: 'succeeded' | 'failed' | 'claimed_elsewhere' | 'claim_failed';
  expired: number;
  durationMs: number;
}

export interface HoldSweeperOptions {
  pool: Pool;
  expireDueHolds: (limit: number) => Promise<number>;
  intervalMs: number;
  logger: Logger;
  signal: AbortSignal;
  /** Holds expired per transaction (default 500). */
  batchSize?: number;
  /** Called after every run slot. */
  onRun?: (run: SweepRun) => void;
}

/** Expires due holds in batches until none is due, then stamps the run. Never throws. */
async function sweepClaimedSlot(
  options: HoldSweeperOptions,
  slot: Date,
): Promise<{ outcome: 'succeeded' | 'failed'; expired: number }> {
  const batchSize = options.batchSize ?? DEFAULT_SWEEP_BATCH;
  let expired = 0;
  try {
    for (
      let batch = await options.expireDueHolds(batchSize);
      batch > 0;
      batch = await options.expireDueHolds(batchSize)
    )
      expired += batch;
    await finishJobRun(options.pool, SWEEPER_JOB, slot, 'succeeded', { expired });
    if (expired > 0) options.logger.info({ job: SWEEPER_JOB, expired, slot }, 'expired due holds');
    return { outcome: 'succeeded', expired };
  } catch (err) {
    options.logger.error({ err, job: SWEEPER_JOB, slot }, 'hold sweep failed');
    await finishJobRun(options.pool, SWEEPER_JOB, slot, 'failed', { expired, error: errorMessage(err) }).catch(
      () => undefined,
    );
    return { outcome: 'failed', expired };
  }
}

/** Claims and runs one slot. A claim that fails (database down) is logged and the loop goes on. */
async function runOneSlot(options: HoldSweeperOptions, slot: Date, claimedBy: string): Promise<SweepRun> {
  const began = performance.now();
  const took = () => performance.now() - began;
  let claimed: boolean;
  try {
    claimed = await claimJobRun(options.pool, SWEEPER_JOB, slot, claimedBy);
  } catch (err) {
    options.logger.error({ err, job: SWEEPER_JOB, slot }, 'cannot claim the sweeper run; trying the next slot');
    return { slot, outcome: 'claim_failed', expired: 0, durationMs: took() };
  }
  if (!claimed) return { slot, outcome: 'claimed_elsewhere', expired: 0, durationMs: took() };
  const { outcome, expired } = await sweepClaimedSlot(options, slot);
  return { slot, outcome, expired, durationMs: took() };
}

/**
 * The hold sweeper: every `intervalMs` it claims the run, expires due holds (in batches until none
 * are due) and stamps the outcome. A failed run is stamped failed and the loop goes on.
 * Returns once `signal` aborts, after the run in progress.
 */
export async function runHoldSweeper(options: HoldSweeperOptions): Promise<void> {
  const claimedBy = `${hostname()}:${process.pid}`;
  while (!options.signal.aborted) {
    const slot = runSlot(new Date(), options.intervalMs);
    options.onRun?.(await runOneSlot(options, slot, claimedBy));
    const next = slot.getTime() + options.intervalMs - Date.now();
    await sleep(Math.max(10, next), { signal: options.signal }).catch(() => undefined);
  }
}
