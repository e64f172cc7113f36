/**
 * `npm run reconcile [-- --from <ISO time>] [--to <ISO time>]`: published vs handled per
 * consumer. Exit 0 clean, 3 with gaps or unsent claims, 1 when it cannot check, 2 on bad configuration.
 */
import { startProgram } from '../../lib/cli.js';
import type { Logger } from '../../lib/logger.js';
import { createPool } from '../../lib/postgres.js';
import type { Config } from '../../lib/settings.js';
import { notCovering, readSnapshotXmin, recordCoverage } from './coverage.js';
import { reconcile, seatDatabaseNow } from './reconcile.js';
import { describeReconciliation, reconciliationSummary } from './report.js';
import { reconcileSettings } from './settings.js';
import { readArguments, readWindow } from './time-flags.js';

const GAPS_EXIT_CODE = 3;

const USAGE = `Usage: npm run reconcile [-- --from <ISO time>] [--to <ISO time>]

Compares the outbox rows of the seat database (published) with every consumer's inbox
(handled), per consumer and only for the event types that consumer handles. The window is
--from (default: now - RECONCILE_WINDOW_MS) to --to (default: now - RECONCILE_GRACE_MS), on
the seat database's clock. Prints counts and the missing ce_ids. An email claimed but never
stamped sent is not handled: it is counted as claimed, and as unsent (with its ce_id) once its
claim is older than RECONCILE_GRACE_MS. A clean run (no gaps, nothing unsent) that checked every
consumer records its window in outbox_reconciled (RECONCILE_COVERAGE_DB_URL): the outbox purge
deletes only rows such a run covered.

Exit codes: 0 clean, ${GAPS_EXIT_CODE} gaps or unsent claims found, 1 could not check, 2 bad configuration.`;

async function main(
  config: Config<typeof reconcileSettings.settings>,
  args: string[],
  logger: Logger,
): Promise<number> {
  const window = readArguments('reconcile', () => readWindow(args));
  if (window === undefined) return 2;
  const seatPool = createPool({ connectionString: config.seatDbUrl, applicationName: 'reconcile', logger, max: 1 });
  const consumerPool = createPool({
    connectionString: config.consumerDbUrl,
    applicationName: 'reconcile',
    logger,
    max: 1,
  });
  try {
    const now = await seatDatabaseNow(seatPool);
    const snapshotXmin = await readSnapshotXmin(seatPool, logger);
    const result = await reconcile({
      seatPool,
      consumerPool,
      consumers: config.consumers,
      from: window.from ?? new Date(now.getTime() - config.windowMs),
      to: window.to ?? new Date(now.getTime() - config.graceMs),
      pageSize: config.pageSize,
      missingShown: config.missingShown,
      claimGraceMs: config.graceMs,
    });
    const found = [result.gaps ? 'gaps' : '', result.unsent ? 'unsent claims' : ''].filter((f) => f !== '');
    logger.info(
      reconciliationSummary(result),
      found.length === 0 ? 'reconciliation clean' : `reconciliation found ${found.join(' and ')}`,
    );
    process.stdout.write(describeReconciliation(result));
    const unusable = notCovering(result, config.consumers);
    if (unusable === undefined && snapshotXmin !== undefined)
      await recordCoverage({ url: config.coverageDbUrl || config.seatDbUrl, logger }, result, snapshotXmin);
    else logger.info({ why: unusable }, 'no coverage recorded for the outbox purge');
    return result.gaps || result.unsent ? GAPS_EXIT_CODE : 0;
  } finally {
    await Promise.allSettled([seatPool.end(), consumerPool.end()]);
  }
}

startProgram({ settings: reconcileSettings, usage: USAGE, main });
