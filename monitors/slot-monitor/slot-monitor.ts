/**
 * Builds a running slot monitor from its configuration: the database pool, the alert sinks with
 * their delivery queues, the metrics server and the poll loop. `stop()` releases all of it in
 * reverse order of setup.
 */
import type { Logger } from '../../lib/logger.js';
import { createMetricsRegistry, serveHttp, type HttpEndpoint } from '../../lib/metrics.js';
import { createPool } from '../../lib/postgres.js';
import { Releasers } from '../../lib/shutdown.js';
import { createAlertSinks } from '../alerting/alert-destinations.js';
import { KeepSizeGuard } from './keep-size.js';
import { SlotMonitorMetrics } from './metrics.js';
import { SlotMonitor } from './monitor.js';
import { PROGRAM, type SlotMonitorConfig } from './settings.js';
import { databaseLabel } from './slot-readings.js';

export interface RunningSlotMonitor {
  monitor: SlotMonitor;
  /** The /metrics, /healthz and /readyz server. */
  http: HttpEndpoint;
  stop(): Promise<void>;
}

/** An alert not re-sent within this time expires at Alertmanager (Prometheus uses 4 × max(resend delay, evaluation interval)). */
export function alertTtlMs(config: SlotMonitorConfig): number {
  return 4 * Math.max(config.alertmanagerResendMs, config.pollIntervalMs);
}

export async function startSlotMonitor(config: SlotMonitorConfig, logger: Logger): Promise<RunningSlotMonitor> {
  const releasers = new Releasers(logger);
  try {
    const registry = createMetricsRegistry(PROGRAM);
    const metrics = new SlotMonitorMetrics(registry, config.maxSlotWalKeepSize);
    const pool = createPool({
      connectionString: config.databaseUrl,
      applicationName: PROGRAM,
      logger,
      max: 1,
      connectionTimeoutMs: Math.min(5_000, Math.max(1_000, config.pollIntervalMs)),
    });
    releasers.add('seat database pool', () => pool.end());
    const sinks = createAlertSinks(
      { source: PROGRAM, alertTtlMs: alertTtlMs(config), ...config },
      logger,
      releasers,
      (sink, outcome) => metrics.recordDelivery(sink, outcome),
    );
    const keepSize = new KeepSizeGuard({
      targetBytes: config.maxSlotWalKeepSize,
      mode: config.keepSizeMode,
      noticeDurationMs: config.noticeDurationMs,
      logger,
      onCorrected: () => metrics.recordCorrection(),
    });
    const monitor = new SlotMonitor({
      db: pool,
      databaseLabel: databaseLabel(config.databaseUrl),
      rules: config,
      outbox: { schema: config.outboxSchema, table: config.outboxTable },
      growthWindowPolls: config.growthWindowPolls,
      pollIntervalMs: config.pollIntervalMs,
      resendIntervalMs: config.alertmanagerResendMs,
      keepSize,
      sinks,
      metrics,
      logger,
    });
    const http = await serveHttp({ registry, port: config.metricsPort, host: config.metricsHost, ready: () => monitor.lastPollOk });
    releasers.add('metrics server', () => http.close());
    monitor.start();
    releasers.add('poll loop', () => monitor.stop());
    return { monitor, http, stop: async () => void (await releasers.releaseAll()) };
  } catch (err) {
    await releasers.releaseAll();
    throw err;
  }
}
