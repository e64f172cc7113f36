/**
 * The hold sweeper as its own program: `npm run hold-sweeper` (settings from the environment,
 * `--help`, `--env-example`). Runs until SIGINT/SIGTERM: the first finishes the run in progress
 * and releases everything in reverse order; a second one exits at once.
 */
import { startProgram } from '../lib/cli.js';
import type { Logger } from '../lib/logger.js';
import { createMetricsRegistry, serveHttp } from '../lib/metrics.js';
import { createPool } from '../lib/postgres.js';
import { createSchemaRegistry } from '../lib/schema-registry.js';
import { configForLog } from '../lib/settings.js';
import { Releasers, onShutdownSignals } from '../lib/shutdown.js';
import { createEventWriter } from './event-writer.js';
import { expireDueHolds } from './expiry.js';
import { runHoldSweeper } from './sweeper.js';
import { registerSweeperMetrics } from './sweeper-metrics.js';
import { holdSweeperSettings, type HoldSweeperConfig } from './sweeper-settings.js';

const USAGE = `Usage: npm run hold-sweeper [-- --help | --env-example]

Expires due holds on the seat database every HOLD_SWEEPER_INTERVAL_MS, claiming each run slot
in job_runs so that of several sweepers exactly one runs each slot. The job watchdog
(npm run job-watchdog) alerts when runs stop or fail. Metrics on /metrics.`;

async function sweepUntilSignalled(config: HoldSweeperConfig, logger: Logger, releasers: Releasers): Promise<void> {
  const registry = createMetricsRegistry('hold-sweeper');
  const onRun = registerSweeperMetrics(registry, config.intervalMs);
  const events = await createEventWriter(createSchemaRegistry(config.registryUrl), {
    subjectPrefix: config.subjectPrefix,
    dataSchemaBaseUrl: config.registryPublicUrl || config.registryUrl,
  });
  const pool = createPool({ connectionString: config.databaseUrl, applicationName: 'hold-sweeper', logger, max: 2 });
  releasers.add('seat database pool', () => pool.end());
  const http = await serveHttp({ registry, port: config.metricsPort, host: config.metricsHost });
  releasers.add('metrics server', () => http.close());
  const stopping = new AbortController();
  const sweeping = runHoldSweeper({
    pool,
    expireDueHolds: (limit) => expireDueHolds(pool, events, { limit, logger }),
    intervalMs: config.intervalMs,
    batchSize: config.batchSize,
    logger,
    signal: stopping.signal,
    onRun,
  });
  onShutdownSignals({ logger, graceful: async () => stopping.abort() });
  logger.info(
    { config: configForLog(holdSweeperSettings, config), metrics: `${http.url}/metrics` },
    'hold sweeper running',
  );
  await sweeping;
}

startProgram({
  settings: holdSweeperSettings,
  usage: USAGE,
  main: async (config, _args, logger) => {
    const releasers = new Releasers(logger);
    try {
      await sweepUntilSignalled(config, logger, releasers);
      return 0;
    } finally {
      await releasers.releaseAll();
      logger.info('hold sweeper stopped');
    }
  },
});
