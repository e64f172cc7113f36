/**
 * `npm run sales-ledger:recompute [-- --help]`: prints the differences between the ledger and the
 * seat database; exit code 0 when they match, 1 when they differ, 2 on bad settings.
 */
import { createLogger } from '../../lib/logger.js';
import { createPool } from '../../lib/postgres.js';
import { settingsOrExit } from '../runtime/program.js';
import { recomputeSettings } from './recompute-settings.js';
import { compareTotals, describeDifferences, totalsFromLedger, totalsFromSeatDatabase } from './recompute.js';


const config = settingsOrExit(recomputeSettings);
const logger = createLogger({ name: recomputeSettings.program, level: 'warn' });
const consumerPool = createPool({ connectionString: config.consumerDatabaseUrl, applicationName: 'sales-ledger-recompute', logger, max: 1 });
const seatPool = createPool({ connectionString: config.seatDatabaseUrl, applicationName: 'sales-ledger-recompute', logger, max: 1 });
try {
  const [ledger, seats] = await Promise.all([totalsFromLedger(consumerPool), totalsFromSeatDatabase(seatPool)]);
  const differences = compareTotals(ledger, seats);
  process.stdout.write(describeDifferences(differences, new Set([...ledger, ...seats].map((r) => `${r.show_id}/${r.currency}`)).size));
  process.exitCode = differences.length === 0 ? 0 : 1;
} catch (err) {
  logger.error({ err }, 'recompute failed');
  process.exitCode = 3;
} finally {
  await Promise.all([consumerPool.end(), seatPool.end()]);
}
