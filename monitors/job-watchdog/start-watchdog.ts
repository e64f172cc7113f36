/**
 * Builds a running job watchdog from its configuration: the database pool, the alert sinks with
 * their delivery queues, the metrics server and the poll loop. `stop()` releases all of it in
 * reverse order of setup.
 */
import type { Logger } from '../../lib/logger.js';
import { createMetricsRegistry, serveHttp, type HttpEndpoint } from '../../lib/metrics.js';
import { createPool } from '../../lib/postgres.js';
import { Releasers } from '../../lib/shutdown.js';
import { createAlertSinks } from '../alerting/alert-destinations.js';
import { AlertPublisher } from '../alerting/alert-publisher.js';
import { AlertTracker } from '../alerting/alert-tracker.js';
import { databaseLabel } from '../slot-monitor/slot-readings.js';
import { JOB_ALERTS, type JobAlertName } from './alert-catalog.js';
import { JobWatchdog, WATCHDOG_HEARTBEAT } from './job-watchdog.js';
import { JobWatchdogMetrics } from './metrics.js';
import { PROGRAM, alertTtlMs, type JobWatchdogConfig } from './settings.js';

export interface RunningJobWatchdog {
  watchdog: JobWatchdog;
  /** The /metrics, /healthz and /readyz server. */
  http: HttpEndpoint;
  stop(): Promise<void>;
}

export async function startJobWatchdog(config: JobWatchdogConfig, logger: Logger): Promise<RunningJobWatchdog> {
  const releasers = new Releasers(logger);
  try {
    const registry = createMetricsRegistry(PROGRAM);
    const metrics = new JobWatchdogMetrics(registry, config);
    const pool = createPool({
      connectionString: config.databaseUrl,
      applicationName: PROGRAM,
      logger,
      max: 1,
      connectionTimeoutMs: Math.min(5_000, Math.max(1_000, config.pollIntervalMs)),
    });
    releasers.add('seat database pool', () => pool.end());
    const sinks = createAlertSinks({ source: PROGRAM, alertTtlMs: alertTtlMs(config), ...config }, logger, releasers, (sink, outcome) => metrics.recordDelivery(sink, outcome));
    const label = databaseLabel(config.databaseUrl);
    const tracker = new AlertTracker<JobAlertName>(JOB_ALERTS, { service: PROGRAM, database: label });
    const publisher = new AlertPublisher({ tracker, sinks, resendIntervalMs: config.alertmanagerResendMs, heartbeat: WATCHDOG_HEARTBEAT });
    const watchdog = new JobWatchdog({ db: pool, databaseLabel: label, rules: config, pollIntervalMs: config.pollIntervalMs, tracker, publisher, metrics, logger });
    const http = await serveHttp({ registry, port: config.metricsPort, host: config.metricsHost, ready: () => watchdog.lastPollOk });
    releasers.add('metrics server', () => http.close());
    watchdog.start();
    releasers.add('poll loop', () => watchdog.stop());
    return { watchdog, http, stop: async () => void (await releasers.releaseAll()) };
  } catch (err) {
    await releasers.releaseAll();
    throw err;
  }
}
