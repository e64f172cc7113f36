/**
 * The durable record of a clean reconciliation, which the outbox purge requires before it deletes
 * a row (seat-service/retention.ts): the window, and the seat database's snapshot xmin read before
 * the outbox was, so that every row whose transaction id is below it was visible to the run.
 */
import { errorMessage } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import { createPool, type Pool } from '../../lib/postgres.js';
import { CONSUMER_KINDS, type ReconciledConsumer } from './consumer-kinds.js';
import type { Reconciliation } from './reconcile.js';

/**
 * Read before the run reads the outbox: every transaction below it had ended by then. Undefined
 * (with a warning) when the seat database will not say: the run then records no coverage, and
 * reconciles all the same.
 */
export async function readSnapshotXmin(seatPool: Pool, logger: Logger): Promise<bigint | undefined> {
  try {
    const { rows } = await seatPool.query<{ xmin: string }>(
      /* sql */ `select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`,
    );
    return rows[0] === undefined ? undefined : BigInt(rows[0].xmin);
  } catch (err) {
    logger.warn(
      { err: errorMessage(err) },
      "could not read the seat database's snapshot xmin: this run records no coverage for the outbox purge",
    );
    return undefined;
  }
}

/** Why this run's result says nothing for the purge, or undefined when it covers its window. */
export function notCovering(result: Reconciliation, consumers: readonly ReconciledConsumer[]): string | undefined {
  if (result.gaps) return 'it found gaps';
  if (result.unsent)
    return 'it found effects claimed and never stamped sent (their outbox rows may be needed to send them)';
  if (result.to.getTime() <= result.from.getTime()) return 'its window is empty';
  const left = CONSUMER_KINDS.filter((kind) => !consumers.some((c) => c.kind === kind));
  if (left.length > 0)
    return `RECONCILE_CONSUMERS leaves out ${left.join(', ')}, and the purge counts only runs that checked every consumer`;
  return undefined;
}

export interface CoverageTarget {
  url: string;
  logger: Logger;
}

/**
 * Records a clean run in outbox_reconciled. A failure to record loses nothing (the purge only
 * waits for a later run), so it is a warning with the fix, not a failed reconciliation.
 */
export async function recordCoverage(
  target: CoverageTarget,
  result: Reconciliation,
  snapshotXmin: bigint,
): Promise<boolean> {
  const pool = createPool({
    connectionString: target.url,
    applicationName: 'reconcile-coverage',
    logger: target.logger,
    max: 1,
  });
  try {
    await pool.query(
      /* sql */ `insert into outbox_reconciled (covered_from, covered_to, snapshot_xmin, consumers) values ($1, $2, $3::bigint, $4::text[])`,
      [result.from, result.to, snapshotXmin.toString(), result.consumers.map((c) => c.consumer.name)],
    );
    target.logger.info(
      { from: result.from.toISOString(), to: result.to.toISOString() },
      'coverage recorded for the outbox purge',
    );
    return true;
  } catch (err) {
    target.logger.warn(
      { err: errorMessage(err) },
      "coverage not recorded, so the outbox purge will not delete these rows yet: point RECONCILE_COVERAGE_DB_URL at the seat database's primary as a role with INSERT on outbox_reconciled (stagefront_debezium has it)",
    );
    return false;
  } finally {
    await pool.end();
  }
}
