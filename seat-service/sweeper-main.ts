/**
 * The hold sweeper as its own program: `npm run hold-sweeper` (settings from the environment,
 * `--help`, `--env-example`), in the frame every long-running program shares
 * (lib/long-running-program.ts). Runs until SIGINT/SIGTERM: the first finishes the run in progress
 * and releases everything in reverse order; a second one exits at once. /healthz says whether the
 * sweep loop still moves, /readyz whether its last run reached the database (sweeper-probes.ts).
 */
import {
  type ProgramParts,
  type StartedProgram,
  serveProgramEndpoint,
  startLongRunningProgram,
} from '../lib/long-running-program.js';
import { createMetricsRegistry } from '../lib/metrics.js';
import { createPool } from '../lib/postgres.js';
import { createSchemaRegistry } from '../lib/schema-registry.js';
import { createEventWriter } from './event-writer.js';
import { expireDueHolds } from './expiry.js';
import { runHoldSweeper } from './sweeper.js';
import { registerSweeperMetrics } from './sweeper-metrics.js';
import { SweeperProbes } from './sweeper-probes.js';
import { holdSweeperSettings, type HoldSweeperConfig } from './sweeper-settings.js';

const USAGE = `Usage: npm run hold-sweeper [-- --help | --env-example]

Expires due holds on the seat database every HOLD_SWEEPER_INTERVAL_MS, claiming each run slot
in job_runs so that of several sweepers exactly one runs each slot. The job watchdog
(npm run job-watchdog) alerts when runs stop or fail. Metrics on /metrics; /healthz fails when the
sweep loop is stuck, /readyz when its last run could not reach the database or failed.`;

async function startSweeper(config: HoldSweeperConfig, { logger, releasers }: ProgramParts): Promise<StartedProgram> {
  const registry = createMetricsRegistry('hold-sweeper');
  const recordRunMetrics = registerSweeperMetrics(registry, config.intervalMs);
  const events = await createEventWriter(createSchemaRegistry(config.registryUrl), {
    subjectPrefix: config.subjectPrefix,
    dataSchemaBaseUrl: config.registryPublicUrl || config.registryUrl,
  });
  const pool = createPool({ connectionString: config.databaseUrl, applicationName: 'hold-sweeper', logger, max: 2 });
  releasers.add('seat database pool', () => pool.end());
  const probes = new SweeperProbes(config.intervalMs);
  const http = await serveProgramEndpoint(releasers, {
    registry,
    port: config.metricsPort,
    host: config.metricsHost,
    health: probes.health,
    ready: probes.ready,
  });
  const stopping = new AbortController();
  const sweeping = runHoldSweeper({
    pool,
    expireDueHolds: (limit) => expireDueHolds(pool, events, { limit, logger }),
    intervalMs: config.intervalMs,
    batchSize: config.batchSize,
    logger,
    signal: stopping.signal,
    onRun: (run) => {
      recordRunMetrics(run);
      probes.recordRun(run);
    },
  }).finally(() => probes.recordEnd());
  releasers.add('sweep loop', async () => {
    stopping.abort();
    await sweeping;
  });
  return { http, finished: sweeping };
}

startLongRunningProgram({
  settings: holdSweeperSettings,
  usage: USAGE,
  logLevel: (config) => config.logLevel,
  lines: { starting: 'hold sweeper starting', running: 'hold sweeper running', stopped: 'hold sweeper stopped' },
  scrapeJob: 'hold-sweeper',
  start: startSweeper,
});
