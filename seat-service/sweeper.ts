import { hostname } from 'node:os';
import type { Logger } from '../lib/logger.js';
import type { Pool } from '../lib/postgres.js';
import { errorMessage } from '../lib/errors.js';
import { sleep } from '../lib/wait.js';

export const SWEEPER_JOB = 'hold-sweeper';

/** The run slot a moment belongs to: runs are every `intervalMs`, aligned to the epoch. */
export function runSlot(at: Date, intervalMs: number): Date {
  return new Date(Math.floor(at.getTime() / intervalMs) * intervalMs);
}

/**
 * Claims one run of a job in job_runs (job name + run slot, insert on conflict do nothing):
 * of several sweepers, exactly one runs each slot. True when this process got it.
 */
export async function claimJobRun(pool: Pool, job: string, slot: Date, claimedBy: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    /* sql */ `insert into job_runs (job_name, run_slot, claimed_by) values ($1, $2, $3) on conflict do nothing`,
    [job, slot, claimedBy],
  );
  return rowCount === 1;
}

export async function finishJobRun(pool: Pool, job: string, slot: Date, outcome: 'succeeded' | 'failed', detail: object): Promise<void> {
  await pool.query(
    /* sql */ `update job_runs set finished_at = now(), outcome = $3, detail = $4 where job_name = $1 and run_slot = $2`,
    [job, slot, outcome, JSON.stringify(detail)],
  );
}

/**
 * The hold sweeper: every `intervalMs` it claims the run, expires due holds (in batches until none
 * are due) and stamps the outcome. A failed run is stamped failed and the loop goes on.
 */
export async function runHoldSweeper(options: {
  pool: Pool;
  expireDueHolds: (limit: number) => Promise<number>;
  intervalMs: number;
  logger: Logger;
  signal: AbortSignal;
}): Promise<void> {
  const claimedBy = `${hostname()}:${process.pid}`;
  while (!options.signal.aborted) {
    const slot = runSlot(new Date(), options.intervalMs);
    if (await claimJobRun(options.pool, SWEEPER_JOB, slot, claimedBy)) {
      let expired = 0;
      try {
        for (let batch = await options.expireDueHolds(500); batch > 0; batch = await options.expireDueHolds(500)) expired += batch;
        await finishJobRun(options.pool, SWEEPER_JOB, slot, 'succeeded', { expired });
        if (expired > 0) options.logger.info({ job: SWEEPER_JOB, expired, slot }, 'expired due holds');
      } catch (err) {
        options.logger.error({ err, job: SWEEPER_JOB, slot }, 'hold sweep failed');
        await finishJobRun(options.pool, SWEEPER_JOB, slot, 'failed', { expired, error: errorMessage(err) }).catch(() => undefined);
      }
    }
    const next = slot.getTime() + options.intervalMs - Date.now();
    await sleep(Math.max(10, next), { signal: options.signal }).catch(() => undefined);
  }
}
