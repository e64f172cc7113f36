/**
 * `npm run sales-ledger:recompute [-- --help]`: prints the differences between the ledger and the
 * seat database; exit code 0 when they match, 1 when they differ, 2 on bad settings.
 */
import { startProgram } from '../../lib/cli.js';
import { createPool } from '../../lib/postgres.js';
import { recomputeSettings } from './recompute-settings.js';
import { compareTotals, describeDifferences, totalsFromLedger, totalsFromSeatDatabase } from './recompute.js';

const USAGE = `Usage: npm run sales-ledger:recompute

Recomputes the sales totals per show from the seat database (orders, order_seats) and compares
them with the sales ledger consumer's totals. Exit 0 when they match, 1 when they differ.`;

startProgram({
  settings: recomputeSettings,
  usage: USAGE,
  main: async (config, _args, logger) => {
    const consumerPool = createPool({
      connectionString: config.consumerDatabaseUrl,
      applicationName: 'sales-ledger-recompute',
      logger,
      max: 1,
    });
    const seatPool = createPool({
      connectionString: config.seatDatabaseUrl,
      applicationName: 'sales-ledger-recompute',
      logger,
      max: 1,
    });
    try {
      const [ledger, seats] = await Promise.all([totalsFromLedger(consumerPool), totalsFromSeatDatabase(seatPool)]);
      const differences = compareTotals(ledger, seats);
      process.stdout.write(
        describeDifferences(differences, new Set([...ledger, ...seats].map((r) => `${r.show_id}/${r.currency}`)).size),
      );
      return differences.length === 0 ? 0 : 1;
    } finally {
      await Promise.all([consumerPool.end(), seatPool.end()]);
    }
  },
});
